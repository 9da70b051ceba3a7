package files

// guard is a protected or hidden path with the forms it takes below the
// root: as configured, and with the symbolic links inside the workspace
// resolved (".vscode" may be a link to "config/vscode"; both are guarded).
type guard struct {
	name  string     // as configured, for hints
	forms [][]string // components below the root
}

// guards are the protected and hidden paths as they stand when an
// operation starts.
type guards struct {
	protected []guard
	hidden    []guard
	// rule is the sandbox's protected-path rule at any depth; nil when
	// only the configured paths count.
	rule func([]string) (string, bool)
	// hiddenIDs identify the hidden files, wherever they are, so that a
	// hard link to one inside the workspace is refused too.
	hiddenIDs []fileID
}

// fileID identifies a file on the host independently of its names.
type fileID struct{ dev, ino uint64 }

// changes reports which protected path a change at p would touch: one
// holding p, or one below p (deleting, replacing or moving ".git" takes
// ".git/hooks" with it).
func (g *guards) changes(p []string) (string, bool) {
	if name, ok := g.byRule(p); ok {
		return name, true
	}
	return match(g.protected, p, true)
}

func (g *guards) byRule(p []string) (string, bool) {
	if g.rule == nil || len(p) == 0 {
		return "", false
	}
	return g.rule(p)
}

// creates reports which protected path holds p; creating a directory that
// will hold a protected path changes nothing protected.
func (g *guards) creates(p []string) (string, bool) {
	if name, ok := g.byRule(p); ok {
		return name, true
	}
	return match(g.protected, p, false)
}

// hides reports which hidden path holds p, or with subtree, lies below p
// (listing is fine, but copying, moving or deleting a directory would
// carry the secret along).
func (g *guards) hides(p []string, subtree bool) (string, bool) {
	return match(g.hidden, p, subtree)
}

func match(gs []guard, p []string, subtree bool) (string, bool) {
	for _, g := range gs {
		for _, form := range g.forms {
			if within(p, form) || subtree && within(form, p) {
				return g.name, true
			}
		}
	}
	return "", false
}

// hiddenFile reports whether id is one of the hidden files.
func (g *guards) hiddenFile(id fileID) bool {
	for _, h := range g.hiddenIDs {
		if h == id {
			return true
		}
	}
	return false
}

// hidesName reports whether name in directory dir is hidden.
func (g *guards) hidesName(dir []string, name string) bool {
	_, ok := g.hides(append(dir[:len(dir):len(dir)], name), false)
	return ok
}

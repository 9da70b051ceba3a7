package files

// ownChange refuses an operation at path (the target's canonical path)
// that would change one of the caller's own paths: one holding path, or
// with subtree one below it (deleting, moving or replacing a directory
// takes what it holds along). The own paths are resolved through the
// workspace's links as they stand now, so a link made since the last
// operation leads to them too.
func (f *FS) ownChange(op, p string, path []string, subtree bool) error {
	if len(f.own) == 0 {
		return nil
	}
	for _, g := range f.throughLinks(f.own) {
		for _, form := range g.forms {
			switch {
			case within(path, form):
				return refusal(op, p, KindProtected, "%s is forgebox's own configuration or state (%s): the agent may not change it", join(path), g.name)
			case subtree && within(form, path):
				return refusal(op, p, KindProtected, "%s holds forgebox's own configuration or state (%s), which the agent may not change", join(path), g.name)
			}
		}
	}
	return nil
}

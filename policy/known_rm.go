package policy

import (
	"fmt"
	"path"
	"strings"
)

// removal judges removing one target. strong is -r or -f: a recursive or
// forced removal does not stop at the first directory or write-protected
// file.
func (j *judge) removal(a Arg, recursive, force bool, how string) finding {
	v := a.Value
	strong := recursive || force
	if !a.Static {
		if rest, ok := strings.CutPrefix(unquoteVar(v), "$HOME"); ok && (rest == "" || rest == "/" || rest == "/*" || rest == "/.*") {
			return finding{Forbidden, 10, fmt.Sprintf("%s removes %s: the home directory", how, v)}
		}
		if a.IfEmpty == "" {
			return finding{Caution, 5, fmt.Sprintf("%s removes %s, a path computed at run time", how, v)}
		}
		// "$DIR/" is "/" when DIR is unset: judge the word as it would be then.
		e := Arg{Value: a.IfEmpty, Static: true, IfEmpty: a.IfEmpty, Glob: a.Glob || strings.ContainsAny(a.IfEmpty, "*?[")}
		p, _ := j.where(e)
		switch p {
		case PlaceRoot, PlaceSystemRoot, PlaceHomeRoot, PlaceDisk, PlaceWorkspaceRoot:
			return finding{Dangerous, 8, fmt.Sprintf("%s removes %s, which is %s (%s) when its variables are empty", how, v, quote(e), phrase(p))}
		case PlaceGitDir:
			if path.Base(j.ctx.Abs(e.Value)) == ".git" {
				return finding{Dangerous, 8, fmt.Sprintf("%s removes %s, which is the repository's .git when its variables are empty", how, v)}
			}
		case PlaceOutside, PlaceHome, PlaceSystem, PlaceStartup, PlaceGitHooks, PlaceDevice:
			if strong {
				return finding{Dangerous, 7, fmt.Sprintf("%s removes %s, a path computed at run time in %s%s", how, v, phrase(p), privateTmp(v))}
			}
			return finding{Dangerous, 6, fmt.Sprintf("%s removes %s, a path computed at run time in %s%s", how, v, phrase(p), privateTmp(v))}
		}
		return finding{Caution, 5, fmt.Sprintf("%s removes %s, a path computed at run time%s", how, v, privateTmp(v))}
	}
	p, all := j.where(a)
	if (p == PlaceTemp || p == PlaceTempRoot) && j.ctx.Sandbox.PrivateTmp && strings.HasPrefix(privateTmp(v), " (inside forgebox's sandbox, /tmp ") {
		return finding{SafeWrite, 2, fmt.Sprintf("%s removes %s in the run's own private /tmp, which no other program sees", how, v)}
	}
	switch p {
	case PlaceRoot, PlaceSystemRoot, PlaceHomeRoot:
		if strong || a.Glob {
			return finding{Forbidden, 10, fmt.Sprintf("%s removes %s: %s", how, v, phrase(p))}
		}
		return finding{Dangerous, 8, fmt.Sprintf("%s removes %s: %s", how, v, phrase(p))}
	case PlaceDisk:
		return finding{Forbidden, 10, fmt.Sprintf("%s removes the disk device %s", how, v)}
	}
	switch strings.TrimRight(v, "/") {
	case ".", "..", "*", ".*", "./*", "./.*":
		if strong {
			return finding{Dangerous, 8, fmt.Sprintf("%s removes %s: everything in the current directory", how, v)}
		}
	}
	base := path.Base(v)
	switch p {
	case PlaceWorkspaceRoot:
		if strong && all {
			return finding{Dangerous, 8, fmt.Sprintf("%s removes %s: the whole workspace", how, v)}
		}
		return finding{Caution, 3, fmt.Sprintf("%s removes %s, the workspace itself", how, v)}
	case PlaceGitDir:
		switch {
		case base == ".git" && strong:
			return finding{Dangerous, 8, fmt.Sprintf("%s removes %s: the repository's whole history", how, v)}
		case recursive:
			return finding{Dangerous, 7, fmt.Sprintf("%s removes %s inside the repository's .git", how, v)}
		}
		return finding{Caution, 5, fmt.Sprintf("%s removes %s inside the repository's .git", how, v)}
	case PlaceWorkspace:
		dir := base
		if strings.ContainsAny(dir, "*?[") {
			dir = path.Base(path.Dir(v)) // build/* empties build
		}
		if recursive && !generated(dir) {
			// As git reset --hard and git clean -fdx: work in it that is not
			// committed is gone, and git cannot bring it back.
			return finding{Dangerous, 6, fmt.Sprintf("%s removes the directory %s in the workspace, with any work in it not committed (git cannot restore it)", how, v)}
		}
		return finding{SafeWrite, 2, fmt.Sprintf("%s removes %s in %s", how, v, phrase(p))}
	case PlaceTemp:
		return finding{SafeWrite, 2, fmt.Sprintf("%s removes %s in %s", how, v, phrase(p))}
	case PlaceTempRoot:
		if strong && all {
			return finding{Caution, 5, fmt.Sprintf("%s empties %s, a temporary directory other programs use%s", how, v, privateTmp(v))}
		}
		return finding{SafeWrite, 2, fmt.Sprintf("%s removes %s in the temporary directory", how, v)}
	case PlaceGitHooks:
		return finding{Caution, 4, fmt.Sprintf("%s removes the git hook %s", how, v)}
	case PlaceDevice, PlaceSystem:
		return finding{Dangerous, 7, fmt.Sprintf("%s removes %s, a system file", how, v)}
	}
	if strong {
		return finding{Dangerous, 7, fmt.Sprintf("%s removes %s outside the workspace (%s)", how, v, phrase(p))}
	}
	return finding{Dangerous, 6, fmt.Sprintf("%s removes %s outside the workspace (%s)", how, v, phrase(p))}
}

// unquoteVar drops the quotes and braces of a word as written, so that
// "${HOME}" reads $HOME.
// privateTmp notes, in a reason, that a path lies in the temporary
// directory forgebox's sandbox gives each run for itself ($TMPDIR, /tmp):
// what it removes there, no other program sees. The verdict does not
// count on it (the judge does not know the run is sandboxed).
func privateTmp(v string) string {
	u := unquoteVar(v)
	for _, p := range []string{"$TMPDIR", "/tmp"} {
		if rest, ok := strings.CutPrefix(u, p); ok && (rest == "" || rest[0] == '/') {
			return " (inside forgebox's sandbox, " + p + " is the run's own private temporary directory)"
		}
	}
	return ""
}

func unquoteVar(v string) string {
	if !strings.ContainsAny(v, "\"'{}") {
		return v
	}
	b := make([]byte, 0, len(v))
	for i := 0; i < len(v); i++ {
		if c := v[i]; c != '"' && c != '\'' && c != '{' && c != '}' {
			b = append(b, c)
		}
	}
	return string(b)
}

// judgeRm: rm judges each target, with -r and -f making a removal
// unstoppable; it records the worst.
func judgeRm(j *judge, c *Command) {
	s := scan(c.Rest(), flags{})
	recursive := s.has("-r", "-R") || s.abbrev("recursive", 1)
	force := s.has("-f") || s.abbrev("force", 1)
	if s.abbrev("no-preserve-root", 2) {
		j.add(Forbidden, 10, "rm --no-preserve-root lets rm remove / itself")
	}
	if s.has("-i") || s.abbrev("interactive", 1) {
		j.add(Interactive, 1, "interactive: rm -i asks before each removal")
	}
	how := c.Name
	switch {
	case recursive && force:
		how = "rm -rf"
	case recursive:
		how = "rm -r"
	case force:
		how = "rm -f"
	}
	if len(s.ops) == 0 {
		j.add(ReadOnly, 0, "%s without a file removes nothing", c.Name)
		return
	}
	worst := finding{ReadOnly, -1, ""}
	for _, a := range s.ops {
		if f := j.removal(a, recursive, force, how); worst.worse(f) {
			worst = f
		}
	}
	j.record(worst)
	if j.inWorkspace(s.ops) {
		j.markUndoable()
	}
}

// judgeRmdir: rmdir removes only empty directories, so it is judged a
// notch milder than rm.
func judgeRmdir(j *judge, c *Command) {
	s := scan(c.Rest(), flags{})
	worst := finding{ReadOnly, 0, "rmdir without a directory removes nothing"}
	for _, a := range s.ops {
		var f finding
		p, _ := j.where(a)
		switch p {
		case PlaceWorkspace, PlaceTemp:
			f = finding{SafeWrite, 1, fmt.Sprintf("rmdir removes the empty directory %s", a.Value)}
		case PlaceUnknown:
			f = finding{Caution, 3, fmt.Sprintf("rmdir removes %s, a path computed at run time", a.Value)}
		case PlaceOutside, PlaceHome:
			f = finding{Caution, 4, fmt.Sprintf("rmdir removes %s outside the workspace", a.Value)}
		default:
			f = finding{Caution, 5, fmt.Sprintf("rmdir removes %s (%s)", a.Value, phrase(p))}
		}
		if worst.worse(f) {
			worst = f
		}
	}
	j.record(worst)
}

// generated reports whether a directory's name is one that builds, package
// managers and tools create and can create again (build, node_modules,
// __pycache__, ...): removing it loses no one's work.
func generated(name string) bool {
	switch name {
	case "build", "builds", "dist", "target", "out", "bin", "obj", "_build", "site", "public",
		"node_modules", "bower_components", "jspm_packages", ".pnpm-store", ".yarn",
		".cache", "cache", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis", ".eggs", ".tox", ".nox",
		".venv", "venv", "coverage", ".coverage", "htmlcov", ".nyc_output",
		".next", ".nuxt", ".svelte-kit", ".turbo", ".parcel-cache", ".angular", ".expo", ".vercel", ".output",
		".gradle", ".terraform", "DerivedData", ".dart_tool", ".stack-work", "dist-newstyle", "zig-cache", ".zig-cache", "zig-out",
		"tmp", "temp", ".tmp", "logs":
		return true
	}
	return strings.HasSuffix(name, ".egg-info")
}

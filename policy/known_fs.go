package policy

import (
	"fmt"
	"strings"
)

// fsKnowledge covers the programs that remove, move, copy, overwrite or
// re-permission files, and the ones that format disks.
func fsKnowledge(name string) func(*judge, *Command) {
	switch name {
	case "rm", "unlink":
		return judgeRm
	case "rmdir":
		return judgeRmdir
	case "find":
		return judgeFind
	case "shred", "srm", "wipe":
		return judgeShred
	case "truncate":
		return judgeTruncate
	case "chmod", "chown", "chgrp":
		return judgeChmod
	case "mv":
		return judgeMv
	case "cp", "install", "ln", "tee", "rsync", "scp":
		return judgeCopy
	case "dd":
		return judgeDd
	case "sed", "gsed":
		return judgeSed
	case "mkfs", "mke2fs", "mkswap", "wipefs", "mkdosfs", "mkntfs", "newfs", "blkdiscard", "fdisk", "sfdisk",
		"gdisk", "cfdisk", "sgdisk", "parted", "diskutil":
		return judgeDisk
	}
	if strings.HasPrefix(name, "mkfs.") {
		return judgeDisk
	}
	return nil
}

// finding is one verdict before it is recorded: removal judges each
// target, and the command records the worst.
type finding struct {
	cat    Category
	risk   int
	reason string
	// sandboxed: this low only because of the run's sandbox (a removal
	// in its private /tmp).
	sandboxed bool
	// undoable: all it destroys is the workspace's content (Finding.Undoable).
	undoable bool
}

func (f finding) worse(g finding) bool {
	return g.risk > f.risk || g.risk == f.risk && g.cat > f.cat
}

func (j *judge) record(f finding) {
	if f.reason != "" {
		j.add(f.cat, f.risk, "%s", f.reason)
		last := &j.findings[len(j.findings)-1]
		last.sandboxed, last.Undoable = f.sandboxed, f.undoable
	}
}

// where is the place of a path argument. A glob stands for what is inside
// its directory: only one that matches everything there (*, .*) stands
// for the directory itself, and then all is true.
func (j *judge) where(a Arg) (p Place, all bool) {
	v := a.Value
	if a.Static && j.ctx.Home == "" {
		// Without a home to expand into, ~ is still the home directory.
		switch {
		case v == "~" || v == "~/" || v == "~/*" || v == "~/.*":
			return PlaceHomeRoot, true
		case strings.HasPrefix(v, "~/"):
			return PlaceHome, false
		}
	}
	p = j.place(a)
	if !a.Glob || !a.Static {
		return p, !a.Glob
	}
	seg := v[strings.LastIndexByte(v, '/')+1:]
	if strings.Trim(seg, "*.") == "" && strings.Contains(seg, "*") {
		return p, true
	}
	switch p {
	case PlaceRoot, PlaceSystemRoot:
		return PlaceSystem, false
	case PlaceHomeRoot:
		return PlaceHome, false
	case PlaceWorkspaceRoot:
		return PlaceWorkspace, false
	case PlaceTempRoot:
		return PlaceTemp, false
	}
	return p, false
}

// findArg are the tests and actions of find that take one argument;
// findFilter those of them that narrow what -delete removes.
const (
	findArg = " -name -iname -path -ipath -wholename -iwholename -regex -iregex -regextype -lname -ilname -type -xtype " +
		"-newer -anewer -cnewer -perm -user -group -uid -gid -size -mtime -atime -ctime -mmin -amin -cmin -used -links " +
		"-inum -samefile -maxdepth -mindepth -fstype -context -printf -files0-from "
	findFilter = " -name -iname -path -ipath -wholename -iwholename -regex -iregex -lname -ilname -newer -anewer -cnewer " +
		"-perm -user -group -uid -gid -size -mtime -atime -ctime -mmin -amin -cmin -used -links -inum -samefile "
)

// judgeFind: find reads, unless it deletes (-delete is a recursive rm of
// what matches), runs commands (-exec) or writes files (-fprint).
func judgeFind(j *judge, c *Command) {
	args := c.Rest()
	i := 0
	for i < len(args) && args[i].Static {
		v := args[i].Value
		if v == "-D" || v == "-f" {
			i += 2
			continue
		}
		if v != "-H" && v != "-L" && v != "-P" && !strings.HasPrefix(v, "-O") {
			break
		}
		i++
	}
	var roots []Arg
	for ; i < len(args); i++ {
		v := args[i].Value
		if args[i].Static && (strings.HasPrefix(v, "-") || v == "(" || v == "!" || v == ",") {
			break
		}
		roots = append(roots, args[i])
	}
	if len(roots) == 0 {
		roots = []Arg{staticArg(".")}
	}
	// find evaluates its expression from left to right: an action acts
	// only on what the tests before it let through (find . -delete -name x
	// deletes everything). filtered is whether a test came before on every
	// path to here: an -o or a comma starts a branch that sees everything
	// again, and a parenthesised group filters when each of its branches
	// does (\( -name a -o -name b \) -delete). A negated test filters too.
	filtered, deletes, deletesAll := false, false, false
	type group struct{ outer, all bool } // filtered before the group; every branch so far filtered
	var groups []group
	negated := false
	type run struct {
		action   string
		cmd      []Arg
		filtered bool
	}
	var runs []run
	for ; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "(":
			groups = append(groups, group{filtered, true})
			filtered = false
		case v == ")" && len(groups) > 0:
			g := groups[len(groups)-1]
			groups = groups[:len(groups)-1]
			filtered = g.outer || g.all && filtered
		case v == "-o" || v == "-or" || v == ",":
			if n := len(groups); n > 0 {
				groups[n-1].all = groups[n-1].all && filtered
			}
			filtered = false
		case v == "!" || v == "-not":
			// ! -name keep lets through everything else: the worse reading
			// is that it does not narrow.
			negated = true
			continue
		case v == "-delete":
			deletes = true
			deletesAll = deletesAll || !filtered
		case v == "-exec" || v == "-execdir" || v == "-ok" || v == "-okdir":
			end := i + 1
			for end < len(args) && args[end].Value != ";" && !(args[end].Value == "+" && args[end-1].Value == "{}") {
				end++
			}
			runs = append(runs, run{v, args[i+1 : end], filtered})
			i = end
		case v == "-fprint" || v == "-fprint0" || v == "-fls" || v == "-fprintf":
			if i+1 < len(args) {
				j.write(args[i+1], "find "+v)
			}
			i++
			if v == "-fprintf" {
				i++
			}
		case strings.HasPrefix(v, "-newer") || strings.Contains(findArg, " "+v+" "):
			filtered = filtered || !negated && (strings.HasPrefix(v, "-newer") || strings.Contains(findFilter, " "+v+" "))
			i++
		case v == "-empty":
			filtered = filtered || !negated
		}
		negated = false
	}
	j.add(ReadOnly, 0, "find lists files")
	if deletes {
		worst := finding{cat: ReadOnly, risk: -1, reason: ""}
		for _, r := range roots {
			f := j.removal(r, true, true, "find -delete")
			if p, _ := j.where(r); !deletesAll && f.cat != Forbidden && (p == PlaceWorkspaceRoot || p == PlaceWorkspace || p == PlaceTemp || p == PlaceTempRoot) {
				// With a test like -name, find deletes what matches, not
				// the directory: rm -rf build/*.o, not rm -rf .
				f = finding{cat: SafeWrite, risk: 2, reason: fmt.Sprintf("find -delete removes the matching files under %s", r.Value),
					undoable: p == PlaceWorkspaceRoot || p == PlaceWorkspace, sandboxed: f.sandboxed}
			}
			if worst.worse(f) {
				worst = f
			}
		}
		j.record(worst)
	}
	for _, r := range runs {
		if r.action == "-ok" || r.action == "-okdir" {
			j.add(Interactive, 1, "interactive: find %s asks before each command", r.action)
		}
		if len(r.cmd) == 0 {
			continue
		}
		if len(roots) > 4 {
			roots = roots[:4]
		}
		for _, root := range roots {
			j.argv(findCommand(r.cmd, root, r.filtered), "find "+r.action)
		}
	}
}

// findCommand puts what find passes in place of {}: the root itself
// first, when no test excludes it, and the paths under it. A program
// that reads its arguments as code gets a word computed at run time: a
// file name can be anything.
func findCommand(cmd []Arg, root Arg, filtered bool) []Arg {
	found := root.Value
	if filtered {
		found = strings.TrimRight(root.Value, "/") + "/{}"
		if root.Value == "/" {
			found = "/{}"
		}
	}
	code := len(cmd) > 0 && nestedKnowledge(programName(cmd[0])) != nil
	out := make([]Arg, len(cmd))
	for k, a := range cmd {
		if !strings.Contains(a.Value, "{}") {
			out[k] = a
			continue
		}
		v := strings.ReplaceAll(a.Value, "{}", found)
		switch {
		case code || !root.Static || !a.Static:
			out[k] = Arg{Value: a.Value, IfEmpty: v}
		default:
			out[k] = Arg{Value: v, Static: true, IfEmpty: v, Glob: root.Glob}
		}
	}
	return out
}

// judgeShred: shred overwrites files so that nothing can be recovered.
func judgeShred(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "ns", long: " iterations size random-source remove "})
	worst := finding{cat: Dangerous, risk: 7, reason: fmt.Sprintf("%s overwrites files so they cannot be recovered", c.Name)}
	for _, a := range s.ops {
		if p, _ := j.where(a); p == PlaceDisk {
			worst = finding{cat: Forbidden, risk: 10, reason: fmt.Sprintf("%s overwrites the disk %s", c.Name, a.Value)}
		}
	}
	j.record(worst)
}

// judgeTruncate: truncate destroys a file's contents in place.
func judgeTruncate(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "sro", long: " size reference "})
	worst := finding{cat: ReadOnly, risk: 0, reason: "truncate without a file does nothing"}
	for _, a := range s.ops {
		var f finding
		switch p, _ := j.where(a); p {
		case PlaceWorkspace, PlaceTemp, PlaceUnknown, PlaceDevice:
			f = finding{cat: Caution, risk: 5, reason: fmt.Sprintf("truncate cuts %s to a new size, destroying what was there", a.Value)}
		default:
			f = finding{cat: Dangerous, risk: 7, reason: fmt.Sprintf("truncate cuts %s (%s) to a new size", a.Value, phrase(p))}
		}
		if worst.worse(f) {
			worst = f
		}
	}
	j.record(worst)
	if j.inWorkspace(s.ops) {
		j.undoable() // truncating a workspace file loses only its content
	}
}

// judgeChmod: chmod, chown and chgrp judged by where they reach; -R on a
// root of the system leaves it unusable.
func judgeChmod(j *judge, c *Command) {
	var ops []Arg
	recursive, ref, dd := false, false, false
	args := c.Rest()
	for i := 0; i < len(args); i++ {
		a := args[i]
		v := a.Value
		switch {
		case dd || !a.Static || len(v) < 2 || v[0] != '-':
			ops = append(ops, a)
		case v == "--":
			dd = true
		case v == "--recursive":
			recursive = true
		case v == "--reference" || v == "--from":
			ref = ref || v == "--reference"
			i++
		case strings.HasPrefix(v, "--reference=") || strings.HasPrefix(v, "--from="):
			ref = ref || strings.HasPrefix(v, "--reference=")
		case strings.HasPrefix(v, "--"):
		case strings.Trim(v[1:], "RvcfHLPh") == "":
			recursive = recursive || strings.Contains(v, "R")
		default:
			ops = append(ops, a) // chmod -x file: a mode
		}
	}
	mode := ""
	if !ref && len(ops) > 0 {
		mode, ops = ops[0].Value, ops[1:]
	}
	open := c.Name == "chmod" && (strings.Contains(mode, "777") || strings.Contains(mode, "666") || strings.Contains(mode, "a+rwx") || strings.Contains(mode, "o+w") || strings.Contains(mode, "a+w"))
	worst := finding{cat: ReadOnly, risk: 0, reason: fmt.Sprintf("%s without a file changes nothing", c.Name)}
	for _, a := range ops {
		f := j.permission(c.Name, a, recursive)
		if open && recursive && f.cat != Forbidden {
			f.risk++
			f.reason += ", and opens them to every user"
		}
		if worst.worse(f) {
			worst = f
		}
	}
	if c.Name == "chmod" && (strings.Contains(mode, "s") || len(mode) == 4 && mode[0] >= '2' && mode[0] <= '7') {
		if f := (finding{cat: Caution, risk: 5, reason: "chmod sets the setuid or setgid bit"}); worst.worse(f) {
			worst = f
		}
	}
	j.record(worst)
}

func (j *judge) permission(name string, a Arg, recursive bool) finding {
	p, all := j.where(a)
	how := name
	if recursive {
		how += " -R"
	}
	switch p {
	case PlaceRoot, PlaceSystemRoot, PlaceHomeRoot:
		if recursive && all {
			return finding{cat: Forbidden, risk: 9, reason: fmt.Sprintf("%s changes every file under %s (%s): the system or the account stops working", how, a.Value, phrase(p))}
		}
		if p == PlaceHomeRoot {
			return finding{cat: Caution, risk: 4, reason: fmt.Sprintf("%s changes the home directory", how)}
		}
		return finding{cat: Dangerous, risk: 7, reason: fmt.Sprintf("%s changes %s, a system directory", how, a.Value)}
	case PlaceSystem, PlaceDisk, PlaceDevice:
		return finding{cat: Dangerous, risk: 7, reason: fmt.Sprintf("%s changes %s, a system file", how, a.Value)}
	case PlaceGitHooks:
		return finding{cat: Caution, risk: 5, reason: fmt.Sprintf("%s changes the git hook %s, code git runs by itself", how, a.Value)}
	case PlaceWorkspace, PlaceWorkspaceRoot, PlaceGitDir, PlaceTemp, PlaceTempRoot:
		return finding{cat: SafeWrite, risk: 2, reason: fmt.Sprintf("%s changes %s in %s", how, a.Value, phrase(p))}
	}
	return finding{cat: Caution, risk: 4, reason: fmt.Sprintf("%s changes %s (%s)", how, a.Value, phrase(p))}
}

// judgeMv: moving a file removes it from where it was, so mv is judged by
// both ends.
func judgeMv(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "tS", long: " target-directory suffix backup "})
	ops := s.ops
	dest, ok := s.val("-t", "--target-directory")
	var to Arg
	switch {
	case ok:
		to = staticArg(dest)
	case len(ops) >= 2:
		to, ops = ops[len(ops)-1], ops[:len(ops)-1]
	default:
		j.add(Caution, 3, "mv without a destination")
		return
	}
	worst := finding{cat: SafeWrite, risk: 2, reason: "mv moves files within the workspace"}
	consider := func(f finding) {
		if worst.worse(f) {
			worst = f
		}
	}
	for _, a := range ops {
		switch p, _ := j.where(a); p {
		case PlaceWorkspace, PlaceTemp:
		case PlaceOutside, PlaceHome, PlaceUnknown, PlaceTempRoot:
			consider(finding{cat: Caution, risk: 4, reason: fmt.Sprintf("mv moves %s from %s", a.Value, phrase(p))})
		default:
			consider(finding{cat: Dangerous, risk: 7, reason: fmt.Sprintf("mv moves %s away (%s)", a.Value, phrase(p))})
		}
	}
	p, _ := j.where(to)
	switch p {
	case PlaceWorkspace, PlaceWorkspaceRoot, PlaceTemp, PlaceTempRoot:
	case PlaceOutside, PlaceHome, PlaceHomeRoot, PlaceUnknown:
		consider(finding{cat: Caution, risk: 4, reason: fmt.Sprintf("mv moves files to %s (%s)", to.Value, phrase(p))})
	default:
		consider(finding{cat: Dangerous, risk: 7, reason: fmt.Sprintf("mv replaces or fills %s (%s)", to.Value, phrase(p))})
	}
	j.record(worst)
}

// judgeCopy: cp, install, ln, tee, rsync and scp are judged by what they
// write.
func judgeCopy(j *judge, c *Command) {
	switch c.Name {
	case "tee":
		s := scan(c.Rest(), flags{long: " output-error "})
		j.add(ReadOnly, 0, "tee copies its input to its output")
		for _, a := range s.ops {
			j.write(a, "tee")
		}
		return
	case "rsync":
		judgeRsync(j, c)
		return
	case "scp":
		judgeScp(j, c)
		return
	}
	s := scan(c.Rest(), flags{short: "tSgmoZ", long: " target-directory suffix backup group mode owner context sparse reflink preserve no-preserve "})
	j.add(SafeWrite, 1, "%s copies or links files", c.Name)
	if d, ok := s.val("-t", "--target-directory"); ok {
		j.write(staticArg(d), c.Name)
		return
	}
	switch {
	case c.Name == "install" && s.has("-d", "--directory"):
		for _, a := range s.ops {
			j.write(a, "install -d")
		}
	case len(s.ops) >= 2:
		j.write(s.ops[len(s.ops)-1], c.Name)
	case c.Name == "ln" && len(s.ops) == 1:
		j.write(staticArg("."), "ln")
	}
}

// phrase names a place for a reason a person reads.
func phrase(p Place) string {
	switch p {
	case PlaceRoot:
		return "the root of the file system"
	case PlaceHomeRoot:
		return "the home directory"
	case PlaceHome:
		return "under the home directory"
	case PlaceSystemRoot:
		return "a top-level system directory"
	case PlaceSystem:
		return "a system directory"
	case PlaceWorkspace:
		return "the workspace"
	case PlaceWorkspaceRoot:
		return "the workspace itself"
	case PlaceTemp, PlaceTempRoot:
		return "a temporary directory"
	case PlaceStartup:
		return "a startup file"
	case PlaceGitDir:
		return "the repository's .git"
	case PlaceGitHooks:
		return "git's hooks"
	case PlaceDisk:
		return "a disk device"
	case PlaceDevice:
		return "a device"
	case PlaceUnknown:
		return "a path computed at run time"
	}
	return "another directory"
}

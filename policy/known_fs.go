package policy

import (
	"fmt"
	"path"
	"regexp"
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
}

func (f finding) worse(g finding) bool {
	return g.risk > f.risk || g.risk == f.risk && g.cat > f.cat
}

func (j *judge) record(f finding) {
	if f.reason != "" {
		j.add(f.cat, f.risk, "%s", f.reason)
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
				return finding{Dangerous, 7, fmt.Sprintf("%s removes %s, a path computed at run time in %s", how, v, phrase(p))}
			}
			return finding{Dangerous, 6, fmt.Sprintf("%s removes %s, a path computed at run time in %s", how, v, phrase(p))}
		}
		return finding{Caution, 5, fmt.Sprintf("%s removes %s, a path computed at run time", how, v)}
	}
	p, all := j.where(a)
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
	case PlaceWorkspace, PlaceTemp:
		return finding{SafeWrite, 2, fmt.Sprintf("%s removes %s in %s", how, v, phrase(p))}
	case PlaceTempRoot:
		if strong && all {
			return finding{Caution, 5, fmt.Sprintf("%s empties %s, a temporary directory other programs use", how, v)}
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

var (
	// sedExec finds the e command and the e flag of s///, which run the
	// pattern space as a shell command.
	sedExec = regexp.MustCompile(`(?:^|[;\n{}])\s*(?:\d+|\$|/[^/]*/)?\s*e(?:\s|;|$)|s([/|#,:])(?:[^/|#,:\\]|\\.)*[/|#,:](?:[^/|#,:\\]|\\.)*[/|#,:][gpiImM0-9]*e`)
	// sedWrite finds the w command and the w flag of s///.
	sedWrite = regexp.MustCompile(`(?:(?:^|[;\n{}])\s*(?:\d+|\$|/[^/]*/)?\s*|s/[^/]*/[^/]*/[gpiImMe0-9]*)w\s+([^;\n]+)`)
)

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
	filtered, deletes := false, false
	type run struct {
		action string
		cmd    []Arg
	}
	var runs []run
	for ; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "-delete":
			deletes = true
		case v == "-exec" || v == "-execdir" || v == "-ok" || v == "-okdir":
			end := i + 1
			for end < len(args) && args[end].Value != ";" && !(args[end].Value == "+" && args[end-1].Value == "{}") {
				end++
			}
			runs = append(runs, run{v, args[i+1 : end]})
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
			filtered = filtered || strings.HasPrefix(v, "-newer") || strings.Contains(findFilter, " "+v+" ")
			i++
		case v == "-empty":
			filtered = true
		}
	}
	j.add(ReadOnly, 0, "find lists files")
	if deletes {
		worst := finding{ReadOnly, -1, ""}
		for _, r := range roots {
			f := j.removal(r, true, true, "find -delete")
			if p, _ := j.where(r); filtered && f.cat != Forbidden && (p == PlaceWorkspaceRoot || p == PlaceWorkspace || p == PlaceTemp || p == PlaceTempRoot) {
				// With a test like -name, find deletes what matches, not
				// the directory: rm -rf build/*.o, not rm -rf .
				f = finding{SafeWrite, 2, fmt.Sprintf("find -delete removes the matching files under %s", r.Value)}
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
			j.argv(findCommand(r.cmd, root, filtered), "find "+r.action)
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
	worst := finding{Dangerous, 7, fmt.Sprintf("%s overwrites files so they cannot be recovered", c.Name)}
	for _, a := range s.ops {
		if p, _ := j.where(a); p == PlaceDisk {
			worst = finding{Forbidden, 10, fmt.Sprintf("%s overwrites the disk %s", c.Name, a.Value)}
		}
	}
	j.record(worst)
}

// judgeTruncate: truncate destroys a file's contents in place.
func judgeTruncate(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "sro", long: " size reference "})
	worst := finding{ReadOnly, 0, "truncate without a file does nothing"}
	for _, a := range s.ops {
		var f finding
		switch p, _ := j.where(a); p {
		case PlaceWorkspace, PlaceTemp, PlaceUnknown, PlaceDevice:
			f = finding{Caution, 5, fmt.Sprintf("truncate cuts %s to a new size, destroying what was there", a.Value)}
		default:
			f = finding{Dangerous, 7, fmt.Sprintf("truncate cuts %s (%s) to a new size", a.Value, phrase(p))}
		}
		if worst.worse(f) {
			worst = f
		}
	}
	j.record(worst)
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
	worst := finding{ReadOnly, 0, fmt.Sprintf("%s without a file changes nothing", c.Name)}
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
		if f := (finding{Caution, 5, "chmod sets the setuid or setgid bit"}); worst.worse(f) {
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
			return finding{Forbidden, 9, fmt.Sprintf("%s changes every file under %s (%s): the system or the account stops working", how, a.Value, phrase(p))}
		}
		if p == PlaceHomeRoot {
			return finding{Caution, 4, fmt.Sprintf("%s changes the home directory", how)}
		}
		return finding{Dangerous, 7, fmt.Sprintf("%s changes %s, a system directory", how, a.Value)}
	case PlaceSystem, PlaceDisk, PlaceDevice:
		return finding{Dangerous, 7, fmt.Sprintf("%s changes %s, a system file", how, a.Value)}
	case PlaceGitHooks:
		return finding{Caution, 5, fmt.Sprintf("%s changes the git hook %s, code git runs by itself", how, a.Value)}
	case PlaceWorkspace, PlaceWorkspaceRoot, PlaceGitDir, PlaceTemp, PlaceTempRoot:
		return finding{SafeWrite, 2, fmt.Sprintf("%s changes %s in %s", how, a.Value, phrase(p))}
	}
	return finding{Caution, 4, fmt.Sprintf("%s changes %s (%s)", how, a.Value, phrase(p))}
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
	worst := finding{SafeWrite, 2, "mv moves files within the workspace"}
	consider := func(f finding) {
		if worst.worse(f) {
			worst = f
		}
	}
	for _, a := range ops {
		switch p, _ := j.where(a); p {
		case PlaceWorkspace, PlaceTemp:
		case PlaceOutside, PlaceHome, PlaceUnknown, PlaceTempRoot:
			consider(finding{Caution, 4, fmt.Sprintf("mv moves %s from %s", a.Value, phrase(p))})
		default:
			consider(finding{Dangerous, 7, fmt.Sprintf("mv moves %s away (%s)", a.Value, phrase(p))})
		}
	}
	p, _ := j.where(to)
	switch p {
	case PlaceWorkspace, PlaceWorkspaceRoot, PlaceTemp, PlaceTempRoot:
	case PlaceOutside, PlaceHome, PlaceHomeRoot, PlaceUnknown:
		consider(finding{Caution, 4, fmt.Sprintf("mv moves files to %s (%s)", to.Value, phrase(p))})
	default:
		consider(finding{Dangerous, 7, fmt.Sprintf("mv replaces or fills %s (%s)", to.Value, phrase(p))})
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

// remote reports whether an rsync or scp operand names another machine
// (host:path, user@host:path, rsync://).
func remote(a Arg) bool {
	v := a.Value
	if strings.HasPrefix(v, "rsync://") {
		return true
	}
	i := strings.IndexByte(v, ':')
	return i > 0 && !strings.Contains(v[:i], "/")
}

func judgeRsync(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "eBfTM", long: " rsh rsync-path filter exclude include exclude-from include-from files-from " +
		"temp-dir partial-dir compare-dest copy-dest link-dest backup-dir suffix chmod chown usermap groupmap timeout " +
		"contimeout port password-file log-file log-file-format out-format max-size min-size max-delete bwlimit " +
		"block-size compress-level skip-compress info debug remote-option iconv address sockopts outbuf stop-after stop-at "})
	j.add(SafeWrite, 1, "rsync copies files")
	if sh, ok := s.val("-e", "--rsh"); ok {
		if f := strings.Fields(sh); len(f) == 0 || path.Base(f[0]) != "ssh" {
			j.add(Caution, 5, "rsync -e runs %s to reach the other side", sh)
			j.shell(sh, true, "rsync -e")
		}
	}
	if p, ok := s.val("--rsync-path"); ok {
		j.add(Caution, 5, "rsync --rsync-path runs %s on the other side", p)
	}
	if len(s.ops) < 2 {
		j.add(ReadOnly, 1, "rsync lists files")
		return
	}
	dest := s.ops[len(s.ops)-1]
	deletes := s.abbrev("del", 3) || s.abbrev("delete", 3) || s.abbrev("delete-before", 8) || s.abbrev("delete-during", 8) ||
		s.abbrev("delete-delay", 8) || s.abbrev("delete-after", 8) || s.abbrev("delete-excluded", 8)
	for _, o := range s.opts {
		deletes = deletes || strings.HasPrefix(o.long, "delete")
	}
	if s.has("--remove-source-files") {
		j.add(Caution, 4, "rsync --remove-source-files deletes the sources it copied")
	}
	if remote(dest) {
		j.add(Caution, 4, "rsync copies files to the remote machine %s", dest.Value)
		if deletes {
			j.add(Dangerous, 7, "rsync --delete removes files on the remote machine that the source lacks")
		}
		return
	}
	j.write(dest, "rsync")
	if deletes {
		switch p, _ := j.where(dest); p {
		case PlaceWorkspace, PlaceWorkspaceRoot, PlaceTemp, PlaceTempRoot:
			j.add(SafeWrite, 2, "rsync --delete removes files in %s that the source lacks", dest.Value)
		default:
			j.add(Dangerous, 7, "rsync --delete removes files in %s (%s) that the source lacks", dest.Value, phrase(p))
		}
	}
}

func judgeScp(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "cFiJlPoSDX"})
	if prog, ok := s.val("-S"); ok {
		j.add(Caution, 5, "scp -S runs %s to reach the other side", prog)
	}
	for _, o := range s.opts {
		if o.short == 'o' {
			j.sshOption(o.val, "scp")
		}
	}
	if len(s.ops) < 2 {
		j.add(Caution, 3, "scp without a destination")
		return
	}
	dest := s.ops[len(s.ops)-1]
	if remote(dest) {
		j.add(Caution, 4, "scp copies files to the remote machine %s", dest.Value)
		return
	}
	j.add(Caution, 3, "scp copies files over the network")
	j.write(dest, "scp")
}

// judgeDd: dd is judged by its of= (a disk there is the end of its file
// system) and if= (reading a whole disk).
func judgeDd(j *judge, c *Command) {
	wrote := false
	for _, a := range c.Rest() {
		k, v, ok := strings.Cut(a.Value, "=")
		if !ok {
			continue
		}
		t := Arg{Value: v, Static: a.Static, Glob: a.Glob, IfEmpty: strings.TrimPrefix(a.IfEmpty, k+"=")}
		switch k {
		case "of":
			wrote = true
			j.add(SafeWrite, 1, "dd writes %s", v)
			if !a.Static {
				j.add(Caution, 5, "dd writes to %s, a path computed at run time", v)
			}
			j.write(t, "dd of=")
		case "if":
			if p := j.place(t); p == PlaceDisk {
				j.add(Caution, 5, "dd reads the whole disk %s", v)
			}
		}
	}
	if !wrote {
		j.add(ReadOnly, 1, "dd copies to standard output")
	}
}

// judgeSed: sed -i edits its files in place; the script's e command runs
// shell commands and its w command writes files.
func judgeSed(j *judge, c *Command) {
	var scripts []Arg
	var ops []Arg
	inPlace, fromFile := false, false
	args := c.Rest()
	for i := 0; i < len(args); i++ {
		a := args[i]
		v := a.Value
		if !a.Static || len(v) < 2 || v[0] != '-' {
			ops = append(ops, a)
			continue
		}
		if strings.HasPrefix(v, "--") {
			name, val, has := strings.Cut(v[2:], "=")
			switch {
			case strings.HasPrefix("in-place", name) && len(name) >= 2:
				inPlace = true
			case name == "expression" || name == "file":
				if !has && i+1 < len(args) {
					i++
					val = args[i].Value
				}
				if name == "file" {
					fromFile = true
				} else {
					scripts = append(scripts, Arg{Value: val, Static: a.Static})
				}
			case name == "line-length":
				if !has {
					i++
				}
			}
			continue
		}
	cluster:
		for k := 1; k < len(v); k++ {
			switch v[k] {
			case 'i':
				// -i takes the rest of the cluster as a suffix: -ie is not -i -e.
				inPlace = true
				if k == len(v)-1 && i+1 < len(args) && args[i+1].Static && args[i+1].Value == "" {
					i++ // BSD sed -i ''
				}
				break cluster
			case 'e', 'f', 'l':
				val := v[k+1:]
				if val == "" && i+1 < len(args) {
					i++
					val = args[i].Value
				}
				switch v[k] {
				case 'e':
					scripts = append(scripts, Arg{Value: val, Static: args[i].Static})
				case 'f':
					fromFile = true
				}
				break cluster
			}
		}
	}
	if len(scripts) == 0 && !fromFile && len(ops) > 0 {
		scripts, ops = ops[:1], ops[1:]
	}
	if inPlace {
		j.add(SafeWrite, 1, "sed -i edits files in place")
		for _, a := range ops {
			j.write(a, "sed -i")
		}
	} else {
		j.add(ReadOnly, 0, "sed prints its edits")
	}
	for _, s := range scripts {
		if !s.Static {
			j.add(Caution, 4, "sed runs a script computed at run time")
		}
		if sedExec.MatchString(s.Value) {
			j.add(Caution, 5, "the sed script runs shell commands (e)")
		}
		for _, m := range sedWrite.FindAllStringSubmatch(s.Value, 8) {
			if f := strings.TrimSpace(m[1]); f != "" && f != "/dev/stdout" && f != "/dev/stderr" {
				j.write(homeArg(j, f), "sed w")
			}
		}
	}
}

// judgeDisk: programs that format, wipe or repartition. On a device they
// destroy everything on it; on an image file in the workspace they are an
// ordinary write. A name forgebox cannot see is taken for a device.
func judgeDisk(j *judge, c *Command) {
	name := c.Name
	s := scan(c.Rest(), flags{short: "tbLOENmIiGgUTCdJr", long: " type label uuid align output "})
	if name == "diskutil" {
		judgeDiskutil(j, c, s)
		return
	}
	if diskListing(name, &s) {
		j.add(ReadOnly, 1, "%s lists partitions or signatures", name)
		return
	}
	worst := finding{Forbidden, 10, fmt.Sprintf("%s erases a disk", name)}
	if strings.HasSuffix(name, "disk") || name == "parted" {
		worst = finding{Forbidden, 9, fmt.Sprintf("%s repartitions a disk: what is on it is lost", name)}
	}
	local := finding{ReadOnly, -1, ""}
	for _, a := range s.ops {
		var f finding
		switch p := j.place(a); {
		case !a.Static || strings.HasPrefix(j.ctx.Abs(a.Value), "/dev/") || p == PlaceDisk || p == PlaceRoot:
			f = worst
		case isNumber(a.Value) || partedWord(a.Value) || p == PlaceWorkspaceRoot:
			continue
		case p == PlaceWorkspace || p == PlaceTemp:
			f = finding{Caution, 5, fmt.Sprintf("%s formats or repartitions the image file %s", name, a.Value)}
		default:
			f = finding{Dangerous, 7, fmt.Sprintf("%s formats or repartitions %s (%s)", name, a.Value, phrase(p))}
		}
		if local.worse(f) {
			local = f
		}
	}
	if local.risk >= 0 {
		worst = local
	}
	j.record(worst)
}

// diskListing reports whether a partitioning program only prints.
func diskListing(name string, s *scanned) bool {
	switch name {
	case "fdisk", "gdisk":
		return s.has("-l", "--list")
	case "sfdisk":
		return s.has("-l", "--list", "-d", "--dump", "-s", "--show-size", "-J", "--json", "-V", "--verify")
	case "sgdisk":
		for _, o := range s.opts {
			if !o.is("-p") && !o.is("-v") && !o.is("-P") && !o.is("--print") && !o.is("--verify") && !o.is("--pretend") {
				return false
			}
		}
		return len(s.opts) > 0
	case "wipefs":
		return !s.has("-a", "--all", "-o", "--offset")
	case "parted":
		printing := s.has("-l", "--list")
		for _, a := range s.ops {
			switch a.Value {
			case "print", "p":
				printing = true
			case "mklabel", "mktable", "mkpart", "mkpartfs", "rm", "resizepart", "resize", "move", "cp", "name", "set", "toggle", "rescue", "disk_set", "disk_toggle", "type":
				return false
			}
		}
		return printing
	}
	return false
}

// partedWord reports whether an operand of parted is a word of its
// command language rather than a device.
func partedWord(v string) bool {
	switch v {
	case "print", "p", "unit", "mklabel", "mktable", "mkpart", "rm", "resizepart", "name", "set", "toggle", "gpt", "msdos",
		"primary", "logical", "extended", "ext4", "ext3", "ext2", "fat32", "fat16", "ntfs", "linux-swap", "on", "off", "boot",
		"esp", "lvm", "raid", "MiB", "GiB", "s", "%", "quit", "free":
		return true
	}
	return strings.HasSuffix(v, "%") || strings.HasSuffix(v, "MiB") || strings.HasSuffix(v, "GiB") || strings.HasSuffix(v, "MB") || strings.HasSuffix(v, "GB")
}

func judgeDiskutil(j *judge, c *Command, s scanned) {
	verb := ""
	if len(s.ops) > 0 {
		verb = strings.ToLower(s.ops[0].Value)
	}
	switch verb {
	case "list", "info", "activity", "apfs", "":
		if len(s.ops) < 2 || s.ops[1].Value == "list" || verb != "apfs" {
			j.add(ReadOnly, 1, "diskutil %s reports on disks", verb)
			return
		}
		j.add(Dangerous, 7, "diskutil apfs changes a container")
	case "erasedisk", "erasevolume", "partitiondisk", "zerodisk", "randomdisk", "secureerase", "reformat", "splitpartition", "mergepartitions":
		j.add(Forbidden, 10, "diskutil %s erases a disk", s.ops[0].Value)
	default:
		j.add(Caution, 5, "diskutil %s changes a disk or volume", s.ops[0].Value)
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

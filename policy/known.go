package policy

import (
	"regexp"
	"strings"
)

// knowledge returns what forgebox knows of a program, or nil. Each entry
// adds at least one finding: a command the knowledge names is never left
// without a verdict.
func knowledge(name string) func(*judge, *Command) {
	if k := nestedKnowledge(name); k != nil {
		return k
	}
	if name == "git" {
		return judgeGit
	}
	if k := fsKnowledge(name); k != nil {
		return k
	}
	if k := systemKnowledge(name); k != nil {
		return k
	}
	if k := packageKnowledge(name); k != nil {
		return k
	}
	if k := dbKnowledge(name); k != nil {
		return k
	}
	if k := networkKnowledge(name); k != nil {
		return k
	}
	return toolKnowledge(name)
}

// toolKnowledge covers the everyday programs: readers, builders and the
// ones that wait for a person at the terminal.
func toolKnowledge(name string) func(*judge, *Command) {
	switch name {
	case "ls", "dir", "vdir", "cat", "head", "grep", "egrep", "fgrep", "rg", "ag", "ack", "wc", "cut", "tr",
		"pwd", "which", "whereis", "file", "stat", "du", "df", "diff", "diff3", "sdiff", "cmp", "printenv",
		"whoami", "id", "uname", "jq", "basename", "dirname", "realpath", "readlink", "seq", "od", "hexdump",
		"md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum", "sum",
		"shasum", "md5", "ps", "pgrep", "pidof", "pstree", "free", "uptime", "nproc", "column", "nl", "tac",
		"rev", "comm", "join", "paste", "fold", "strings", "base64", "base32", "basenc", "fmt", "pr", "expand",
		"unexpand", "look", "tsort", "numfmt", "factor", "expr", "groups", "users", "who", "w", "last", "lsof",
		"netstat", "ss", "lsblk", "blkid", "lscpu", "lsusb", "lspci", "lsmod", "arch", "getconf", "getent",
		"locale", "tty", "infocmp", "vmstat", "iostat", "mpstat", "zcat", "bzcat", "xzcat", "zstdcat", "lzcat",
		"zgrep", "zegrep", "zfgrep", "zdiff", "zipinfo", "iconv", "fd", "fdfind", "bat", "batcat", "eza", "exa",
		"lsd", "dust", "duf", "cloc", "tokei", "scc", "shellcheck", "hadolint", "yamllint", "xmllint", "gron",
		"nvidia-smi", "sensors", "lsattr", "getfacl", "namei", "mountpoint", "findmnt", "getcap", "readelf",
		"objdump", "nm", "ldd", "size", "cal", "ncal", "echo", "printf", "true", "false", "test", "[", "sleep",
		"yes", "apropos", "whatis", "tldr", "hash", "help", "jobs", "type":
		return judgeReads
	case "cd", "pushd", "popd", "dirs", "export", "declare", "typeset", "local", "readonly", "unset", "set",
		"shopt", "unalias", "wait", "bg", "fg", "disown", "umask", "ulimit", "getopts", "shift", "let", "exit",
		"return", "break", "continue", "logout", "times", "caller", "compgen", "complete", "compopt", "read",
		"mapfile", "readarray", ":", "clear", "reset", "stty", "tput":
		return judgeShellState
	case "alias", "trap":
		return judgeDeferred
	case "tail":
		return judgeTail
	case "sort", "uniq", "tree", "xxd", "yq":
		return judgeOutputs
	case "date", "hostname":
		return judgeClock
	case "awk", "gawk", "mawk", "nawk", "busybox-awk":
		return judgeAwk
	case "touch", "mkdir", "mktemp":
		return judgeCreate
	case "make", "gmake", "cmake", "ninja", "meson", "bazel", "bazelisk", "mvn", "gradle", "ant", "sbt", "lein",
		"mix", "dotnet", "msbuild", "tsc", "esbuild", "vite", "webpack", "rollup", "parcel", "swc", "babel", "turbo",
		"nx", "jest", "vitest", "mocha", "ava", "karma", "playwright", "pytest", "py.test", "tox", "nox", "coverage",
		"mypy", "pyright", "pylint", "flake8", "black", "ruff", "isort", "autopep8", "yapf", "pyupgrade", "bandit",
		"eslint", "prettier", "biome", "stylelint", "standard", "gofmt", "goimports", "golangci-lint", "staticcheck",
		"govulncheck", "golint", "rustc", "rustfmt", "gcc", "g++", "cc", "c++", "clang", "clang++", "clang-format",
		"clang-tidy", "ld", "as", "ar", "strip", "javac", "java", "kotlinc", "scalac", "swift", "swiftc", "zig",
		"ghc", "stack", "cabal", "elixir", "erlc", "protoc", "buf", "sqlc", "templ", "hugo", "zola", "mkdocs",
		"sphinx-build", "doxygen", "latexmk", "pdflatex", "xelatex", "pandoc", "split", "csplit", "patch",
		"dos2unix", "unix2dos", "pre-commit", "rspec", "rake", "phpunit", "just", "task", "air", "wasm-pack", "maturin":
		return judgeBuild
	case "tar", "bsdtar":
		return judgeTar
	case "unzip", "zip", "7z", "7za", "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4", "pigz":
		return judgeArchive
	case "vim", "vi", "nvim", "nano", "emacs", "pico", "micro", "joe", "kak", "hx", "helix", "ed", "ex", "red", "view", "vimdiff":
		return judgeEditor
	case "less", "more", "most", "man", "info", "zless", "zmore", "pg":
		return judgePager
	case "top", "htop", "btop", "atop", "iotop", "glances", "nmon", "nvtop", "bmon", "iftop", "nethogs", "mc", "ranger",
		"nnn", "lf", "vifm", "tig", "lazygit", "lazydocker", "k9s", "gitui", "ncdu", "fzf", "sk", "dialog", "whiptail",
		"irb", "pry", "ghci", "iex", "erl", "sbcl", "jshell", "scala", "gdb", "lldb", "bc", "dc", "ipython", "tmux", "screen":
		return judgeInteractive
	}
	return nil
}

func judgeReads(j *judge, c *Command) {
	j.add(ReadOnly, 0, "%s only reads or prints", c.Name)
}

func judgeShellState(j *judge, c *Command) {
	j.add(ReadOnly, 0, "%s changes only the shell's own state", c.Name)
}

// judgeDeferred: alias and trap store code the shell runs later, on this
// line; it is judged now, as if it ran.
func judgeDeferred(j *judge, c *Command) {
	j.add(ReadOnly, 0, "%s stores code the shell runs later", c.Name)
	ops := c.Rest()
	if c.Name == "trap" {
		s := scan(ops, flags{stop: true})
		if len(s.ops) > 1 && s.ops[0].Value != "-" && s.ops[0].Value != "" {
			j.shell(s.ops[0].Value, s.ops[0].Static, "trap")
		}
		return
	}
	for _, a := range ops {
		if _, code, ok := strings.Cut(a.Value, "="); ok && code != "" {
			j.shell(code, a.Static, "alias")
		}
	}
}

func judgeTail(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "cnsq", long: " bytes lines sleep-interval pid max-unchanged-stats "})
	if s.has("-f", "-F", "--follow", "--retry") {
		j.add(Interactive, 1, "interactive: tail -f follows the file and never ends")
		return
	}
	j.add(ReadOnly, 0, "tail only reads")
}

// judgeOutputs: readers that can be told to write a file.
func judgeOutputs(j *judge, c *Command) {
	j.add(ReadOnly, 0, "%s only reads or prints", c.Name)
	switch c.Name {
	case "sort", "tree":
		s := scan(c.Rest(), flags{short: "kotSTLIPHX", long: " key output field-separator buffer-size temporary-directory parallel files0-from sort compress-program "})
		if out, ok := s.val("-o", "--output"); ok {
			j.write(staticArg(out), c.Name+" -o")
		}
		if prog, ok := s.val("--compress-program"); ok {
			j.add(Caution, 5, "sort --compress-program runs %s", prog)
		}
	case "uniq", "xxd":
		s := scan(c.Rest(), flags{short: "fswcgloO", long: " skip-fields skip-chars check-chars group all-repeated cols len seek "})
		if len(s.ops) == 2 {
			j.write(s.ops[1], c.Name)
		}
	case "yq":
		s := scan(c.Rest(), flags{short: "pIoe", long: " input-format output-format indent expression "})
		if s.has("-i", "--inplace") {
			for _, f := range s.ops[min(1, len(s.ops)):] {
				j.write(f, "yq -i")
			}
		}
	}
}

// judgeClock: date and hostname read, unless given a value to set.
func judgeClock(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "dfrsF", long: " date file reference set "})
	switch {
	case c.Name == "date" && s.has("-s", "--set"):
		j.add(Caution, 5, "date -s sets the system clock")
	case c.Name == "hostname" && (len(s.ops) > 0 || s.has("-F", "--file")):
		j.add(Caution, 5, "hostname sets the machine's name")
	default:
		j.add(ReadOnly, 0, "%s only prints", c.Name)
	}
}

var (
	awkSystem  = regexp.MustCompile(`\bsystem\s*\(\s*("(?:[^"\\]|\\.)*"\s*\))?`)
	awkPipe    = regexp.MustCompile(`\|\s*(?:getline|")|"\s*\|\s*getline|\|&`)
	awkPrintTo = regexp.MustCompile(`\bprintf?\b[^;{}]*?>>?\s*"((?:[^"\\]|\\.)*)"`)
)

// judgeAwk reads the program for the three ways awk reaches outside:
// system(), pipes to and from commands, and print > "file".
func judgeAwk(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "fvFilE", long: " file assign field-separator include load exec source "})
	if f, ok := s.val("-f", "--file", "-E", "--exec"); ok {
		if p := j.place(staticArg(f)); p == PlaceWorkspace || p == PlaceTemp {
			j.add(SafeWrite, 2, "%s runs the program in %s", c.Name, f)
		} else {
			j.add(Caution, 3, "%s runs the program in %s (%s)", c.Name, f, phrase(p))
		}
		return
	}
	if len(s.ops) == 0 {
		j.add(ReadOnly, 0, "%s without a program does nothing", c.Name)
		return
	}
	prog := s.ops[0]
	j.add(ReadOnly, 0, "%s only reads and prints", c.Name)
	if !prog.Static {
		j.add(Caution, 4, "%s runs a program computed at run time", c.Name)
	}
	code := prog.Value
	for _, m := range awkSystem.FindAllStringSubmatchIndex(code, 16) {
		if m[2] < 0 {
			j.add(Caution, 5, "%s runs shell commands it builds at run time (system)", c.Name)
			continue
		}
		lit := strings.TrimRight(code[m[2]:m[3]], " \t)")
		j.shell(unescapeDouble(lit[1:len(lit)-1]), prog.Static, c.Name+" system()")
	}
	if awkPipe.MatchString(code) {
		j.add(Caution, 5, "%s pipes to or from a shell command", c.Name)
	}
	for _, m := range awkPrintTo.FindAllStringSubmatch(code, 16) {
		j.write(homeArg(j, m[1]), c.Name+" print >")
	}
	if v, ok := s.val("-i", "--include"); ok && v == "inplace" {
		for _, f := range s.ops[1:] {
			j.write(f, c.Name+" -i inplace")
		}
	}
}

// judgeCreate: touch, mkdir and mktemp create what they name.
func judgeCreate(j *judge, c *Command) {
	j.add(SafeWrite, 1, "%s creates files or directories", c.Name)
	s := scan(c.Rest(), flags{short: "rdtmZp", long: " reference date time mode context tmpdir suffix "})
	if c.Name == "mktemp" {
		if d, ok := s.val("-p", "--tmpdir"); ok && d != "" {
			j.write(staticArg(d), "mktemp")
		}
		return
	}
	for _, a := range s.ops {
		j.write(a, c.Name)
	}
}

func judgeBuild(j *judge, c *Command) {
	switch c.Name {
	case "pre-commit":
		if s := scan(c.Rest(), flags{}); len(s.ops) > 0 && (s.ops[0].Value == "install" || s.ops[0].Value == "uninstall") {
			j.add(Caution, 5, "pre-commit %s changes the repository's git hooks", s.ops[0].Value)
			return
		}
	case "java":
		j.add(SafeWrite, 2, "java runs a Java program")
		return
	}
	j.add(SafeWrite, 2, "%s builds, checks or formats the project", c.Name)
}

// judgeTar: extracting writes where -C says, creating writes the archive,
// and a few options run commands.
func judgeTar(j *judge, c *Command) {
	args := c.Rest()
	if len(args) > 0 && args[0].Static && args[0].Value != "" && args[0].Value[0] != '-' {
		// tar xzf a.tgz: the old style, a cluster without its dash.
		args = append([]Arg{staticArg("-" + args[0].Value)}, args[1:]...)
	}
	s := scan(args, flags{short: "fCbIFgKLNTVX", long: " file directory use-compress-program to-command checkpoint-action " +
		"info-script new-volume-script rsh-command exclude exclude-from files-from transform owner group mode mtime " +
		"newer after-date blocking-factor format label listed-incremental strip-components suffix "})
	for _, o := range s.opts {
		switch o.long {
		case "to-command", "use-compress-program", "info-script", "new-volume-script", "rsh-command":
			j.add(Caution, 5, "tar --%s runs %s", o.long, o.val)
			j.shell(o.val, true, "tar --"+o.long)
		case "checkpoint-action":
			if cmd, ok := strings.CutPrefix(o.val, "exec="); ok {
				j.add(Caution, 5, "tar --checkpoint-action=exec runs a command")
				j.shell(cmd, true, "tar --checkpoint-action")
			}
		}
		if o.short == 'I' || o.short == 'F' {
			j.add(Caution, 5, "tar -%c runs %s", o.short, o.val)
		}
	}
	archive, hasArchive := s.val("-f", "--file")
	switch {
	case s.has("-x", "--extract", "--get"):
		j.add(SafeWrite, 2, "tar extracts files")
		dir, ok := s.val("-C", "--directory")
		if !ok {
			dir = "."
		}
		j.write(staticArg(dir), "tar -x")
		if s.has("-P", "--absolute-names") {
			j.add(Caution, 5, "tar -P extracts to the absolute paths the archive names")
		}
	case s.has("-c", "--create", "-r", "--append", "-u", "--update", "-A", "--catenate", "--concatenate", "--delete"):
		j.add(SafeWrite, 2, "tar writes an archive")
		if hasArchive && archive != "-" {
			j.write(staticArg(archive), "tar")
		}
	default:
		j.add(ReadOnly, 0, "tar lists an archive")
	}
}

// judgeArchive: zip, unzip, 7z and the compressors.
func judgeArchive(j *judge, c *Command) {
	switch c.Name {
	case "unzip":
		s := scan(c.Rest(), flags{short: "dxP", long: ""})
		if s.has("-l", "-v", "-t", "-Z", "-z", "-p") {
			j.add(ReadOnly, 0, "unzip lists or tests an archive")
			return
		}
		j.add(SafeWrite, 2, "unzip extracts files")
		dir, ok := s.val("-d")
		if !ok {
			dir = "."
		}
		j.write(staticArg(dir), "unzip")
	case "zip":
		s := scan(c.Rest(), flags{short: "bnxitPO", long: " unzip-command temp-path suffixes exclude include password output-file "})
		j.add(SafeWrite, 2, "zip writes an archive")
		if _, ok := s.val("--unzip-command"); ok || c.Has("-TT") {
			j.add(Caution, 5, "zip -TT runs a command to test the archive")
		}
		if len(s.ops) > 0 {
			j.write(s.ops[0], "zip")
		}
	case "7z", "7za":
		s := scan(c.Rest(), flags{})
		if len(s.ops) > 0 && (s.ops[0].Value == "l" || s.ops[0].Value == "t") {
			j.add(ReadOnly, 0, "7z lists or tests an archive")
			return
		}
		j.add(SafeWrite, 2, "7z extracts or writes an archive")
		for _, a := range c.Rest() {
			if d, ok := strings.CutPrefix(a.Value, "-o"); ok && d != "" {
				j.write(Arg{Value: d, Static: a.Static, IfEmpty: d}, "7z -o")
			}
		}
		if len(s.ops) > 1 && strings.Contains("aud", s.ops[0].Value) && len(s.ops[0].Value) == 1 {
			j.write(s.ops[1], "7z")
		}
	default:
		s := scan(c.Rest(), flags{short: "STLmo", long: " suffix format memlimit threads "})
		if s.has("-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test") || len(s.ops) == 0 {
			j.add(ReadOnly, 0, "%s compresses to standard output", c.Name)
			return
		}
		j.add(SafeWrite, 2, "%s replaces files with their (de)compressed form", c.Name)
		for _, a := range s.ops {
			j.write(a, c.Name)
		}
	}
}

// judgeEditor: an editor is interactive unless it runs a script.
func judgeEditor(j *judge, c *Command) {
	batch := false
	ex, silent := c.Name == "ex", false
	for _, a := range c.Rest() {
		switch a.Value {
		case "--batch", "-batch", "--script", "-script", "--headless", "-es", "-Es", "-se":
			batch = true
		case "-e", "-E":
			ex = true
		case "-s":
			silent = true
		}
	}
	batch = batch || ex && silent
	switch {
	case c.Name == "ed" || c.Name == "red" || c.Name == "ex" && !batch:
		if c.Stdin.HasDoc || c.Stdin.From != nil || hasInputRedir(c) {
			j.add(SafeWrite, 2, "%s edits files with the commands on its input", c.Name)
			return
		}
	case batch:
		j.add(Caution, 3, "%s runs editor commands without a terminal; they can run shell commands", c.Name)
		return
	}
	j.add(Interactive, 1, "interactive: %s is a terminal editor", c.Name)
}

func judgePager(j *judge, c *Command) {
	if c.Name == "man" {
		s := scan(c.Rest(), flags{short: "MPSLm", long: " manpath pager sections locale systems "})
		if s.has("-k", "-f", "-w", "--apropos", "--whatis", "--where", "--path") {
			j.add(ReadOnly, 0, "man looks up manual pages")
			return
		}
	}
	j.add(Interactive, 1, "interactive: %s pages its output and waits for keys", c.Name)
}

// judgeInteractive: full-screen programs, REPLs and terminal
// multiplexers, with the forms of each that run to completion.
func judgeInteractive(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "cdfnpLtTSx", long: " filter query delay eval "})
	switch c.Name {
	case "top":
		if s.has("-b") {
			j.add(ReadOnly, 0, "top -b prints the process list")
			return
		}
	case "fzf", "sk":
		if s.has("-f", "--filter") {
			j.add(ReadOnly, 0, "%s --filter prints the matches", c.Name)
			return
		}
	case "ncdu":
		if s.has("-o") {
			j.add(ReadOnly, 0, "ncdu -o exports the disk usage")
			return
		}
	case "bc", "dc":
		if len(s.ops) > 0 || c.Stdin.HasDoc || c.Stdin.From != nil || hasInputRedir(c) {
			j.add(ReadOnly, 0, "%s computes", c.Name)
			return
		}
	case "gdb", "lldb":
		if s.has("-batch", "--batch") || strings.Contains(c.Text(), "-batch") {
			j.add(Caution, 3, "%s runs a program under the debugger", c.Name)
			return
		}
	case "ipython":
		if code, ok := s.val("-c"); ok {
			inlineCode(j, "python", code, allStatic(c.Args))
			return
		}
	case "tmux":
		judgeTmux(j, c)
		return
	case "screen":
		judgeScreen(j, c)
		return
	default:
		if len(s.ops) > 0 && (c.Name == "irb" || c.Name == "pry" || c.Name == "iex" || c.Name == "erl") {
			j.add(Caution, 3, "%s runs a program", c.Name)
			return
		}
	}
	j.add(Interactive, 1, "interactive: %s waits for a person at the terminal", c.Name)
}

// judgeTmux: tmux new -d 'cmd' and send-keys run shell code in a new or
// existing pane; the code is judged as if typed.
func judgeTmux(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "LSfT", stop: true})
	if len(s.ops) == 0 {
		j.add(Interactive, 1, "interactive: tmux without a command attaches a session")
		return
	}
	sub := s.ops[0].Value
	rest := scan(s.ops[1:], flags{short: "stcnFxyeEgTNbAD", long: ""})
	switch sub {
	case "ls", "list-sessions", "list-windows", "lsw", "list-panes", "lsp", "capture-pane", "capturep", "has-session", "has", "display-message", "display", "show-options", "show", "info":
		j.add(ReadOnly, 0, "tmux %s only reports", sub)
	case "new-session", "new", "new-window", "neww", "split-window", "splitw", "respawn-pane", "respawnp":
		if !rest.has("-d") && (sub == "new" || sub == "new-session") {
			j.add(Interactive, 1, "interactive: tmux %s without -d attaches the new session", sub)
		} else {
			j.add(SafeWrite, 2, "tmux %s starts a pane in the background", sub)
		}
		if len(rest.ops) > 0 {
			j.shell(joinArgs(rest.ops), allStatic(rest.ops), "tmux "+sub)
		}
	case "send-keys", "send":
		j.add(SafeWrite, 2, "tmux send-keys types into a pane")
		var keys []Arg
		for _, a := range rest.ops {
			if v := a.Value; v != "Enter" && v != "C-m" && v != "KPEnter" && v != "C-c" && v != "C-d" {
				keys = append(keys, a)
			}
		}
		if len(keys) > 0 {
			j.shell(joinArgs(keys), allStatic(keys), "tmux send-keys")
		}
	case "attach", "attach-session", "a", "at":
		j.add(Interactive, 1, "interactive: tmux %s attaches a session", sub)
	case "kill-server", "kill-session", "kill-window", "kill-pane", "killp", "killw":
		j.add(Caution, 3, "tmux %s ends the programs running there", sub)
	default:
		j.add(Caution, 3, "tmux %s is a subcommand forgebox does not know", sub)
	}
}

func judgeScreen(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "SceplLhTX", stop: true})
	switch {
	case s.has("-ls", "-list") || strings.Contains(c.Text(), " -ls"):
		j.add(ReadOnly, 0, "screen lists its sessions")
	case s.has("-d") && s.has("-m") && len(s.ops) > 0:
		j.add(SafeWrite, 2, "screen runs a command in a detached session")
		j.argv(s.ops, "screen -dm")
	default:
		j.add(Interactive, 1, "interactive: screen attaches a terminal session")
	}
}

// flags describes a program's options well enough to tell them from its
// operands: the short options that take a value, the long options that
// take one (space separated, with a space on each side), and whether the
// options end at the first operand (POSIX, programs with subcommands)
// rather than following GNU's permutation (rm file -rf).
type flags struct {
	short string
	long  string
	stop  bool
}

// option is one option as given: short is the letter of -f, long the
// name of --force; val is its value, if it takes one.
type option struct {
	short byte
	long  string
	val   string
	// dynamic is true when the value is computed at run time.
	dynamic bool
}

// scanned is a command's arguments split into options and operands.
type scanned struct {
	opts []option
	ops  []Arg
	// dd is the index in ops of the first operand after "--", or -1.
	dd int
}

// scan splits args into options and operands. A word computed at run time
// is an operand: forgebox cannot tell what it holds.
func scan(args []Arg, f flags) scanned {
	s := scanned{dd: -1}
	for i := 0; i < len(args); i++ {
		a := args[i]
		v := a.Value
		if s.dd >= 0 || !a.Static || len(v) < 2 || v[0] != '-' || f.stop && len(s.ops) > 0 {
			s.ops = append(s.ops, a)
			continue
		}
		if v == "--" {
			s.dd = len(s.ops)
			continue
		}
		if v[1] == '-' {
			name, val, has := strings.Cut(v[2:], "=")
			dyn := false
			if !has && strings.Contains(f.long, " "+name+" ") && i+1 < len(args) {
				i++
				val, dyn = args[i].Value, !args[i].Static
			}
			s.opts = append(s.opts, option{long: name, val: val, dynamic: dyn})
			continue
		}
		for k := 1; k < len(v); k++ {
			ch := v[k]
			if strings.IndexByte(f.short, ch) >= 0 {
				val, dyn := v[k+1:], false
				if val == "" && i+1 < len(args) {
					i++
					val, dyn = args[i].Value, !args[i].Static
				}
				s.opts = append(s.opts, option{short: ch, val: val, dynamic: dyn})
				break
			}
			s.opts = append(s.opts, option{short: ch})
		}
	}
	return s
}

// is reports whether o is one of names ("-f", "--force").
func (o option) is(name string) bool {
	if len(name) == 2 && name[0] == '-' && name[1] != '-' {
		return o.short == name[1]
	}
	return o.short == 0 && len(name) > 2 && name[2:] == o.long
}

// has reports whether any of the options was given.
func (s *scanned) has(names ...string) bool {
	for _, o := range s.opts {
		for _, n := range names {
			if o.is(n) {
				return true
			}
		}
	}
	return false
}

// val returns the value of the last of the options given.
func (s *scanned) val(names ...string) (string, bool) {
	for i := len(s.opts) - 1; i >= 0; i-- {
		for _, n := range names {
			if s.opts[i].is(n) {
				return s.opts[i].val, true
			}
		}
	}
	return "", false
}

// asRoot reports whether a wrapper runs the command as another user.
func asRoot(c *Command) bool {
	for _, w := range c.Wrappers {
		switch w {
		case "sudo", "doas", "pkexec", "su", "runuser":
			return true
		}
	}
	return false
}

// homeArg makes an Arg of a path a program names, with ~ expanded as the
// shell would have.
func homeArg(j *judge, p string) Arg {
	if h := j.ctx.Home; h != "" {
		if p == "~" {
			p = h
		} else if rest, ok := strings.CutPrefix(p, "~/"); ok {
			p = h + "/" + rest
		}
	}
	return staticArg(p)
}

// abbrev reports whether the long option full was given whole or as a
// prefix at least min letters long: getopt_long takes any unambiguous
// prefix, so rm --rec is rm --recursive.
func (s *scanned) abbrev(full string, min int) bool {
	for _, o := range s.opts {
		if o.short == 0 && len(o.long) >= min && strings.HasPrefix(full, o.long) {
			return true
		}
	}
	return false
}

// networkKnowledge covers the programs that talk to other machines.
func networkKnowledge(name string) func(*judge, *Command) {
	switch name {
	case "curl":
		return judgeCurl
	case "wget", "wget2":
		return judgeWget
	case "ssh", "autossh":
		return judgeSSH
	case "nc", "ncat", "netcat", "socat":
		return judgeNetcat
	case "gh":
		return judgeGh
	case "telnet", "ftp", "sftp", "lftp", "mosh", "mtr":
		return judgeRemoteSession
	case "ping", "ping6", "dig", "nslookup", "host", "traceroute", "tracepath", "whois", "ssh-keyscan", "drill", "arp":
		return judgeQuery
	case "http", "https", "xh", "httpie", "aria2c", "lwp-request", "nmap", "open", "xdg-open", "ssh-keygen", "ssh-add", "ssh-copy-id", "ssh-agent":
		return judgeNetwork
	}
	return nil
}

// curlValues are curl's long options that take a value.
const curlValues = " output dump-header cookie-jar cookie upload-file data data-binary data-raw data-urlencode data-ascii form " +
	"form-string config header request user url output-dir json trace trace-ascii stderr write-out proxy user-agent referer " +
	"max-time connect-timeout retry cert key cacert range continue-at time-cond limit-rate max-filesize resolve connect-to " +
	"interface local-port proxy-user oauth2-bearer variable etag-save etag-compare hsts alt-svc libcurl unix-socket " +
	"abstract-unix-socket preproxy quote retry-delay retry-max-time speed-limit speed-time telnet-option tls-max "

// judgeCurl: a request is a caution; the files curl writes (-o, -O, -D,
// -c) and the local files it sends (-T, -d @file, -F f=@file) are judged
// as such.
func judgeCurl(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "AbcCdDeEFHKmoPQrtTuUwxXyYz", long: curlValues})
	j.add(Caution, 3, "curl sends requests over the network")
	remoteName, dir := false, "."
	for _, o := range s.opts {
		switch {
		case o.short == 'o' || o.long == "output" || o.short == 'D' || o.long == "dump-header" || o.short == 'c' ||
			o.long == "cookie-jar" || o.long == "trace" || o.long == "trace-ascii" || o.long == "stderr" || o.long == "libcurl" ||
			o.long == "etag-save":
			if o.val != "-" && o.val != "" {
				j.write(staticArg(o.val), "curl --"+curlName(o))
			}
		case o.short == 'O' || o.long == "remote-name" || o.long == "remote-name-all":
			remoteName = true
		case o.long == "output-dir":
			dir = o.val
		case o.short == 'T' || o.long == "upload-file":
			j.sends("curl -T", o.val)
		case o.short == 'd' || strings.HasPrefix(o.long, "data") || o.long == "json":
			if f, ok := strings.CutPrefix(o.val, "@"); ok {
				j.sends("curl -d @", f)
			}
		case o.short == 'F' || o.long == "form":
			if _, f, ok := strings.Cut(o.val, "=@"); ok {
				f, _, _ = strings.Cut(f, ";")
				j.sends("curl -F", f)
			} else if _, f, ok := strings.Cut(o.val, "=<"); ok {
				j.sends("curl -F", f)
			}
		case o.short == 'K' || o.long == "config":
			j.add(Caution, 4, "curl reads more options from %s", o.val)
		}
	}
	if remoteName {
		j.write(staticArg(dir), "curl -O")
	}
}

func curlName(o option) string {
	if o.long != "" {
		return o.long
	}
	switch o.short {
	case 'o':
		return "output"
	case 'D':
		return "dump-header"
	}
	return "cookie-jar"
}

// sends judges a local file a program uploads.
func (j *judge) sends(how, file string) {
	if file == "-" || file == "" {
		j.add(Caution, 4, "%s sends its input over the network", how)
		return
	}
	switch p := j.place(homeArg(j, file)); p {
	case PlaceWorkspace, PlaceWorkspaceRoot, PlaceTemp, PlaceTempRoot, PlaceDevice:
		j.add(Caution, 4, "%s sends the local file %s over the network", how, file)
	default:
		j.add(Caution, 5, "%s sends %s (the %s) over the network", how, file, p)
	}
}

func judgeWget(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "OoaPeiBtTwQUYlARDXI", long: " output-document output-file append-output directory-prefix execute " +
		"input-file base tries timeout wait quota user-agent level accept reject domains exclude-directories include-directories " +
		"post-data post-file body-data body-file header method user password load-cookies save-cookies referer use-askpass config " +
		"bind-address limit-rate "})
	j.add(Caution, 3, "%s downloads from the network", c.Name)
	out, ok := s.val("-O", "--output-document")
	switch {
	case ok && out != "-":
		j.write(staticArg(out), "wget -O")
	case !ok:
		dir, ok := s.val("-P", "--directory-prefix")
		if !ok {
			dir = "."
		}
		j.write(staticArg(dir), "wget")
	}
	for _, o := range s.opts {
		switch {
		case o.short == 'o' || o.short == 'a' || o.long == "output-file" || o.long == "append-output" || o.long == "save-cookies":
			j.write(staticArg(o.val), "wget --"+o.long)
		case o.long == "post-file" || o.long == "body-file":
			j.sends("wget --"+o.long, o.val)
		case o.short == 'e' || o.long == "execute" || o.long == "config":
			j.add(Caution, 4, "wget runs the settings %s", o.val)
		case o.long == "use-askpass":
			j.add(Caution, 5, "wget --use-askpass runs %s", o.val)
		}
	}
}

// judgeSSH: ssh without a command is a remote shell for a person; with one
// it runs that command on the remote machine, judged as shell code.
func judgeSSH(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "BbcDEeFIiJLlmOopQRSWwM", stop: true})
	for _, o := range s.opts {
		switch o.short {
		case 'o':
			j.sshOption(o.val, "ssh")
		case 'L', 'R', 'D', 'W', 'w':
			j.add(Caution, 4, "ssh -%c forwards connections through the remote machine", o.short)
		}
	}
	if len(s.ops) == 0 {
		j.add(ReadOnly, 0, "ssh without a host prints its usage")
		return
	}
	host, cmd := s.ops[0], s.ops[1:]
	switch {
	case len(cmd) > 0:
		j.add(Caution, 4, "ssh runs a command on the remote machine %s", host.Value)
		j.shell(joinArgs(cmd), allStatic(cmd), "ssh")
	case s.has("-N"):
		j.add(Caution, 4, "ssh -N holds a connection to %s open", host.Value)
	case c.Stdin.HasDoc || c.Stdin.From != nil:
		j.add(Caution, 4, "ssh runs its input as commands on the remote machine %s", host.Value)
		if c.Stdin.HasDoc {
			j.shell(c.Stdin.Doc, c.Stdin.DocStatic, "ssh")
		}
	default:
		j.add(Interactive, 2, "interactive: ssh without a command opens a shell on %s", host.Value)
	}
}

// sshOption judges an ssh -o option: some of them run local commands.
func (j *judge) sshOption(opt, how string) {
	k, v, ok := strings.Cut(opt, "=")
	if !ok {
		k, v, _ = strings.Cut(strings.TrimSpace(opt), " ")
	}
	k, v = strings.TrimSpace(k), strings.TrimSpace(v)
	switch strings.ToLower(k) {
	case "proxycommand", "localcommand", "knownhostscommand", "remotecommand":
		if v != "" && !strings.EqualFold(v, "none") {
			j.add(Caution, 5, "%s -o %s runs %s", how, k, v)
			j.shell(v, true, how+" -o "+k)
		}
	}
}

func judgeNetcat(j *judge, c *Command) {
	if c.Name == "socat" {
		text := strings.ToUpper(c.Text())
		switch {
		case strings.Contains(text, "EXEC:") || strings.Contains(text, "SYSTEM:"):
			j.add(Dangerous, 7, "socat connects a program to the network: a remote shell")
		case strings.Contains(text, "-LISTEN"):
			j.add(Caution, 4, "socat listens for connections")
		default:
			j.add(Caution, 3, "socat relays data over the network")
		}
		return
	}
	s := scan(c.Rest(), flags{short: "ecpsiIOqTVwxXmMbP", long: " exec sh-exec lua-exec source-port proxy proxy-type wait "})
	switch {
	case s.has("-e", "-c", "--exec", "--sh-exec", "--lua-exec"):
		j.add(Dangerous, 7, "%s -e runs a program for whoever connects: a remote shell", c.Name)
	case s.has("-l", "--listen"):
		j.add(Caution, 4, "%s -l listens for connections", c.Name)
	default:
		j.add(Caution, 3, "%s connects over the network", c.Name)
	}
}

// judgeGh: the GitHub CLI reads freely; what it does on GitHub is done
// under the user's account.
func judgeGh(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "RbtlsmpjqHXfFaLSBAw", long: " repo hostname jq template method field raw-field header input " +
		"title body body-file base head label assignee reviewer milestone limit state search json web workflow branch "})
	var group, verb string
	if len(s.ops) > 0 {
		group = s.ops[0].Value
	}
	if len(s.ops) > 1 {
		verb = s.ops[1].Value
	}
	switch {
	case group == "api":
		m, _ := s.val("-X", "--method")
		switch m = strings.ToUpper(m); {
		case m == "DELETE":
			j.add(Caution, 5, "gh api -X DELETE deletes something on GitHub")
		case m == "POST" || m == "PUT" || m == "PATCH" || m == "" && s.has("-f", "-F", "--field", "--raw-field", "--input"):
			j.add(Caution, 4, "gh api changes something on GitHub")
		default:
			j.add(ReadOnly, 1, "gh api reads from GitHub")
		}
	case group == "repo" && verb == "delete" || group == "release" && verb == "delete":
		j.add(Dangerous, 7, "gh %s delete deletes it on GitHub for good", group)
	case verb == "delete" || verb == "delete-asset" || group == "repo" && verb == "archive":
		j.add(Caution, 5, "gh %s %s deletes something on GitHub", group, verb)
	case group == "auth" && verb == "token":
		j.add(Caution, 5, "gh auth token prints the user's GitHub token")
	case group == "run" && verb == "watch" || group == "pr" && verb == "checks" && s.has("--watch"):
		j.add(Interactive, 1, "interactive: gh %s %s follows until it is interrupted", group, verb)
	case verb == "view" || verb == "list" || verb == "status" || verb == "diff" || verb == "checks" || group == "search" ||
		group == "browse" || group == "" || group == "help" || group == "version" || group == "--version":
		j.add(ReadOnly, 1, "gh %s %s reads from GitHub", group, verb)
	case group == "pr" && verb == "checkout" || group == "repo" && verb == "clone":
		j.add(SafeWrite, 2, "gh %s %s fetches into the local repository", group, verb)
	case group == "secret" || group == "variable":
		j.add(Caution, 5, "gh %s %s changes the repository's secrets or variables", group, verb)
	default:
		j.add(Caution, 4, "gh %s %s acts on GitHub under the user's account", group, verb)
	}
}

func judgeRemoteSession(j *judge, c *Command) {
	switch {
	case c.Name == "sftp" && c.Has("-b") || c.Name == "lftp" && (c.Has("-c") || c.Has("-f")):
		j.add(Caution, 4, "%s transfers files with a remote machine", c.Name)
	case c.Name == "mtr" && (c.Has("-r") || c.Has("--report") || c.Has("-w")):
		j.add(ReadOnly, 1, "mtr reports the route to a host")
	case c.Stdin.HasDoc || c.Stdin.From != nil:
		j.add(Caution, 4, "%s talks to a remote machine with commands from its input", c.Name)
	default:
		j.add(Interactive, 2, "interactive: %s opens a session that waits for a person", c.Name)
	}
}

func judgeQuery(j *judge, c *Command) {
	j.add(ReadOnly, 1, "%s queries the network", c.Name)
}

func judgeNetwork(j *judge, c *Command) {
	switch c.Name {
	case "ssh-copy-id":
		j.add(Caution, 5, "ssh-copy-id grants a key access to a remote machine")
	case "ssh-agent":
		j.add(SafeWrite, 2, "ssh-agent starts an agent that holds keys")
	case "ssh-keygen", "ssh-add":
		j.add(Caution, 3, "%s creates, loads or changes SSH keys", c.Name)
	case "nmap":
		j.add(Caution, 4, "nmap scans machines on the network")
	case "open", "xdg-open":
		j.add(Caution, 3, "%s opens the file or address in another application", c.Name)
	default:
		j.add(Caution, 3, "%s sends requests over the network", c.Name)
	}
}

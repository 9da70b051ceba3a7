package policy

import (
	"strings"
)

// toolKnowledge covers the everyday programs: readers, builders and the
// ones that wait for a person at the terminal.
func toolKnowledge(name string) func(*judge, *Command) {
	if k := remoteKnowledge(name); k != nil {
		return k
	}
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
	}
	if readsOnlyItsInput[c.Name] {
		j.add(SafeWrite, 2, "%s builds, checks or formats the project", c.Name)
		return
	}
	j.projectCode("%s builds, tests or checks the project, running the project's own code", c.Name)
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

// readsOnlyItsInput are the build tools that compile, format or check
// their input without running the project's code (no build script, no
// configuration that is a program, no tests).
var readsOnlyItsInput = map[string]bool{
	"gofmt": true, "goimports": true, "rustfmt": true, "clang-format": true, "clang-tidy": true, "black": true,
	"isort": true, "autopep8": true, "yapf": true, "pyupgrade": true, "ruff": true, "flake8": true, "bandit": true,
	"golint": true, "staticcheck": true, "golangci-lint": true, "gcc": true, "g++": true, "cc": true, "c++": true,
	"clang": true, "clang++": true, "ld": true, "as": true, "ar": true, "strip": true, "javac": true, "kotlinc": true,
	"scalac": true, "rustc": true, "swiftc": true, "ghc": true, "erlc": true, "protoc": true, "buf": true, "sqlc": true,
	"templ": true, "tsc": true, "esbuild": true, "swc": true, "doxygen": true, "pandoc": true, "pdflatex": true,
	"xelatex": true, "split": true, "csplit": true, "patch": true, "dos2unix": true, "unix2dos": true, "hugo": true,
	"zola": true, "biome": true, "govulncheck": true,
}

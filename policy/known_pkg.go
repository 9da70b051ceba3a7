package policy

import (
	"strings"
)

// packageKnowledge covers package managers: installing runs the
// packages' install scripts, removing a system package can take the
// system with it.
func packageKnowledge(name string) func(*judge, *Command) {
	switch name {
	case "apt", "apt-get", "aptitude", "dnf", "yum", "microdnf", "zypper", "apk", "snap", "flatpak", "port", "brew", "pkg",
		"dpkg", "rpm", "pacman", "yay", "paru", "nix-env":
		return judgeSystemPackages
	case "apt-cache", "apt-file", "dpkg-query", "rpmquery":
		return judgeReads
	case "pip", "pipx", "uv", "uvx", "poetry", "pipenv", "conda", "mamba", "micromamba":
		return judgePythonPackages
	case "npm", "pnpm", "yarn", "npx", "pnpx", "bunx", "gem", "bundle", "bundler":
		return judgeNodePackages
	case "go":
		return judgeGo
	case "cargo", "rustup":
		return judgeCargo
	}
	if strings.HasPrefix(name, "pip2") || strings.HasPrefix(name, "pip3") {
		return judgePythonPackages
	}
	return nil
}

// pkgKind is what a package manager's verb does.
type pkgKind int

const (
	pkgOther pkgKind = iota
	pkgRead
	pkgInstall
	pkgRemove
	pkgRefresh
	pkgRun
	pkgPublish
)

func judgeSystemPackages(j *judge, c *Command) {
	name := c.Name
	s := scan(c.Rest(), flags{short: "oct", long: " option config target-release root installroot repo enablerepo disablerepo "})
	verb := ""
	if len(s.ops) > 0 {
		verb = s.ops[0].Value
	}
	kind := pkgOther
	switch name {
	case "pacman", "yay", "paru":
		for _, o := range s.opts {
			switch {
			case o.short == 'S' || o.long == "sync" || o.short == 'U' || o.long == "upgrade":
				kind = pkgInstall
			case o.short == 'R' || o.long == "remove":
				kind = pkgRemove
			case o.short == 'Q' || o.long == "query" || o.short == 'F' || o.long == "files":
				kind = pkgRead
			}
		}
		if kind == pkgInstall && s.has("-s", "-i", "-l", "--search", "--info", "--list") {
			kind = pkgRead
		}
	case "dpkg", "rpm", "nix-env":
		switch {
		case s.has("-i", "--install", "-U", "--upgrade", "--unpack", "--configure"):
			kind = pkgInstall
		case s.has("-r", "-P", "-e", "--remove", "--purge", "--erase", "--uninstall"):
			kind = pkgRemove
		default:
			kind = pkgRead
		}
	default:
		switch verb {
		case "install", "in", "i", "reinstall", "upgrade", "full-upgrade", "dist-upgrade", "build-dep", "groupinstall",
			"localinstall", "distro-sync", "downgrade", "dup", "patch", "add", "refresh", "tap", "selfupdate", "fix":
			kind = pkgInstall
		case "update", "up":
			kind = pkgRefresh
			if name == "dnf" || name == "yum" || name == "microdnf" || name == "zypper" || name == "port" {
				kind = pkgInstall
			}
		case "remove", "purge", "autoremove", "autopurge", "erase", "rm", "groupremove", "del", "delete", "uninstall", "untap", "cleanup":
			kind = pkgRemove
		case "list", "ls", "search", "se", "show", "info", "policy", "depends", "rdepends", "changelog", "showsrc", "madison",
			"provides", "what-provides", "repolist", "check-update", "deplist", "repoquery", "history", "find", "deps", "uses",
			"outdated", "config", "doctor", "leaves", "home", "installed", "--version", "--prefix", "":
			kind = pkgRead
		case "clean", "autoclean", "makecache", "download", "source", "cache", "fetch":
			j.add(SafeWrite, 2, "%s %s cleans or fills the package cache", name, verb)
			return
		case "edit-sources":
			j.add(Interactive, 2, "interactive: %s edit-sources opens an editor", name)
			return
		case "run":
			kind = pkgRun
		}
	}
	user := name == "brew" // Homebrew installs for the user, not as root
	switch kind {
	case pkgRead:
		j.add(ReadOnly, 0, "%s only queries packages", name)
	case pkgInstall:
		if user {
			j.reach(Caution, 3, "%s %s installs packages", name, verb)
			return
		}
		j.reach(Caution, 5, "%s installs system packages; their install scripts run as root", name)
	case pkgRemove:
		j.add(Caution, 4, "%s removes packages; programs that need them stop working", name)
	case pkgRefresh:
		j.add(Caution, 3, "%s %s refreshes the package lists", name, verb)
	case pkgRun:
		j.add(Caution, 3, "%s run runs an installed application", name)
	default:
		j.add(Caution, 4, "%s %s changes the system's packages", name, verb)
	}
}

// pipVerb says what a pip verb does.
func pipVerb(verb string) pkgKind {
	switch verb {
	case "install", "download", "wheel", "add", "sync", "lock", "update", "upgrade", "inject", "create", "i":
		return pkgInstall
	case "uninstall", "remove", "rm":
		return pkgRemove
	case "list", "show", "freeze", "check", "help", "debug", "inspect", "index", "hash", "search", "info", "tree", "dir",
		"activate", "deactivate", "env", "--version", "-V", "":
		return pkgRead
	case "run", "exec", "x":
		return pkgRun
	case "publish", "upload":
		return pkgPublish
	}
	return pkgOther
}

// judgePythonPackages: pip and the tools around it (uv, pipx, poetry,
// conda). Their run verbs run the named program, judged as such.
func judgePythonPackages(j *judge, c *Command) {
	name := c.Name
	s := scan(c.Rest(), flags{short: "rceitfCpn", long: " requirement constraint editable target index-url extra-index-url find-links " +
		"prefix root src python log cache-dir proxy timeout retries platform python-version implementation abi " +
		"config-settings global-option upgrade-strategy progress-bar exists-action trusted-host cert client-cert " +
		"no-binary only-binary format report with directory project name prefix file channel ", stop: name == "uvx"})
	ops := s.ops
	if name == "uvx" {
		j.add(SafeWrite, 2, "uvx runs a tool, downloading it when it is missing")
		if len(ops) > 0 {
			j.argv(ops, "uvx")
		}
		return
	}
	verb := ""
	if len(ops) > 0 {
		verb, ops = ops[0].Value, ops[1:]
	}
	if (name == "uv" && (verb == "pip" || verb == "tool")) || (name == "conda" || name == "mamba" || name == "micromamba") && verb == "env" {
		if len(ops) > 0 {
			verb, ops = ops[0].Value, ops[1:]
		}
	}
	switch kind := pipVerb(verb); {
	case kind == pkgInstall:
		switch {
		case asRoot(c):
			j.reach(Dangerous, 7, "%s %s installs packages system-wide as root", name, verb)
		case s.has("--break-system-packages"):
			j.add(Caution, 5, "%s %s --break-system-packages overrides the protection of the system's Python", name, verb)
		default:
			j.reach(Caution, 3, "%s %s installs packages; their build and setup code runs", name, verb)
		}
		if t, ok := s.val("-t", "--target", "--prefix", "--root"); ok {
			j.write(staticArg(t), name+" --target")
		}
	case kind == pkgRemove:
		if asRoot(c) {
			j.add(Dangerous, 7, "%s %s removes system-wide packages as root", name, verb)
			return
		}
		j.add(Caution, 4, "%s %s removes packages", name, verb)
	case kind == pkgRead:
		j.add(ReadOnly, 0, "%s %s only reports", name, verb)
	case kind == pkgRun:
		j.add(SafeWrite, 2, "%s %s runs a program in the project's environment", name, verb)
		if len(ops) > 0 && strings.HasSuffix(ops[0].Value, ".py") {
			ops = append([]Arg{staticArg("python")}, ops...)
		}
		if len(ops) > 0 {
			j.argv(ops, name+" "+verb)
		}
	case kind == pkgPublish:
		j.reach(Caution, 5, "%s %s publishes to a package index under the user's account", name, verb)
	case verb == "build" || verb == "venv" || verb == "init" || verb == "new" || verb == "python" || verb == "cache" || verb == "clean" || verb == "fmt" || verb == "format":
		j.add(SafeWrite, 2, "%s %s builds or sets up the project", name, verb)
	case verb == "shell":
		j.add(Interactive, 2, "interactive: %s shell starts a shell", name)
	default:
		j.add(Caution, 3, "%s %s is a subcommand forgebox does not know", name, verb)
	}
}

// npmVerb says what an npm, pnpm, yarn or gem verb does.
func npmVerb(verb string) pkgKind {
	switch verb {
	case "install", "i", "in", "ins", "inst", "insta", "instal", "isnt", "isntal", "add", "ci", "clean-install", "install-test",
		"it", "install-ci-test", "update", "up", "upgrade", "udpate", "link", "ln", "rebuild", "rb", "dedupe", "ddp", "prune",
		"import", "fetch", "create", "innit", "lock", "cache", "package", "cleanup":
		return pkgInstall
	case "uninstall", "un", "unlink", "remove", "rm", "r":
		return pkgRemove
	case "test", "t", "tst", "run", "run-script", "rum", "urn", "start", "stop", "restart", "build", "node", "version", "pack", "binstubs", "dev", "lint":
		return pkgRun
	case "exec", "x", "dlx":
		return pkgOther
	case "publish", "unpublish", "deprecate", "dist-tag", "owner", "access", "team", "org", "token", "adduser", "login",
		"logout", "star", "hook", "profile", "push", "yank", "signin", "signout":
		return pkgPublish
	case "ls", "list", "la", "ll", "view", "v", "info", "show", "outdated", "search", "s", "se", "find", "get", "help",
		"docs", "repo", "bugs", "root", "prefix", "bin", "whoami", "ping", "doctor", "explain", "why", "query", "fund", "audit",
		"sbom", "diff", "check", "versions", "contents", "specification", "env", "which", "platform", "query-args", "":
		return pkgRead
	}
	return -1
}

// judgeNodePackages: npm, pnpm, yarn and npx, and Ruby's gem and bundle,
// which work the same way.
func judgeNodePackages(j *judge, c *Command) {
	name := c.Name
	s := scan(c.Rest(), flags{short: "wpcC", long: " prefix workspace registry tag otp access cache userconfig globalconfig loglevel " +
		"location omit include install-strategy before script-shell package call filter dir ", stop: name == "npx" || name == "pnpx" || name == "bunx"})
	global := s.has("-g", "--global") || s.has("--location") && strings.Contains(c.Text(), "global")
	ops := s.ops
	if name == "npx" || name == "pnpx" || name == "bunx" {
		j.add(SafeWrite, 2, "%s runs a package's program, downloading it when it is missing", name)
		if code, ok := s.val("-c", "--call"); ok {
			j.shell(code, true, name+" -c")
		}
		if len(ops) > 0 {
			j.argv(ops, name)
		}
		return
	}
	verb := ""
	if len(ops) > 0 {
		verb, ops = ops[0].Value, ops[1:]
	}
	if name == "yarn" && verb == "global" {
		global = true
		if len(ops) > 0 {
			verb, ops = ops[0].Value, ops[1:]
		}
	}
	if (name == "yarn" || name == "bundle" || name == "bundler") && verb == "" {
		verb = "install"
	}
	if verb == "config" || verb == "c" {
		if len(ops) > 0 && (ops[0].Value == "get" || ops[0].Value == "list" || ops[0].Value == "ls") {
			j.add(ReadOnly, 0, "%s config only reports", name)
			return
		}
		j.add(Caution, 3, "%s config changes the package manager's settings", name)
		return
	}
	switch kind := npmVerb(verb); {
	case kind == pkgInstall:
		switch {
		case asRoot(c):
			j.reach(Dangerous, 7, "%s %s installs packages system-wide as root", name, verb)
		case global:
			j.reach(Caution, 4, "%s %s -g installs packages for the whole user account", name, verb)
		default:
			j.reach(Caution, 3, "%s %s installs packages; their install scripts run", name, verb)
		}
	case kind == pkgRemove:
		switch {
		case global || asRoot(c):
			j.reach(Dangerous, 6, "%s %s -g removes a globally installed package", name, verb)
			return
		case name == "gem":
			j.reach(Caution, 4, "gem %s removes an installed gem", verb)
			return
		}
		j.add(Caution, 3, "%s %s removes packages from the project", name, verb)
	case kind == pkgRun:
		j.projectCode("%s %s runs the project's script", name, verb)
	case kind == pkgPublish:
		j.reach(Caution, 5, "%s %s acts on the package registry under the user's account", name, verb)
	case kind == pkgRead:
		if verb == "audit" && len(ops) > 0 && ops[0].Value == "fix" {
			j.reach(Caution, 3, "%s audit fix installs updated packages", name)
			return
		}
		j.add(ReadOnly, 0, "%s %s only reports", name, verb)
	case verb == "exec" || verb == "x" || verb == "dlx":
		j.projectCode("%s %s runs a package's program", name, verb)
		if len(ops) > 0 {
			j.argv(ops, name+" "+verb)
		}
	case name == "yarn" || name == "pnpm":
		j.projectCode("%s %s runs the project's script", name, verb) // yarn build is yarn run build
	case name == "bundle" || name == "bundler":
		j.add(Caution, 3, "bundle %s is a subcommand forgebox does not know", verb)
	default:
		j.add(Caution, 3, "%s %s is a subcommand forgebox does not know", name, verb)
	}
}

// goValues are the go command's flags that take a value.
const goValues = " o C p ldflags gcflags asmflags gccgoflags tags mod modfile pkgdir toolexec exec overlay pgo installsuffix " +
	"buildmode compiler covermode coverpkg coverprofile cpuprofile memprofile blockprofile mutexprofile trace outputdir " +
	"run skip bench benchtime count cpu parallel timeout list fuzz fuzztime fuzzminimizetime shuffle vet "

// judgeGo: building and testing the workspace is the agent's daily work;
// fetching code from elsewhere is asked about.
func judgeGo(j *judge, c *Command) {
	var ops []Arg
	var opts []option
	args := c.Rest()
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		if !args[i].Static || !strings.HasPrefix(v, "-") || len(v) < 2 {
			ops = append(ops, args[i])
			continue
		}
		name, val, has := strings.Cut(strings.TrimLeft(v, "-"), "=")
		if !has && strings.Contains(goValues, " "+name+" ") && i+1 < len(args) {
			i++
			val = args[i].Value
		}
		opts = append(opts, option{long: name, val: val})
	}
	s := scanned{opts: opts, ops: ops, dd: -1}
	verb := ""
	if len(ops) > 0 {
		verb, ops = ops[0].Value, ops[1:]
	}
	remote := false
	for _, a := range ops {
		remote = remote || strings.Contains(a.Value, "@")
	}
	if out, ok := s.val("--o"); ok && (verb == "build" || verb == "test") {
		j.write(staticArg(out), "go "+verb+" -o")
	}
	if x, ok := s.val("--exec", "--toolexec"); ok {
		j.add(Caution, 4, "go %s runs the programs it builds through %s", verb, x)
	}
	switch verb {
	case "build", "vet", "fmt", "fix", "tool", "work", "clean", "telemetry":
		j.add(SafeWrite, 2, "go %s builds, checks or formats the packages", verb)
	case "mod":
		j.add(SafeWrite, 2, "go mod manages the module's dependencies")
	case "test":
		j.projectCode("go test builds and runs the tests")
	case "run":
		if remote {
			j.reach(Caution, 3, "go run downloads and runs %s", ops[0].Value)
			return
		}
		j.projectCode("go run builds and runs the program")
	case "install", "get":
		j.reach(Caution, 3, "go %s downloads or installs modules", verb)
	case "generate":
		j.projectCode("go generate runs the commands in //go:generate comments")
	case "env":
		if s.has("--w", "--u") {
			j.add(Caution, 3, "go env -w changes the user's Go environment")
			return
		}
		j.add(ReadOnly, 0, "go env prints the Go environment")
	case "list", "doc", "version", "help", "":
		j.add(ReadOnly, 0, "go %s only reports", verb)
	default:
		j.add(Caution, 3, "go %s is a subcommand forgebox does not know", verb)
	}
}

func judgeCargo(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "pjFZ", long: " package jobs features target target-dir manifest-path config color profile bin example test bench message-format ", stop: true})
	ops := s.ops
	if len(ops) > 0 && strings.HasPrefix(ops[0].Value, "+") {
		ops = ops[1:] // cargo +nightly build
	}
	verb := ""
	if len(ops) > 0 {
		verb = ops[0].Value
	}
	if c.Name == "rustup" {
		switch verb {
		case "show", "which", "doc", "check", "--version", "-V", "help", "":
			j.add(ReadOnly, 0, "rustup %s only reports", verb)
		case "run":
			j.add(SafeWrite, 2, "rustup run runs a toolchain's program")
			if len(ops) > 2 {
				j.argv(ops[2:], "rustup run")
			}
		default:
			j.reach(Caution, 3, "rustup %s installs or changes toolchains", verb)
		}
		return
	}
	switch verb {
	case "build", "b", "check", "c", "test", "t", "run", "r", "bench", "clippy", "doc", "d", "package", "fix", "nextest":
		// Build scripts (build.rs) and procedural macros run at build time.
		j.projectCode("cargo %s builds and runs the project's code", verb)
	case "fmt", "clean", "new", "init", "update", "fetch", "generate-lockfile", "vendor", "add", "remove", "rm":
		j.add(SafeWrite, 2, "cargo %s builds, checks or manages the project", verb)
	case "tree", "metadata", "locate-project", "read-manifest", "verify-project", "pkgid", "search", "version", "help", "":
		j.add(ReadOnly, 0, "cargo %s only reports", verb)
	case "install", "uninstall", "binstall":
		j.reach(Caution, 3, "cargo %s installs or removes a binary for the user", verb)
	case "publish", "yank", "owner", "login", "logout":
		j.add(Caution, 5, "cargo %s acts on crates.io under the user's account", verb)
	default:
		j.add(Caution, 3, "cargo %s runs a plugin forgebox does not know", verb)
	}
}

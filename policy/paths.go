package policy

import (
	"path"
	"strings"

	"github.com/forgebox/forgebox/pathtree"
)

// Context is what the judge knows of the place a command runs in. All
// paths are absolute and clean; empty ones are unknown.
type Context struct {
	// Workspace is the directory the command may change freely.
	Workspace string
	// Cwd is where the command starts; relative paths resolve against it.
	Cwd  string
	Home string
	// TempDirs are directories whose contents are scratch (/tmp, $TMPDIR).
	TempDirs []string
	// Session holds the approvals given for this session.
	Session []Rule
	// Sandbox is what the command's sandbox lets it reach. The zero value
	// is a command nothing contains (the Claude Code hook without --wrap):
	// then what reaches out is judged as such.
	Sandbox Containment

	// lost is set once a cd on the line went somewhere the judge cannot
	// tell ($DIR, -): relative paths after it point nowhere known.
	lost bool
}

// Containment is what the judge knows of the sandbox a command runs in.
type Containment struct {
	// Contained: the command can change nothing but the workspace and
	// the sandbox's private directories, and reach no network beyond its
	// own loopback; every layer is enforced. What only reaches out (an
	// unknown program, a download, a push) then has nowhere to go.
	Contained bool `json:"contained"`
	// How says, for the reasons, what contains the command or what lets
	// it reach out ("the default sandbox", "--net host", "--rw /srv").
	How string `json:"how"`
	// PrivateTmp: /tmp is the run's own, empty at its start, and holds
	// neither the workspace nor a --rw path: what a command removes there
	// no other program sees.
	PrivateTmp bool `json:"private_tmp"`
	// Undo: the run keeps every change to the workspace undoable
	// (forgebox undo); see policy/undo.go.
	Undo bool `json:"undo,omitempty"`
}

// Place says where a path points, as far as text can tell.
type Place int

// Places, roughly from harmless to catastrophic.
const (
	PlaceUnknown       Place = iota // computed at run time
	PlaceDevice                     // /dev/null, /dev/stdout, /dev/tty, /dev/fd/N
	PlaceWorkspace                  // inside the workspace
	PlaceTemp                       // inside a temporary directory
	PlaceWorkspaceRoot              // the workspace itself
	PlaceGitDir                     // a repository's .git (its history)
	PlaceTempRoot                   // a temporary directory itself
	PlaceOutside                    // elsewhere: another project, a mount
	PlaceHome                       // in the home directory, outside the workspace
	PlaceGitHooks                   // .git/hooks: code git runs
	PlaceStartup                    // shell startup files, authorized_keys, .gitconfig
	PlaceSystem                     // under /usr, /etc, /var, ...
	PlaceHomeRoot                   // the home directory itself
	PlaceSystemRoot                 // /usr, /etc, ... themselves
	PlaceDisk                       // a block device or memory: /dev/sda, /dev/mem
	PlaceRoot                       // /
)

var placeNames = [...]string{"unknown", "device", "workspace", "temp", "workspace root", "git dir",
	"temp root", "outside", "home", "git hooks", "startup file", "system", "home root", "system root", "disk", "root"}

func (p Place) String() string {
	if int(p) < len(placeNames) {
		return placeNames[p]
	}
	return "place?"
}

// systemDirs are the top-level directories of the operating system.
var systemDirs = map[string]bool{
	"bin": true, "boot": true, "dev": true, "etc": true, "lib": true, "lib32": true, "lib64": true,
	"libx32": true, "opt": true, "proc": true, "root": true, "run": true, "sbin": true, "srv": true,
	"sys": true, "usr": true, "var": true, "snap": true, "nix": true, "home": true, "mnt": true, "media": true,
	"Applications": true, "Library": true, "System": true, "Users": true, "private": true, "Volumes": true,
}

// startupFiles are files under the home directory that run code or grant
// access the next time the user logs in, opens a shell or runs git.
var startupFiles = map[string]bool{
	".bashrc": true, ".bash_profile": true, ".bash_login": true, ".bash_logout": true, ".profile": true,
	".zshrc": true, ".zprofile": true, ".zshenv": true, ".zlogin": true, ".kshrc": true, ".cshrc": true,
	".tcshrc": true, ".xprofile": true, ".xinitrc": true, ".config/fish/config.fish": true,
	".ssh/authorized_keys": true, ".ssh/authorized_keys2": true, ".ssh/config": true, ".ssh/rc": true,
	".gitconfig": true, ".config/git/config": true, ".npmrc": true, ".pypirc": true,
	".config/autostart": true, ".local/bin": true, ".bash_aliases": true,
}

// Abs resolves a path the way the command would see it: relative to the
// working directory, ".." and "." folded.
func (ctx *Context) Abs(p string) string {
	if !strings.HasPrefix(p, "/") {
		base := ctx.Cwd
		if base == "" {
			base = ctx.Workspace
		}
		if base == "" {
			return path.Clean(p)
		}
		p = base + "/" + p
	}
	return path.Clean(p)
}

// PlaceOf says where a word points. A dynamic word is PlaceUnknown; a glob
// is judged by the directory it expands in (rm -rf /* is rm -rf / for the
// judge).
func (ctx *Context) PlaceOf(a Arg) Place {
	if !a.Static || ctx.lost && !strings.HasPrefix(a.Value, "/") && !strings.HasPrefix(a.Value, "~") {
		return PlaceUnknown
	}
	v := a.Value
	if a.Glob {
		if i := strings.IndexAny(v, "*?["); i >= 0 {
			v = v[:i]
			if j := strings.LastIndexByte(v, '/'); j >= 0 {
				v = v[:j+1]
			} else {
				v = "."
			}
			if v == "" {
				v = "/"
			}
		}
	}
	if v == "" {
		return PlaceUnknown
	}
	return ctx.Place(v)
}

// Place says where a path points.
func (ctx *Context) Place(p string) Place {
	if strings.HasPrefix(p, "~") {
		// The parser expands ~ when the home directory is known; a tilde
		// left here is ~user (another user's home) or a home forgebox was
		// not told: never the workspace.
		rest, ok := strings.CutPrefix(p, "~/")
		if !ok { // ~user or ~user/...
			_, rest, _ = strings.Cut(p, "/")
		}
		switch {
		case strings.Trim(rest, "/") == "":
			return PlaceHomeRoot
		case startup(strings.TrimSuffix(rest, "/")):
			return PlaceStartup
		}
		return PlaceHome
	}
	a := ctx.Abs(p)
	switch {
	case a == "/":
		return PlaceRoot
	case strings.HasPrefix(a, "/dev/") || strings.HasPrefix(a, "/proc/self/fd/"):
		return devicePlace(a)
	}
	if rel, ok := under(a, ctx.Home); ok && rel != "" && startup(rel) {
		return PlaceStartup
	}
	if strings.HasPrefix(a, "/etc/profile") || strings.HasPrefix(a, "/etc/bash") || strings.HasPrefix(a, "/etc/zsh") ||
		strings.HasPrefix(a, "/etc/sudoers") || strings.HasPrefix(a, "/etc/cron") || strings.HasPrefix(a, "/etc/ld.so.preload") {
		return PlaceStartup
	}
	if strings.Contains(a+"/", "/.git/hooks/") {
		return PlaceGitHooks
	}
	if ctx.Workspace != "" && ctx.Workspace != "/" && ctx.Workspace != ctx.Home {
		if rel, ok := under(a, ctx.Workspace); ok {
			switch {
			case rel == "":
				return PlaceWorkspaceRoot
			case rel == ".git" || strings.HasPrefix(rel, ".git/"):
				return PlaceGitDir
			}
			return PlaceWorkspace
		}
	}
	// The home directory before the temporary ones: a home that lies in
	// /tmp (a CI runner's, a container's) is still the user's.
	if rel, ok := under(a, ctx.Home); ok && ctx.Home != "/" {
		if rel == "" {
			return PlaceHomeRoot
		}
		return PlaceHome
	}
	for _, t := range ctx.tempDirs() {
		if rel, ok := under(a, t); ok {
			if rel == "" {
				return PlaceTempRoot
			}
			return PlaceTemp
		}
	}
	top := strings.TrimPrefix(a, "/")
	rest := ""
	if i := strings.IndexByte(top, '/'); i >= 0 {
		top, rest = top[:i], top[i+1:]
	}
	if systemDirs[top] {
		if rest == "" || top == "home" && !strings.Contains(rest, "/") || top == "Users" && !strings.Contains(rest, "/") {
			return PlaceSystemRoot
		}
		return PlaceSystem
	}
	return PlaceOutside
}

func (ctx *Context) tempDirs() []string {
	if len(ctx.TempDirs) > 0 {
		return ctx.TempDirs
	}
	return []string{"/tmp", "/var/tmp"}
}

func startup(rel string) bool {
	for f := range startupFiles {
		if pathtree.Within(rel, f) {
			return true
		}
	}
	return false
}

// under reports whether a is dir or inside it, and the rest of the path
// below dir ("" for dir itself).
func under(a, dir string) (string, bool) {
	if !pathtree.Within(a, dir) {
		return "", false
	}
	a, dir = path.Clean(a), path.Clean(dir)
	return strings.TrimPrefix(a[len(dir):], "/"), true
}

func devicePlace(a string) Place {
	name := strings.TrimPrefix(a, "/dev/")
	switch {
	case name == "null" || name == "zero" || name == "full" || name == "stdin" || name == "stdout" ||
		name == "stderr" || name == "tty" || name == "random" || name == "urandom" ||
		strings.HasPrefix(name, "fd/") || strings.HasPrefix(name, "pts/") || strings.HasPrefix(a, "/proc/self/fd/"):
		return PlaceDevice
	case name == "shm" || strings.HasPrefix(name, "shm/"):
		return PlaceTemp
	}
	for _, d := range []string{"sd", "hd", "vd", "xvd", "nvme", "mmcblk", "dm-", "md", "loop", "sr", "disk", "mapper",
		"mem", "kmem", "port", "nbd", "rbd", "zd", "bcache", "ram", "mtd", "root"} {
		if strings.HasPrefix(name, d) {
			return PlaceDisk
		}
	}
	return PlaceSystem
}

// chdir returns the context after cd ARGS or pushd ARGS.
func (ctx *Context) chdir(c *Command) *Context {
	next := *ctx
	for i, a := range c.Rest() {
		if c.Name == "pushd" && a.Value == "-n" {
			return ctx // pushd -n only adds to the stack
		}
		if a.Static && (a.Value == "-L" || a.Value == "-P" || a.Value == "-e" || a.Value == "-@" || a.Value == "--") {
			continue
		}
		if c.Name == "pushd" && len(a.Value) > 1 && (a.Value[0] == '+' || a.Value[0] == '-') && isNumber(a.Value[1:]) {
			next.lost = true // pushd +N turns the stack: forgebox does not follow it
			return &next
		}
		return ctx.chdirTo(c.Rest()[i])
	}
	if ctx.Home != "" && c.Name == "cd" {
		next.Cwd, next.lost = ctx.Home, false
	} else {
		next.lost = true
	}
	return &next
}

// chdirTo returns the context in dir: after cd DIR, env -C DIR, git -C
// DIR. A directory the judge cannot tell (computed, a pattern, cd -, a
// relative one after such) leaves relative paths pointing nowhere known.
func (ctx *Context) chdirTo(dir Arg) *Context {
	next := *ctx
	switch {
	case !dir.Static || dir.Glob || dir.Value == "" || dir.Value == "-" || strings.HasPrefix(dir.Value, "~") ||
		!strings.HasPrefix(dir.Value, "/") && ctx.lost:
		next.lost = true
	default:
		next.Cwd, next.lost = ctx.Abs(dir.Value), false
	}
	return &next
}

package sandbox

import (
	"slices"
	"strings"

	"github.com/forgebox/forgebox/pathtree"
)

// Limits on what a command line may carry, below the kernel's own
// (MAX_ARG_STRLEN is 128 KiB per string; the total is bounded by the stack).
const (
	maxArgLen   = MaxArgLen
	maxArgTotal = 1 << 20
)

// systemDirs may never be the workspace.
var systemDirs = []string{
	"/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/media",
	"/mnt", "/opt", "/proc", "/root", "/run", "/sbin", "/snap", "/srv", "/sys", "/tmp", "/usr",
	"/usr/local", "/var", "/var/lib", "/var/tmp", "/var/log", "/nix", "/gnu",
}

// systemTrees may not contain the workspace either.
var systemTrees = []string{"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/run", "/sbin", "/sys", "/usr"}

// commandArgv returns the argv to execute and the program to fall back to
// when the first is not found (sh, for the -c form without --shell).
// MaxArgLen is the longest argument, and so the longest -c command line,
// a run takes: the kernel's limit on one string passed to exec
// (MAX_ARG_STRLEN, 128 KiB with its NUL). The command line reaches the
// shell as one argument, so no surface can pass a longer one.
const MaxArgLen = 128<<10 - 1

func commandArgv(s Spec) (argv []string, alt string, err error) {
	switch {
	case len(s.Argv) > 0 && s.Command != "":
		return nil, "", invalidf("give either a program with arguments or -c, not both")
	case len(s.Argv) == 0 && s.Command == "":
		return nil, "", invalidf("no command given")
	case len(s.Argv) > 0:
		if s.Argv[0] == "" {
			return nil, "", invalidf("empty program name")
		}
		argv = s.Argv
	default:
		if strings.TrimSpace(s.Command) == "" {
			return nil, "", invalidf("empty command line")
		}
		shell := s.Shell
		if shell == "" {
			shell, alt = "bash", "sh"
		}
		argv = []string{shell, "-c", s.Command}
	}
	total := 0
	for i, a := range argv {
		if strings.IndexByte(a, 0) >= 0 {
			return nil, "", invalidf("argument %d contains a NUL byte", i)
		}
		if len(a) > maxArgLen {
			return nil, "", invalidf("argument %d is %d bytes long, over the %d byte limit", i, len(a), maxArgLen)
		}
		total += len(a) + 1
	}
	if total > maxArgTotal {
		return nil, "", invalidf("arguments total %d bytes, over the %d byte limit", total, maxArgTotal)
	}
	return argv, alt, nil
}

// checkWorkspace refuses directories that would make the sandbox pointless
// or dangerous to write: the root, a home directory or what contains one, a
// system directory, or a place inside a hidden secret location.
func checkWorkspace(ws string, homes, secrets []string) error {
	return checkWritableRoot(ws, "workspace", "choose a project directory with --workspace (for example ~/src/myproject)", homes, secrets)
}

// checkWritable applies the same refusals to an extra --rw path: a home
// directory made writable would let the command plant what runs at the
// next login (~/.bashrc, ~/.config/systemd/user, ~/.local/bin).
func checkWritable(p string, homes, secrets []string) error {
	return checkWritableRoot(p, "--rw", "grant the specific directories the command must write (for example ~/src/shared-lib; package caches are private to each run already)", homes, secrets)
}

func checkWritableRoot(ws, what, advice string, homes, secrets []string) error {
	if slices.Contains(systemDirs, ws) {
		return invalidf("refusing %s %s: it is a system directory; %s", what, ws, advice)
	}
	for _, t := range systemTrees {
		if pathtree.Beneath(ws, t) {
			return invalidf("refusing %s %s: it is inside the system directory %s; %s", what, ws, t, advice)
		}
	}
	for _, h := range homes {
		if pathtree.Within(h, ws) {
			return invalidf("refusing %s %s: it is (or contains) the home directory %s; %s", what, ws, h, advice)
		}
	}
	for _, s := range secrets {
		if pathtree.Within(ws, s) {
			return invalidf("refusing %s %s: it is inside %s, which forgebox hides as a secret location; %s", what, ws, s, advice)
		}
	}
	return nil
}

// startDir is where the command starts: the caller's directory when the
// command can see and write it as the caller expects, else the workspace.
func startDir(dir, ws string) string {
	if pathtree.Within(dir, ws) {
		return dir
	}
	return ws
}

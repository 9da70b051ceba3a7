package selftest

import (
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/forgebox/forgebox/probe"
	"github.com/forgebox/forgebox/sandbox"
)

// target is the bait selftest planted on the host, as the probe addresses
// it. Names are relative to root, so that the evidence reads the same on
// every host.
type target struct {
	root, ws   string // the bait directory, and the probe's workspace in it
	token      string // the secret's content
	tcp        string // a listener on the host's loopback, HOST:PORT
	abstract   string // an abstract Unix socket's name, without "@"
	hostPID    int    // a process of the caller's, outside the sandbox
	setuid     string // a setuid-root program, "" when the host has none
	setuidArgs []string
	proxy      bool // the sandbox's network is the allowlist proxy (--net allow)
}

// Bait names, below target.root.
const (
	baitWorkspace  = "ws"
	baitOutside    = "outside"
	baitSecretFile = "secret.txt"
	baitSecretDir  = "secrets"
	baitSocket     = "s"
	// baitHome is the probe's home: the credential table applies there.
	baitHome = "home"
)

func (t target) path(rel string) string { return filepath.Join(t.root, rel) }

// attempt is one operation of the probe, how the evidence names it, and
// how to tell from its verdict whether it got through.
type attempt struct {
	op     []string
	show   string
	expect expectation
}

// effect is what an attempt achieved, as its expectation reads the
// verdict.
type effect int

const (
	stopped    effect = iota
	gotThrough        // the attack worked
	unclear           // the verdict does not say (the probe could not observe)
)

// expectation reads a verdict: the attempt's effect, and a note for the
// evidence.
type expectation func(v probe.Verdict) (effect, string)

// refused: the operation must fail.
func refused(v probe.Verdict) (effect, string) {
	if v.OK {
		return gotThrough, ""
	}
	return stopped, ""
}

// setup: an operation that prepares the next ones; the host check judges.
func setup(probe.Verdict) (effect, string) { return stopped, "" }

// privateCopy: a write that may succeed, into the run's private copy of
// the file (the workspace repository's Git config); the host check judges
// whether anything of it reached the host.
func privateCopy(v probe.Verdict) (effect, string) {
	if v.OK {
		return stopped, "into its private copy"
	}
	return stopped, ""
}

// noSecret: reading may succeed (a hidden file reads empty) but must not
// yield the secret, nor the names in a hidden directory.
func noSecret(token string) expectation {
	return func(v probe.Verdict) (effect, string) {
		switch {
		case !v.OK:
			return stopped, ""
		case strings.Contains(v.Out, token) || (v.Op == "readdir" && v.Out != ""):
			return gotThrough, "READ THE SECRET"
		}
		return stopped, "empty"
	}
}

// noGain: a program must run with the caller's credentials, whatever its
// setuid bit says (the probe's exec-creds output).
func noGain(v probe.Verdict) (effect, string) {
	switch {
	case !v.OK && v.Errno == "ETIMEDOUT":
		return unclear, "the program never settled"
	case !v.OK:
		return stopped, ""
	}
	gained, ids, ok := credsGained(v.Out)
	switch {
	case !ok:
		return unclear, "unreadable credentials " + strconv.Quote(v.Out)
	case gained:
		return gotThrough, "GAINED " + ids
	}
	return stopped, "ran as " + ids
}

// credsGained parses "caller=UID uid=R,E,S,FS ... cap_prm=HEX cap_eff=HEX"
// and says whether the program ran with more than the caller had; ok is
// false when the text is not that.
func credsGained(out string) (gained bool, ids string, ok bool) {
	f := map[string]string{}
	for _, kv := range strings.Fields(out) {
		if k, v, found := strings.Cut(kv, "="); found {
			f[k] = v
		}
	}
	uids := strings.Split(f["uid"], ",")
	prm, perr := strconv.ParseUint(f["cap_prm"], 16, 64)
	eff, eerr := strconv.ParseUint(f["cap_eff"], 16, 64)
	if f["caller"] == "" || len(uids) != 4 || perr != nil || eerr != nil {
		return false, "", false
	}
	for _, u := range uids {
		gained = gained || u != f["caller"]
	}
	caps := "no capabilities"
	if prm != 0 || eff != 0 {
		gained, caps = true, "capabilities "+f["cap_eff"]
	}
	return gained, fmt.Sprintf("uid %s with %s", f["uid"], caps), true
}

// plan lists the attacks of the main run, class by class, in the order
// the probe makes them: what could change the probe itself (a new user
// namespace) comes last.
func plan(t target) map[string][]attempt {
	out, ws := baitOutside+"/", baitWorkspace+"/"
	p := map[string][]attempt{
		classSecret: {
			{[]string{"read", t.path(baitSecretFile)}, "read " + baitSecretFile, noSecret(t.token)},
			{[]string{"read", t.path(baitSecretDir + "/id_selftest")}, "read " + baitSecretDir + "/id_selftest", noSecret(t.token)},
			{[]string{"readdir", t.path(baitSecretDir)}, "list " + baitSecretDir + "/", noSecret(t.token)},
			{[]string{"read", t.path(baitHome + "/.pgpass")}, "read ~/.pgpass", noSecret(t.token)},
			{[]string{"read", t.path(baitHome + "/.config/rclone/rclone.conf")}, "read ~/.config/rclone/rclone.conf", noSecret(t.token)},
			{[]string{"read", t.path(baitHome + "/.claude/.credentials.json")}, "read ~/.claude/.credentials.json", noSecret(t.token)},
		},
		classHostWrite: {
			{[]string{"write", t.path(out + "file.txt"), "pwned"}, "write " + out + "file.txt", refused},
			{[]string{"append", t.path(out + "file.txt"), "pwned"}, "append to " + out + "file.txt", refused},
			{[]string{"write", t.path(out + "new.txt"), "pwned"}, "create " + out + "new.txt", refused},
			{[]string{"unlink", t.path(out + "file.txt")}, "delete " + out + "file.txt", refused},
			{[]string{"symlink", t.path(out + "file.txt"), t.path(ws + "link")}, "symlink " + ws + "link to " + out + "file.txt", setup},
			{[]string{"write", t.path(ws + "link"), "pwned"}, "write through " + ws + "link", refused},
		},
		classHostChmod: {
			{[]string{"chmod", t.path(out + "mode.txt"), "777"}, "chmod 777 " + out + "mode.txt", refused},
			{[]string{"utime", t.path(out + "mode.txt")}, "touch " + out + "mode.txt", refused},
			{[]string{"setxattr", t.path(out + "mode.txt")}, "setxattr " + out + "mode.txt", refused},
		},
		classProtected: {
			{[]string{"write", t.path(ws + ".git/hooks/pre-commit"), "pwned"}, "write " + ws + ".git/hooks/pre-commit", refused},
			{[]string{"write", t.path(ws + ".git/hooks/post-checkout"), "pwned"}, "create " + ws + ".git/hooks/post-checkout", refused},
			{[]string{"append", t.path(ws + ".git/config"), "[core]\n\tfsmonitor = pwned\n"}, "append to " + ws + ".git/config", privateCopy},
			{[]string{"rename", t.path(ws + ".git"), t.path(ws + ".git-moved")}, "rename " + ws + ".git", refused},
			{[]string{"append", t.path(ws + ".bashrc"), "pwned"}, "append to " + ws + ".bashrc", refused},
			{[]string{"write", t.path(ws + ".vscode/tasks.json"), "pwned"}, "create " + ws + ".vscode/tasks.json", refused},
			{[]string{"write", t.path(ws + ".envrc"), "pwned"}, "create " + ws + ".envrc", setup},
			// A nested repository, reached by renaming its parent and
			// putting a copy in its place; a repository made from
			// nothing; protected names below the root. The host check
			// judges what is left after the run (baitPlanted).
			{[]string{"rename", t.path(ws + "lib"), t.path(ws + "lib-moved")}, "rename " + ws + "lib, which holds a repository", setup},
			{[]string{"mkdir", t.path(ws + "lib")}, "make " + ws + "lib again", setup},
			{[]string{"mkdir", t.path(ws + "lib/inner")}, "make " + ws + "lib/inner", setup},
			{[]string{"mkdir", t.path(ws + "lib/inner/.git")}, "make " + ws + "lib/inner/.git", setup},
			{[]string{"write", t.path(ws + "lib/inner/.git/HEAD"), "ref: refs/heads/main\n"}, "write its HEAD", setup},
			{[]string{"mkdir", t.path(ws + "lib/inner/.git/hooks")}, "make its hooks/", setup},
			{[]string{"write", t.path(ws + "lib/inner/.git/hooks/pre-commit"), "#!/bin/sh\npwned\n"}, "plant " + ws + "lib/inner/.git/hooks/pre-commit", setup},
			{[]string{"write", t.path(ws + "lib/inner/.git/config"), "[core]\n\tfsmonitor = pwned\n"}, "plant core.fsmonitor in " + ws + "lib/inner/.git/config", setup},
			{[]string{"mkdir", t.path(ws + "lib-moved/sub")}, "make " + ws + "lib-moved/sub", setup},
			{[]string{"write", t.path(ws + "lib-moved/sub/.envrc"), "pwned"}, "create " + ws + "lib-moved/sub/.envrc", setup},
			{[]string{"mkdir", t.path(ws + "lib-moved/.vscode")}, "create " + ws + "lib-moved/.vscode/", setup},
			{[]string{"write", t.path(ws + "lib-moved/.vscode/tasks.json"), "pwned"}, "create " + ws + "lib-moved/.vscode/tasks.json", setup},
		},
		classUnixSocket: {
			{[]string{"connect-unix", t.path(baitSocket)}, "connect to the bait's pathname socket", refused},
		},
		classAbstractSocket: {
			{[]string{"connect-abstract", t.abstract}, "connect to @" + t.abstract, refused},
		},
		classNetwork: {
			{[]string{"connect-tcp", t.tcp}, "connect to " + t.tcp, refused},
		},
		classSeeProcess: {
			{[]string{"kill", strconv.Itoa(t.hostPID), "0"}, fmt.Sprintf("kill -0 %d", t.hostPID), refused},
			{[]string{"stat", fmt.Sprintf("/proc/%d", t.hostPID)}, fmt.Sprintf("stat /proc/%d", t.hostPID), refused},
		},
		classSignal: {
			{[]string{"kill", strconv.Itoa(t.hostPID), "15"}, fmt.Sprintf("kill -TERM %d", t.hostPID), refused},
		},
		classPtrace: {
			{[]string{"ptrace-parent"}, "ptrace the sandbox's PID 1", refused},
			{[]string{"ptrace-parent", strconv.Itoa(t.hostPID)}, fmt.Sprintf("ptrace %d", t.hostPID), refused},
			{[]string{"process-vm-readv"}, "process_vm_readv the sandbox's PID 1", refused},
		},
		classMount: {
			{[]string{"mount-tmpfs", "/tmp"}, "mount a tmpfs on /tmp", refused},
			{[]string{"remount-rw", "/"}, "remount / read-write", refused},
			{[]string{"unshare-mount"}, "unshare the mount namespace", refused},
		},
		classModule: {
			{[]string{"init-module"}, "init_module", refused},
			{[]string{"finit-module"}, "finit_module", refused},
		},
		classIOURing: {
			{[]string{"io-uring-setup"}, "io_uring_setup", refused},
		},
		classTIOCSTI: {
			{[]string{"tiocsti", "0", "x"}, "TIOCSTI on the sandbox's terminal", refused},
			{[]string{"tiocsti-high"}, "TIOCSTI with garbage in the high bits", refused},
		},
		classUserNS: {
			{[]string{"clone-newuser"}, "clone(CLONE_NEWUSER)", refused},
			{[]string{"unshare-user"}, "unshare(CLONE_NEWUSER)", refused},
		},
	}
	p[classSetidFile] = setidAttempts(t)
	if t.proxy {
		// The listener's address is an IP literal no allowlist names:
		// the proxy must refuse to reach it.
		p[classNetwork] = append(p[classNetwork], attempt{[]string{"proxy-connect", t.tcp}, "ask the proxy for " + t.tcp, refused})
	}
	if t.setuid != "" {
		p[classSetuid] = []attempt{{append([]string{"exec-creds", t.setuid}, t.setuidArgs...),
			"exec " + strings.Join(append([]string{t.setuid}, t.setuidArgs...), " "), noGain}}
	}
	return p
}

// The limits of selftest's own limit runs: small, so that the fork bomb
// and the hog reach them in milliseconds, and the bounds of the attacks,
// four times over, harmless where no limit stops them.
const (
	limitPids     = 64
	limitMemory   = 64 << 20
	forkbombCount = 4 * limitPids
	hogBytes      = 4 * limitMemory
)

// allowlistReaches says whether the allowlist lets a command reach addr
// (HOST:PORT) through the proxy.
func allowlistReaches(a *sandbox.Allowlist, addr string) bool {
	host, port, err := net.SplitHostPort(addr)
	n, perr := strconv.ParseUint(port, 10, 16)
	if a == nil || a.Rules == nil || err != nil || perr != nil {
		return false
	}
	return a.Rules.Check(host, uint16(n)) == nil
}

// probeArgs are the probe's arguments for the classes' attempts, in order.
func probeArgs(p map[string][]attempt) []string {
	var args []string
	for _, c := range classes {
		for _, a := range p[c.id] {
			args = append(args, probe.Encode(a.op[0], a.op[1:]...))
		}
	}
	return args
}

// matchVerdicts gives each attempt its verdict, in the order the probe
// made them; an attempt the probe did not report on gets nil.
func matchVerdicts(attacks map[string][]attempt, vs []probe.Verdict) map[string][]*probe.Verdict {
	out := map[string][]*probe.Verdict{}
	i := 0
	for _, c := range classes {
		for _, a := range attacks[c.id] {
			var v *probe.Verdict
			if i < len(vs) && vs[i].Op == a.op[0] && slices.Equal(vs[i].Args, a.op[1:]) {
				v = &vs[i]
				i++
			}
			out[c.id] = append(out[c.id], v)
		}
	}
	return out
}

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// kernelLacks lists the layers a plain run needs that this kernel lacks,
// by the names forgebox's refusals give them: the Landlock features above
// its ABI, and the mount API (mount_setattr, Linux 5.12) the read-only
// view is built with.
func kernelLacks() []string {
	var lacks []string
	abi := kernelLandlockABI()
	for _, f := range []landlockFeature{landlockFS, landlockScoped} {
		if abi < f.abi {
			lacks = append(lacks, f.name)
		}
	}
	if !mountAPI() {
		lacks = append(lacks, "read-only filesystem view")
	}
	return lacks
}

// mountAPI reports whether the kernel has mount_setattr: called with a bad
// descriptor it fails with EBADF or EINVAL, not ENOSYS.
func mountAPI() bool {
	_, _, errno := unix.Syscall6(unix.SYS_MOUNT_SETATTR, ^uintptr(0), 0, 0, 0, 0, 0)
	return errno != unix.ENOSYS
}

// checkFailClosed: where the kernel lacks a layer a plain run needs,
// forgebox refuses the run before its command starts, on the terminal
// (exit 125, "LAYER unavailable: ...", a hint at doctor and --best-effort)
// and as JSON (exit 125, error.code "unavailable", error.layer one the
// kernel really lacks, error.hint), and the host stays as it was: the
// command's files are not written, in the workspace or beside it, and no
// process or cgroup of the run is left. Where the kernel lacks nothing,
// the run must go ahead (run_true then tests it).
func checkFailClosed(ctx context.Context, g *guest) (string, error) {
	lacks := kernelLacks()
	inside := filepath.Join(g.ws, "fail-closed-"+g.who)
	outside := filepath.Join(g.dir, "fail-closed-"+g.who)
	for _, f := range []string{inside, outside} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
	}
	defer os.Remove(inside)
	defer os.Remove(outside)
	script := fmt.Sprintf("echo ran > %s; echo ran > %s; sleep 30 & echo started", inside, outside)

	r, o, err := g.runJSON(ctx, "fail_closed", "-c", script)
	if err != nil {
		return "", err
	}
	if o.exit != 125 {
		g.fact("refused_layer", "none")
		if len(lacks) > 0 {
			g.logf("fail_closed", "%v", o)
			return "", fmt.Errorf("the kernel lacks %q, yet a plain run exited %d, not 125 (enforced.sandbox %v)", lacks, o.exit, r.Enforced != nil && r.Enforced.Sandbox)
		}
		return "", skipError{fmt.Sprintf("the kernel has every layer a plain run needs: it ran (exit %d)", o.exit)}
	}
	var problems []string
	e := r.Error
	switch {
	case e == nil:
		problems = append(problems, "--json: exit 125 without an error")
		e = &runError{}
	case e.Code != "unavailable":
		problems = append(problems, fmt.Sprintf("--json: error.code %q, want \"unavailable\"", e.Code))
	}
	g.fact("refused_layer", e.Layer)
	if !slices.Contains(lacks, e.Layer) {
		problems = append(problems, fmt.Sprintf("--json: refused for layer %q, which the kernel has (it lacks %q)", e.Layer, lacks))
	}
	if !strings.HasPrefix(e.Message, e.Layer+" unavailable: ") {
		problems = append(problems, fmt.Sprintf("--json: error.message %q does not name the layer", e.Message))
	}
	if !strings.Contains(e.Hint, "--best-effort") || !strings.Contains(e.Hint, "doctor") {
		problems = append(problems, fmt.Sprintf("--json: error.hint %q, want one naming forgebox doctor and --best-effort", e.Hint))
	}
	if r.ExitCode != 125 || r.Stdout != "" || r.Enforced != nil {
		problems = append(problems, fmt.Sprintf("--json: exit_code %d, stdout %q, enforced %+v: the command must not have run", r.ExitCode, r.Stdout, r.Enforced))
	}
	problems = append(problems, untouched(inside, outside)...)

	// The same on a terminal, without --json.
	t, err := g.forgebox(ctx, "run", "--no-policy", "--workspace", g.ws, "-c", script)
	if err != nil {
		return "", err
	}
	first := firstLine(string(t.stderr))
	want := "forgebox: " + e.Message
	switch {
	case t.exit != 125:
		problems = append(problems, fmt.Sprintf("plain: exit %d, want 125", t.exit))
	case len(t.stdout) > 0:
		problems = append(problems, fmt.Sprintf("plain: stdout %q, want nothing", t.stdout))
	case !strings.HasPrefix(first, want) || !strings.Contains(first, "--best-effort"):
		problems = append(problems, fmt.Sprintf("plain: stderr %q, want %q and the hint", first, want))
	}
	problems = append(problems, untouched(inside, outside)...)
	if len(problems) > 0 {
		g.logf("fail_closed", "--json: %v\nplain: %v", o, t)
		return "", errors.New(strings.Join(problems, "; "))
	}
	return fmt.Sprintf("refused twice (exit 125: %q; hint %q), nothing written, no process or group left", first, e.Hint), nil
}

// untouched describes what a refused run left on the host: the files its
// command would have written, its sleep, its cgroup, a forgebox process.
func untouched(files ...string) []string {
	var problems []string
	for _, f := range files {
		if _, err := os.Lstat(f); err == nil {
			problems = append(problems, f+" was written")
		}
	}
	if left := afterRun(); left != "" {
		problems = append(problems, left)
	}
	ps, _ := processes()
	for _, p := range ps {
		if p.comm == "forgebox" {
			problems = append(problems, fmt.Sprintf("forgebox still runs: %v", p))
		}
	}
	return problems
}

// hostNamespaces are forgebox's names for the namespaces it may give a
// run, with their names under /proc/PID/ns.
var hostNamespaces = [][2]string{{"user", "user"}, {"pid", "pid"}, {"mount", "mnt"}, {"ipc", "ipc"}, {"uts", "uts"}, {"net", "net"}}

// seccompAttacks are what forgebox's seccomp filter refuses with EPERM and
// the guest itself allows (the control run shows which): a user namespace
// by the raw clone syscall (a Go program cannot unshare one), ptrace of a
// process of the same user outside the run, the session keyring, io_uring
// and an execution domain.
func seccompAttacks(sentinel int) []string {
	return []string{"clone-newuser", "ptrace-parent " + strconv.Itoa(sentinel), "keyctl", "io-uring-setup", "personality"}
}

// checkBestEffortClaims: a --best-effort run claims no more than it
// enforces. Inside, the probe reads its namespaces and capabilities,
// writes a file of the caller's outside the workspace, and attacks what
// seccomp refuses; each claim of enforced is held against what it saw:
// a namespace claimed is not the host's, a sandbox has its own user, PID
// and mount namespaces, a read-only root refused the write, seccomp
// refused every attack (that the guest, run without forgebox, allows), no
// capabilities and no_new_privs show in /proc/self/status, no Landlock
// feature is claimed above the kernel's ABI. Each layer it does not claim
// must be in enforced.missing, and on stderr a warning says what is not
// enforced, and that it runs without a sandbox when it does.
func checkBestEffortClaims(ctx context.Context, g *guest) (string, error) {
	sentinel := exec.Command("/bin/sleep", "1000")
	if err := sentinel.Start(); err != nil {
		return "", err
	}
	defer func() { sentinel.Process.Kill(); sentinel.Wait() }()
	target := filepath.Join(g.dir, "best-effort-"+g.who)
	if err := os.WriteFile(target, []byte("original\n"), 0o644); err != nil {
		return "", err
	}
	defer os.Remove(target)

	attacks := seccompAttacks(sentinel.Process.Pid)
	ops := append([]string{"caps", "write " + target + " pwned"}, attacks...)
	for _, ns := range hostNamespaces {
		ops = append(ops, "readlink /proc/self/ns/"+ns[1])
	}
	control, err := g.execute(ctx, append([]string{"/bin/probe"}, ops...), nil)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(target, []byte("original\n"), 0o644); err != nil {
		return "", err
	}
	cv := verdicts(control.stdout)
	r, o, err := g.runJSON(ctx, "best_effort_claims", append([]string{"--best-effort", "--", "/bin/probe"}, ops...)...)
	if err != nil {
		return "", err
	}
	v := verdicts([]byte(r.Stdout))
	if o.exit != 0 || r.Enforced == nil || len(v) != len(ops) || len(cv) != len(ops) {
		g.logf("best_effort_claims", "%v\ncontrol: %v", o, control)
		return "", fmt.Errorf("--best-effort: exit %d, %d verdicts (%d without forgebox), want 0 and %d", o.exit, len(v), len(cv), len(ops))
	}
	e := r.Enforced
	g.fact("best_effort_sandbox", strconv.FormatBool(e.Sandbox))
	var problems []string
	missing := func(prefix string) {
		if firstMissing(r, prefix) == "" {
			problems = append(problems, fmt.Sprintf("%q is not enforced, yet not listed missing", prefix))
		}
	}

	// Namespaces: the last verdicts.
	var own []string
	for i, ns := range hostNamespaces {
		host, err := os.Readlink("/proc/self/ns/" + ns[1])
		if err != nil {
			return "", err
		}
		inside := v[len(v)-len(hostNamespaces)+i].Out
		claimed := slices.Contains(e.Namespaces, ns[0])
		switch {
		case inside != host:
			own = append(own, ns[0])
		case claimed:
			problems = append(problems, fmt.Sprintf("enforced.namespaces claims %s, but the command is in the host's (%s)", ns[0], host))
		}
	}
	if e.Sandbox && !(slices.Contains(own, "user") && slices.Contains(own, "pid") && slices.Contains(own, "mount")) {
		problems = append(problems, fmt.Sprintf("enforced.sandbox is true, but the command has only namespaces %q of its own", own))
	}
	if !e.Sandbox {
		missing("namespaces")
		if !strings.Contains(string(o.stderr), "warning: running WITHOUT a sandbox") {
			problems = append(problems, "no sandbox, and no warning on stderr that it runs WITHOUT a sandbox")
		}
	}

	// The read-only view: the write outside the workspace.
	got, _ := os.ReadFile(target)
	wrote := v[1].OK || string(got) != "original\n"
	switch {
	case e.ReadOnlyRoot && wrote:
		problems = append(problems, fmt.Sprintf("enforced.read_only_root is true, but the command wrote %s (now %q)", target, got))
	case !e.ReadOnlyRoot:
		missing("read-only host filesystem")
	}

	// Landlock: nothing above the kernel's ABI.
	abi := kernelLandlockABI()
	switch {
	case e.LandlockABI > abi:
		problems = append(problems, fmt.Sprintf("enforced.landlock_abi %d, the kernel has ABI %d", e.LandlockABI, abi))
	case e.LandlockABI == 0:
		missing(landlockFS.name)
	}
	// --net none denies TCP only when it runs without its own network
	// namespace, where the loopback would be the guest's.
	if want := !e.Sandbox && abi >= landlockTCP.abi; e.LandlockTCP != want {
		problems = append(problems, fmt.Sprintf("enforced.landlock_tcp_denied %v (sandbox %v) on Landlock ABI %d, want %v", e.LandlockTCP, e.Sandbox, abi, want))
	}
	if e.LandlockScoped && abi < landlockScoped.abi {
		problems = append(problems, fmt.Sprintf("enforced.landlock_scoped on Landlock ABI %d", abi))
	}

	// Seccomp: each attack refused with EPERM; the control says which the
	// guest allows, so that the refusal is the filter's.
	var proven []string
	for i, a := range attacks {
		in, out := v[2+i], cv[2+i]
		switch {
		case !e.Seccomp:
		case in.OK || in.Errno != "EPERM":
			problems = append(problems, fmt.Sprintf("enforced.seccomp is true, but %s inside: ok=%v %s", a, in.OK, in.Errno))
		case out.OK:
			proven = append(proven, in.Op)
		}
	}
	switch {
	case !e.Seccomp:
		missing("seccomp")
	case len(proven) == 0:
		problems = append(problems, fmt.Sprintf("none of %q works without forgebox here: seccomp's refusals prove nothing", attacks))
	}

	// Capabilities and no_new_privs.
	status := map[string]string{}
	for _, f := range strings.Split(v[0].Out, ";") {
		if k, val, ok := strings.Cut(f, ":"); ok {
			status[k] = strings.TrimSpace(val)
		}
	}
	if e.Capabilities == "none" {
		for _, k := range []string{"CapInh", "CapPrm", "CapEff", "CapAmb"} {
			if status[k] != "0000000000000000" {
				problems = append(problems, fmt.Sprintf("enforced.capabilities is none, but %s is %s", k, status[k]))
			}
		}
	}
	if e.NoNewPrivs && status["NoNewPrivs"] != "1" {
		problems = append(problems, fmt.Sprintf("enforced.no_new_privs, but NoNewPrivs is %q", status["NoNewPrivs"]))
	}
	if len(e.Missing) > 0 && !strings.Contains(string(o.stderr), "warning: not enforced on this host (--best-effort)") {
		problems = append(problems, "enforced.missing is not empty, and stderr has no warning saying what is not enforced")
	}
	if len(problems) > 0 {
		g.logf("best_effort_claims", "%v\ncontrol: %v", o, control)
		return "", errors.New(strings.Join(problems, "; "))
	}
	g.logf("best_effort_claims", "missing: %q", e.Missing)
	g.logf("best_effort_claims", "capabilities: %s", v[0].Out)
	return fmt.Sprintf("sandbox=%v, own namespaces %q, write outside refused=%v, Landlock ABI %d, seccomp refused %q (allowed without forgebox: %q), capabilities %s, %d layers listed missing",
		e.Sandbox, own, !wrote, e.LandlockABI, attacks, proven, e.Capabilities, len(e.Missing)), nil
}

// verdicts parses the probe's output, one verdict a line.
func verdicts(out []byte) []verdict {
	var vs []verdict
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if v, err := probeVerdict(line); err == nil {
			vs = append(vs, v)
		}
	}
	return vs
}

// checkTreeKilled: what the command leaves running in the background when
// it exits (a child, a child in a session of its own, a double-forked
// grandchild) dies with the run, also where --best-effort runs without a
// PID namespace; and no cgroup of the run is left.
func checkTreeKilled(ctx context.Context, g *guest) (string, error) {
	r, o, err := g.unisolatedOK(ctx, "tree_killed", "-c", "sleep 30 & setsid sleep 30 & (sleep 30 &); echo started")
	if err != nil {
		return "", err
	}
	if o.exit != 0 || strings.TrimSpace(r.Stdout) != "started" {
		g.logf("tree_killed", "%v", o)
		return "", fmt.Errorf("exit %d, stdout %q; want 0 and started", o.exit, r.Stdout)
	}
	if left := afterRun(); left != "" {
		g.logf("tree_killed", "%v", o)
		return "", errors.New(left)
	}
	how := "the PID namespace"
	if !r.Enforced.Sandbox {
		how = "its subreaper, without a PID namespace"
	}
	return fmt.Sprintf("three background sleeps gone with the run (%s), no group left", how), nil
}

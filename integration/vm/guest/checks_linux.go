package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// checks run in this order, as root and then as the unprivileged user.
var checks = []check{
	{"doctor", checkDoctor},
	{"run_true", checkRunTrue},
	{"fail_closed", checkFailClosed},
	{"best_effort_claims", checkBestEffortClaims},
	{"tree_killed", checkTreeKilled},
	{"write_inside", checkWriteInside},
	{"write_outside", checkWriteOutside},
	{"git_config_copy", checkGitConfigCopy},
	{"private_cache", checkPrivateCache},
	{"pid_namespace", checkPIDNamespace},
	{"net_none", checkNetNone},
	{"hidden_secrets", checkHiddenSecrets},
	{"timeout", checkTimeout},
	{"landlock", checkLandlock},
	{"memory_limit", checkMemoryLimit},
	{"pids_limit", checkPidsLimit},
	{"cgroup_membership", checkCgroupMembership},
	{"stale_cgroup", checkStaleCgroup},
	{"delegated_cgroup", checkDelegatedCgroup},
	{"nproc_below_default", checkNprocBelowDefault},
	{"no_zombies", checkNoZombies},
	{"no_zombies_unlaunched", checkNoZombiesUnlaunched},
}

// doctorReport is the part of `forgebox doctor --json` the checks read.
type doctorReport struct {
	Kernel string `json:"kernel"`
	Checks []struct {
		Name     string            `json:"name"`
		OK       bool              `json:"ok"`
		Detail   string            `json:"detail"`
		Required bool              `json:"required"`
		Values   map[string]string `json:"values"`
	} `json:"checks"`
	Missing []string `json:"missing"`
}

// checkDoctor: the report parses, names this kernel, its exit code agrees
// with its own sandbox_launch check, and each required check that failed
// is listed missing. What it says of Landlock, the mount API and cgroups
// (cgroup.Probe and the mechanism of each default limit) becomes facts for
// the host to compare.
func checkDoctor(ctx context.Context, g *guest) (string, error) {
	o, err := g.forgebox(ctx, "doctor", "--json")
	if err != nil {
		return "", err
	}
	var r doctorReport
	if err := json.Unmarshal(o.stdout, &r); err != nil {
		g.logf("doctor", "%v", o)
		return "", fmt.Errorf("the report does not parse: %v", err)
	}
	var u unix.Utsname
	unix.Uname(&u)
	if release := unix.ByteSliceToString(u.Release[:]); r.Kernel != release {
		return "", fmt.Errorf("kernel %q, want %q", r.Kernel, release)
	}
	var summary, unlisted []string
	launched := false
	for _, c := range r.Checks {
		prefix := c.Name + ": "
		if c.Name == "sandbox_launch" {
			prefix = "sandbox: "
		}
		if c.Required && !c.OK && !slices.ContainsFunc(r.Missing, func(m string) bool { return strings.HasPrefix(m, prefix) }) {
			unlisted = append(unlisted, c.Name)
		}
		state := "ok"
		if !c.OK {
			state = "absent"
			if c.Required {
				state = "MISSING"
			}
		}
		summary = append(summary, c.Name+"="+state)
		switch c.Name {
		case "sandbox_launch":
			launched = c.OK
		case "landlock":
			g.fact("doctor_landlock_abi", cmp.Or(c.Values["abi"], "0"))
			g.fact("doctor_landlock_ok", strconv.FormatBool(c.OK))
		case "mount_api":
			g.fact("doctor_mount_api_ok", strconv.FormatBool(c.OK))
		case "cgroups":
			g.fact("doctor_cgroup", c.Detail)
			for _, k := range []string{"version", "can_create", "delegated", "memory_limit", "pids_limit", "nproc_per_ns"} {
				g.fact("doctor_cgroup_"+k, c.Values[k])
			}
		}
	}
	if want := map[bool]int{true: 0, false: 1}[launched]; o.exit != want {
		g.logf("doctor", "%v", o)
		return "", fmt.Errorf("exit %d with sandbox_launch ok=%v, want %d", o.exit, launched, want)
	}
	if len(r.Missing) > 0 {
		g.logf("doctor", "missing: %s", strings.Join(r.Missing, "; "))
	}
	if len(unlisted) > 0 {
		return "", fmt.Errorf("required checks %q failed but are not listed missing (%q)", unlisted, r.Missing)
	}
	return strings.Join(summary, " "), nil
}

// checkRunTrue: /bin/true runs; or, where the kernel lacks a layer,
// forgebox fails closed (exit 125 naming the layer) and --best-effort runs
// and lists the layer as missing.
func checkRunTrue(ctx context.Context, g *guest) (string, error) {
	r, o, err := g.runJSON(ctx, "run_true", "--", "/bin/true")
	if err != nil {
		return "", err
	}
	if o.exit == 0 && r.Enforced != nil && r.Enforced.Sandbox {
		return fmt.Sprintf("namespaces %v in %v", r.Enforced.Namespaces, o.elapsed.Round(time.Millisecond)), nil
	}
	if o.exit != 125 || r.Error == nil {
		g.logf("run_true", "%v", o)
		return "", fmt.Errorf("exit %d, enforced=%+v", o.exit, r.Enforced)
	}
	refused := r.Error.Message
	b, bo, err := g.runJSON(ctx, "run_true", "--best-effort", "--", "/bin/true")
	switch {
	case err != nil:
		return "", fmt.Errorf("refused (%s), and --best-effort failed too: %v", refused, err)
	case bo.exit != 0 || b.Enforced == nil:
		g.logf("run_true", "%v", bo)
		return "", fmt.Errorf("refused (%s), and --best-effort exited %d", refused, bo.exit)
	case !slices.ContainsFunc(b.Enforced.Missing, func(m string) bool { return strings.Contains(m, r.Error.Layer) }):
		return "", fmt.Errorf("refused (%s), but --best-effort reports missing=%q", refused, b.Enforced.Missing)
	}
	return fmt.Sprintf("fails closed: exit 125, %s; --best-effort ran (sandbox=%v) with missing=%q", refused, b.Enforced.Sandbox, b.Enforced.Missing), nil
}

// checkWriteInside: the workspace is writable.
func checkWriteInside(ctx context.Context, g *guest) (string, error) {
	target := filepath.Join(g.ws, "created.txt")
	os.Remove(target)
	r, o, err := g.sandboxed(ctx, "write_inside", "-c", "echo inside > created.txt")
	if err != nil {
		return "", err
	}
	got, rerr := os.ReadFile(target)
	if r.ExitCode != 0 || rerr != nil || string(got) != "inside\n" {
		g.logf("write_inside", "%v", o)
		return "", fmt.Errorf("exit %d; %s holds %q (%v), want \"inside\\n\"", r.ExitCode, target, got, rerr)
	}
	return "created " + target, nil
}

// checkGitConfigCopy: the workspace repository's .git/config is a private
// copy reached through a symlink mounted over it (open_tree of a symlink,
// move_mount onto a file); a rewrite renamed next to the copy, as git
// does, works; an ordinary key reaches the host after the run and
// core.fsmonitor does not. Where the kernel refuses the mount, the config
// is read-only as before, and the detail says so.
func checkGitConfigCopy(ctx context.Context, g *guest) (string, error) {
	gitdir := filepath.Join(g.ws, ".git")
	os.RemoveAll(gitdir)
	config := filepath.Join(gitdir, "config")
	before := "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
	if err := os.MkdirAll(filepath.Join(gitdir, "objects"), 0o755); err != nil {
		return "", err
	}
	os.WriteFile(filepath.Join(gitdir, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	if err := os.WriteFile(config, []byte(before), 0o644); err != nil {
		return "", err
	}
	defer os.RemoveAll(gitdir)
	r, o, err := g.sandboxed(ctx, "git_config_copy", "-c", `t=$(readlink .git/config) || { echo READ-ONLY; exit 0; }
cp "$t" "$t.new" && printf '[user]\n\temail = me@example.com\n[core]\n\tfsmonitor = x\n' >> "$t.new" && mv "$t.new" "$t" && echo RENAMED`)
	if err != nil {
		return "", err
	}
	got, _ := os.ReadFile(config)
	switch {
	case r.ExitCode != 0:
		g.logf("git_config_copy", "%v", o)
		return "", fmt.Errorf("exit %d", r.ExitCode)
	case strings.Contains(r.Stdout, "READ-ONLY") && string(got) == before:
		return "the kernel refused the symlink mount: .git/config stayed read-only", nil
	case !strings.Contains(r.Stdout, "RENAMED"):
		g.logf("git_config_copy", "%v", o)
		return "", fmt.Errorf("the rename next to the copy failed: %q", r.Stdout)
	case strings.Contains(string(got), "fsmonitor"):
		return "", fmt.Errorf("core.fsmonitor reached the host: %q", got)
	case !strings.Contains(string(got), "email = me@example.com"):
		return "", fmt.Errorf("user.email did not reach the host: %q", got)
	case len(r.Quarantined) != 1 || r.Quarantined[0].Key != "core.fsmonitor":
		return "", fmt.Errorf("quarantined %+v, want core.fsmonitor", r.Quarantined)
	}
	return "private copy through a mounted symlink; user.email carried over, core.fsmonitor refused", nil
}

// checkWriteOutside: files outside the workspace that this user may write
// on the host can be neither changed, removed nor created beside.
func checkWriteOutside(ctx context.Context, g *guest) (string, error) {
	targets := []string{filepath.Join(g.dir, "outside.txt"), "/etc/fbvm-canary"}
	var script, tried []string
	for _, t := range targets {
		if err := os.WriteFile(t, []byte("original\n"), 0o644); err != nil {
			continue // not ours to write, even on the host
		}
		planted := filepath.Join(filepath.Dir(t), "planted-by-"+g.who)
		os.Remove(planted)
		tried = append(tried, t)
		script = append(script,
			fmt.Sprintf("echo pwned > %s && echo WROTE %s", t, t),
			fmt.Sprintf("echo pwned > %s && echo CREATED %s", planted, planted),
			fmt.Sprintf("rm -f %s && echo REMOVED %s", t, t))
	}
	if len(tried) == 0 {
		return "", errors.New("no host file outside the workspace is writable by this user: nothing to attack")
	}
	r, o, err := g.sandboxed(ctx, "write_outside", "-c", strings.Join(script, "; ")+"; true")
	if err != nil {
		return "", err
	}
	var problems []string
	if r.ExitCode != 0 {
		problems = append(problems, fmt.Sprintf("the attack script exited %d", r.ExitCode))
	}
	if strings.TrimSpace(r.Stdout) != "" {
		problems = append(problems, "inside: "+r.Stdout)
	}
	for _, t := range tried {
		if got, err := os.ReadFile(t); err != nil || string(got) != "original\n" {
			problems = append(problems, fmt.Sprintf("%s now holds %q (%v)", t, got, err))
		}
		planted := filepath.Join(filepath.Dir(t), "planted-by-"+g.who)
		if _, err := os.Lstat(planted); err == nil {
			problems = append(problems, planted+" was created")
		}
	}
	if len(problems) > 0 {
		g.logf("write_outside", "%v", o)
		return "", errors.New(strings.Join(problems, "; "))
	}
	return fmt.Sprintf("unchanged: %s", strings.Join(tried, " ")), nil
}

// checkPrivateCache: ~/.cache is writable in the sandbox, privately: an
// overlay on this kernel, or where overlay refuses (the guest's home is on
// the initramfs) the private cache alone, said in a warning; what a run
// wrote is there for the next, and the guest's ~/.cache is unchanged.
func checkPrivateCache(ctx context.Context, g *guest) (string, error) {
	cache := filepath.Join(g.home, ".cache")
	host := filepath.Join(cache, "fbvm-host")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(host, []byte("original\n"), 0o644); err != nil {
		return "", err
	}
	os.Remove(filepath.Join(cache, "fbvm-new"))
	r, o, err := g.sandboxed(ctx, "private_cache", "-c", "echo pwned > ~/.cache/fbvm-host && echo new > ~/.cache/fbvm-new && cat ~/.cache/fbvm-new")
	if err != nil {
		return "", err
	}
	var mode string
	for _, c := range r.Enforced.Caches {
		if c.Path == cache {
			mode = c.Mode
		}
	}
	var problems []string
	switch {
	case r.ExitCode != 0 || r.Stdout != "new\n":
		problems = append(problems, fmt.Sprintf("writing ~/.cache inside: exit %d, stdout %q", r.ExitCode, r.Stdout))
	case mode == "":
		problems = append(problems, fmt.Sprintf("enforced.caches has no %s", cache))
	case mode == "private" && !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "refused an overlay") }):
		problems = append(problems, "~/.cache is private, not an overlay, and no warning says why")
	}
	if got, err := os.ReadFile(host); err != nil || string(got) != "original\n" {
		problems = append(problems, fmt.Sprintf("%s now holds %q (%v)", host, got, err))
	}
	if _, err := os.Lstat(filepath.Join(cache, "fbvm-new")); err == nil {
		problems = append(problems, "the guest's ~/.cache/fbvm-new was created")
	}
	r2, o2, err := g.sandboxed(ctx, "private_cache", "-c", "cat ~/.cache/fbvm-new")
	if err != nil {
		return "", err
	}
	if r2.Stdout != "new\n" {
		problems = append(problems, fmt.Sprintf("the next run does not find what the first wrote: %q", r2.Stdout))
	}
	if len(problems) > 0 {
		g.logf("private_cache", "%v\n%v", o, o2)
		return "", errors.New(strings.Join(problems, "; "))
	}
	return fmt.Sprintf("~/.cache: %s; the guest's unchanged", mode), nil
}

// checkPIDNamespace: a process of the same user outside the sandbox can be
// neither seen nor signalled.
func checkPIDNamespace(ctx context.Context, g *guest) (string, error) {
	sentinel := exec.Command("/bin/sleep", "1000")
	if err := sentinel.Start(); err != nil {
		return "", err
	}
	defer func() { sentinel.Process.Kill(); sentinel.Wait() }()
	pid := sentinel.Process.Pid
	r, o, err := g.sandboxed(ctx, "pid_namespace", "-c",
		fmt.Sprintf("ls /proc | grep -E '^[0-9]+$' | tr '\\n' ' '; echo; kill -0 %d 2>/dev/null && echo SIGNALLED; true", pid))
	if err != nil {
		return "", err
	}
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	pids := strings.Fields(lines[0])
	switch {
	case r.ExitCode != 0:
		g.logf("pid_namespace", "%v", o)
		return "", fmt.Errorf("exit %d", r.ExitCode)
	case strings.Contains(r.Stdout, "SIGNALLED"):
		return "", fmt.Errorf("the sandbox signalled host process %d", pid)
	case slices.Contains(pids, strconv.Itoa(pid)):
		return "", fmt.Errorf("host process %d is visible inside: %v", pid, pids)
	case len(pids) == 0 || len(pids) > 8:
		return "", fmt.Errorf("the sandbox sees %d processes (%v), want its own few", len(pids), pids)
	}
	return fmt.Sprintf("sees pids %v, not host pid %d", pids, pid), nil
}

// checkNetNone: --net none is a network namespace of its own holding only
// loopback, and loopback is up.
func checkNetNone(ctx context.Context, g *guest) (string, error) {
	hostNS, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		return "", err
	}
	r, o, err := g.sandboxed(ctx, "net_none", "--net", "none", "-c",
		"readlink /proc/self/ns/net; sed 1,2d /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\\n' ' '; echo; ip -o link show lo")
	if err != nil {
		return "", err
	}
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if r.ExitCode != 0 || len(lines) < 3 {
		g.logf("net_none", "%v", o)
		return "", fmt.Errorf("exit %d, output %q", r.ExitCode, r.Stdout)
	}
	ns, ifaces, lo := lines[0], strings.Fields(lines[1]), lines[2]
	switch {
	case ns == hostNS:
		return "", fmt.Errorf("the sandbox is in the host's network namespace %s", ns)
	case !slices.Equal(ifaces, []string{"lo"}):
		return "", fmt.Errorf("interfaces inside: %v, want only lo", ifaces)
	case !strings.Contains(lo, ",UP"):
		return "", fmt.Errorf("loopback is not up: %s", lo)
	}
	return fmt.Sprintf("own namespace %s (host %s), interfaces %v, lo up", ns, hostNS, ifaces), nil
}

// checkHiddenSecrets: ~/.ssh reads empty inside, and stays as it was.
func checkHiddenSecrets(ctx context.Context, g *guest) (string, error) {
	ssh := filepath.Join(g.home, ".ssh")
	key := filepath.Join(ssh, "id_ed25519")
	secret := fmt.Sprintf("FBVM-SECRET-%d-%d", os.Getpid(), time.Now().UnixNano())
	if err := os.MkdirAll(ssh, 0o700); err != nil {
		return "", err
	}
	if err := os.WriteFile(key, []byte(secret+"\n"), 0o600); err != nil {
		return "", err
	}
	r, o, err := g.sandboxed(ctx, "hidden_secrets", "-c", "ls -A ~/.ssh; cat ~/.ssh/id_ed25519 2>/dev/null; echo END")
	if err != nil {
		return "", err
	}
	if strings.Contains(r.Stdout, secret) || strings.TrimSpace(r.Stdout) != "END" {
		g.logf("hidden_secrets", "%v", o)
		return "", fmt.Errorf("inside, ~/.ssh shows %q", r.Stdout)
	}
	if got, err := os.ReadFile(key); err != nil || string(got) != secret+"\n" {
		return "", fmt.Errorf("%s changed: %q (%v)", key, got, err)
	}
	return ssh + " reads empty", nil
}

// checkTimeout: --timeout kills the whole tree and exits 124, and nothing
// of the run is left running. A process of the run that still exists when
// forgebox has exited (dying, or a zombie not yet reaped by its new parent)
// is logged; one still alive after leftoverGrace fails the check. Without
// a PID namespace (--best-effort without a sandbox) the tree must die all
// the same.
func checkTimeout(ctx context.Context, g *guest) (string, error) {
	r, o, err := g.unisolatedOK(ctx, "timeout", "--timeout", "1s", "-c", "sleep 97 & sleep 98")
	if err != nil {
		return "", err
	}
	atExit, err := leftovers()
	if err != nil {
		return "", err
	}
	if o.exit != 124 || !r.TimedOut {
		g.logf("timeout", "%v", o)
		return "", fmt.Errorf("exit %d, timed_out=%v; want 124 and true", o.exit, r.TimedOut)
	}
	if len(atExit) == 0 {
		return fmt.Sprintf("exit 124 after %v, nothing left", o.elapsed.Round(time.Millisecond)), nil
	}
	g.logf("timeout", "when forgebox had exited, these still existed: %v", atExit)
	deadline := time.Now().Add(leftoverGrace)
	for {
		left, err := leftovers()
		if err != nil {
			return "", err
		}
		var alive []process
		for _, p := range left {
			if p.state != "Z" {
				alive = append(alive, p)
			}
		}
		if len(alive) == 0 {
			return fmt.Sprintf("exit 124 after %v; %d process(es) of the run outlived forgebox briefly (see log)", o.elapsed.Round(time.Millisecond), len(atExit)), nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("still running %v after forgebox exited: %v", leftoverGrace, alive)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// leftoverGrace is how long a process of a finished run may take to die.
const leftoverGrace = 3 * time.Second

// leftovers are the processes a sandboxed run may leave: forgebox's own and
// the checks' sleeps.
func leftovers() ([]process, error) {
	ps, err := processes()
	if err != nil {
		return nil, err
	}
	var left []process
	for _, p := range ps {
		if p.comm == "forgebox" || p.comm == "sleep" {
			left = append(left, p)
		}
	}
	return left, nil
}

package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// cgroupRoot is where the guest's /init mounts the cgroup filesystems.
const cgroupRoot = "/sys/fs/cgroup"

// cgroupMechanism is what must enforce a limit for root here: the cgroup
// version the guest mounted.
func cgroupMechanism() string {
	if cgroupLayout() == "v2" {
		return "cgroup-v2"
	}
	return "cgroup-v1"
}

// memoryHierarchy reports whether the guest mounted a hierarchy with the
// memory controller where forgebox looks for one: cgroup v2, or a v1
// memory hierarchy (kernels built without CONFIG_MEMCG_V1, such as
// Debian's 6.12, have none).
func memoryHierarchy() bool {
	if cgroupLayout() == "v2" {
		return true
	}
	var fs unix.Statfs_t
	return unix.Statfs(filepath.Join(cgroupRoot, "memory"), &fs) == nil && fs.Type == unix.CGROUP_SUPER_MAGIC
}

// checkMemoryLimit: as root, a hog under --memory 64M is OOM-killed inside
// the run's cgroup (exit 137, oom_killed) before it reaches 64 MiB, and the
// group is gone afterwards. As the user, who has no cgroup here (v1 is
// root's, and nothing delegated a v2 subtree), and as root without a
// memory hierarchy, the explicit limit is refused, and --best-effort runs
// and lists it missing. The cgroup needs no namespaces: where --best-effort
// runs without a sandbox (a kernel without the mount API), the limit holds
// all the same.
func checkMemoryLimit(ctx context.Context, g *guest) (string, error) {
	if g.who != "root" || !memoryHierarchy() {
		return memoryLimitRefused(ctx, g)
	}
	r, o, err := g.unisolatedOK(ctx, "memory_limit", "--memory", "64M", "--", "/bin/fbvm-check", "hog", "256")
	if err != nil {
		return "", err
	}
	mech := ""
	if r.Enforced != nil && r.Enforced.Limits != nil {
		mech = r.Enforced.Limits.Memory.Mechanism
	}
	g.fact("limit_memory", mech)
	reached := lastNumber(r.Stdout)
	var problems []string
	if want := cgroupMechanism(); mech != want {
		problems = append(problems, fmt.Sprintf("memory enforced by %q, want %q", mech, want))
	}
	if o.exit != 137 || !r.OOMKilled {
		problems = append(problems, fmt.Sprintf("exit %d, oom_killed %v; want 137 and true", o.exit, r.OOMKilled))
	}
	if slices.Contains(strings.Fields(r.Stdout), "survived") || reached >= 64 {
		problems = append(problems, fmt.Sprintf("the hog allocated %d MiB under a 64 MiB limit", reached))
	}
	// The kernel charges ahead of reclaim, and the peak may pass the
	// limit by a page or so (by 4 KiB on 6.1); far more means no limit.
	if r.Usage != nil && r.Usage.PeakMemoryBytes != nil && *r.Usage.PeakMemoryBytes > 65<<20 {
		problems = append(problems, fmt.Sprintf("peak memory %d bytes, over the limit", *r.Usage.PeakMemoryBytes))
	}
	if left := afterRun(); left != "" {
		problems = append(problems, left)
	}
	if len(problems) > 0 {
		g.logf("memory_limit", "%v", o)
		return "", errors.New(strings.Join(problems, "; "))
	}
	peak := "unknown"
	if r.Usage != nil && r.Usage.PeakMemoryBytes != nil {
		peak = fmt.Sprintf("%.1f MiB", float64(*r.Usage.PeakMemoryBytes)/(1<<20))
	}
	return fmt.Sprintf("%s: the hog was OOM-killed after %d MiB (exit 137, peak %s), group %s removed", mech, reached, peak, r.Enforced.Cgroup), nil
}

// memoryLimitRefused is checkMemoryLimit for a caller without a cgroup.
func memoryLimitRefused(ctx context.Context, g *guest) (string, error) {
	return g.limitRefused(ctx, "memory_limit", limitMemory, "--memory", "64M")
}

// A resource limit: the layer forgebox's refusals and enforced.missing
// name it by, and the fact that reports its mechanism.
type limitResource struct {
	layer, fact string
	decision    func(r runResult) limitDecision
}

var (
	limitMemory = limitResource{"memory limit (--memory)", "limit_memory", func(r runResult) limitDecision { return r.Enforced.Limits.Memory }}
	limitPids   = limitResource{"task limit (--pids)", "limit_pids", func(r runResult) limitDecision { return r.Enforced.Limits.Pids }}
)

// limitRefused checks a limit that nothing can enforce for this caller
// here: a plain run asking for it (flag value) is refused, exit 125 naming
// the limit, and --best-effort runs and lists it missing, enforced by
// nothing.
func (g *guest) limitRefused(ctx context.Context, name string, res limitResource, flag, value string) (string, error) {
	r, o, err := g.runJSON(ctx, name, flag, value, "--", "/bin/true")
	if err != nil {
		return "", err
	}
	if o.exit != 125 || r.Error == nil || r.Error.Code != "unavailable" {
		g.logf(name, "%v", o)
		return "", fmt.Errorf("%s %s without a cgroup: exit %d, want 125 (unavailable)", flag, value, o.exit)
	}
	refused := r.Error.Layer
	// A kernel that lacks a Landlock feature is refused for that first:
	// then only --best-effort shows the limit's fate.
	landlockFirst := strings.HasPrefix(refused, "landlock") && kernelLandlockABI() < landlockScoped.abi
	if refused != res.layer && !landlockFirst {
		return "", fmt.Errorf("refused for layer %q (%s), want %q", refused, r.Error.Message, res.layer)
	}
	g.fact(res.fact, "refused")
	b, bo, err := g.runJSON(ctx, name, "--best-effort", flag, value, "--", "/bin/true")
	if err != nil {
		return "", err
	}
	if bo.exit != 0 || b.Enforced == nil || b.Enforced.Limits == nil {
		g.logf(name, "%v", bo)
		return "", fmt.Errorf("refused (%s), and --best-effort exited %d", refused, bo.exit)
	}
	i := slices.IndexFunc(b.Enforced.Missing, func(m string) bool { return strings.HasPrefix(m, res.layer) })
	if mech := res.decision(b).Mechanism; i < 0 || mech != "none" {
		return "", fmt.Errorf("--best-effort: %s enforced by %q, missing=%q; want none, and the limit listed", res.layer, mech, b.Enforced.Missing)
	}
	detail := fmt.Sprintf("refused: exit 125, layer %q", refused)
	if landlockFirst {
		detail += " (Landlock comes first on this kernel)"
	}
	return fmt.Sprintf("%s; --best-effort ran with missing %q", detail, b.Enforced.Missing[i]), nil
}

// checkPidsLimit: a shell that forks sleeps in a loop under --pids 32 is
// refused forks before it has 32 tasks, by the run's cgroup (root: the
// kernel counts the refusals, usage.forks_refused) or by RLIMIT_NPROC in
// the sandbox's user namespace (the user, Linux 5.14+). Nothing of the run
// is left afterwards. Before Linux 5.14 RLIMIT_NPROC counts all of the
// user's processes: there the user's --pids is refused, and --best-effort
// lists it missing.
func checkPidsLimit(ctx context.Context, g *guest) (string, error) {
	if g.who != "root" && !kernelAtLeast(5, 14) {
		return g.limitRefused(ctx, "pids_limit", limitPids, "--pids", "32")
	}
	r, o, err := g.unisolatedOK(ctx, "pids_limit", "--pids", "32", "-c",
		"n=0; while [ $n -lt 64 ]; do sleep 30 & n=$((n+1)); echo $n; done; echo ALL")
	if err != nil {
		return "", err
	}
	mech := ""
	if r.Enforced != nil && r.Enforced.Limits != nil {
		mech = r.Enforced.Limits.Pids.Mechanism
	}
	g.fact("limit_pids", mech)
	started := lastNumber(r.Stdout)
	want := "rlimit"
	if g.who == "root" {
		want = cgroupMechanism()
	}
	var problems []string
	if mech != want {
		problems = append(problems, fmt.Sprintf("tasks limited by %q, want %q", mech, want))
	}
	if slices.Contains(strings.Fields(r.Stdout), "ALL") || started >= 32 {
		problems = append(problems, fmt.Sprintf("the loop started %d sleeps under --pids 32", started))
	}
	refusals := "not counted (no cgroup)"
	if r.Usage != nil && r.Usage.ForksRefused != nil {
		refusals = strconv.FormatInt(*r.Usage.ForksRefused, 10)
		if *r.Usage.ForksRefused == 0 {
			problems = append(problems, "usage.forks_refused is 0")
		}
	} else if strings.HasPrefix(mech, "cgroup") {
		problems = append(problems, "usage.forks_refused is null with a cgroup")
	}
	if left := afterRun(); left != "" {
		problems = append(problems, left)
	}
	if len(problems) > 0 {
		g.logf("pids_limit", "%v", o)
		return "", errors.New(strings.Join(problems, "; "))
	}
	return fmt.Sprintf("%s: %d sleeps started, then %s (exit %d); forks refused: %s; nothing left",
		mech, started, firstLine(r.Stderr), o.exit, refusals), nil
}

// checkCgroupMembership: the command runs inside the group forgebox
// reports; without a group it sits in no forgebox group. On cgroup v2 it
// must have been cloned there (CLONE_INTO_CGROUP), not moved: the kernel's
// cgroup_attach_task trace event, which every move into a group fires and
// a clone into one does not, must not name the group. This holds for a
// --best-effort run without a sandbox too.
func checkCgroupMembership(ctx context.Context, g *guest) (string, error) {
	var moves func() ([]string, error)
	if g.who == "root" {
		var err error
		if moves, err = traceMoves(); err != nil {
			g.logf("cgroup_membership", "cannot trace moves between cgroups: %v", err)
		}
	}
	r, o, err := g.unisolatedOK(ctx, "cgroup_membership", "--", "/bin/cat", "/proc/self/cgroup")
	var moved []string
	if moves != nil {
		var terr error
		if moved, terr = moves(); terr != nil {
			g.logf("cgroup_membership", "cannot trace moves between cgroups: %v", terr)
			moves = nil
		}
	}
	if err != nil {
		return "", err
	}
	if o.exit != 0 || r.Enforced == nil {
		g.logf("cgroup_membership", "%v", o)
		return "", fmt.Errorf("exit %d", o.exit)
	}
	group := r.Enforced.Cgroup
	lines := strings.Fields(r.Stdout)
	var in []string // the hierarchies that put the command in a forgebox group
	for _, l := range lines {
		if f := strings.SplitN(l, ":", 3); len(f) == 3 && strings.Contains(f[2], "/forgebox-") {
			if filepath.Base(f[2]) != group {
				return "", fmt.Errorf("the command is in %s, forgebox reports group %q", l, group)
			}
			in = append(in, cmp.Or(f[1], "unified"))
		}
	}
	if g.who != "root" {
		if group != "" || len(in) > 0 {
			return "", fmt.Errorf("without a cgroup, forgebox reports group %q and the command is in %q", group, lines)
		}
		return fmt.Sprintf("no group, as reported; /proc/self/cgroup: %s", strings.Join(lines, " ")), nil
	}
	want := []string{"unified"}
	if cgroupLayout() != "v2" {
		want = []string{"pids"}
		if memoryHierarchy() {
			want = append(want, "memory")
		}
	}
	for _, w := range want {
		if !slices.Contains(in, w) {
			g.logf("cgroup_membership", "%v", o)
			return "", fmt.Errorf("the command is not in group %q in the %s hierarchy: /proc/self/cgroup holds %q", group, w, lines)
		}
	}
	if left := afterRun(); left != "" {
		return "", errors.New(left)
	}
	var into []string // the moves into the run's group
	for _, m := range moved {
		if strings.Contains(m, group) {
			into = append(into, m)
		}
	}
	how := "not traced"
	switch {
	case moves == nil:
	case cgroupLayout() == "v2" && len(into) > 0:
		return "", fmt.Errorf("the command was moved into %s, not cloned there with CLONE_INTO_CGROUP: %q", group, into)
	case cgroupLayout() == "v2":
		how = "cloned there: no move into it traced"
	default:
		how = fmt.Sprintf("%d moves into it traced (cgroup v1 has no CLONE_INTO_CGROUP)", len(into))
	}
	return fmt.Sprintf("the command is in %s (%s), %s; group removed after the run", group, strings.Join(in, ", "), how), nil
}

// tracefs is where the guest's checks mount the kernel's tracing
// filesystem.
const tracefs = "/sys/kernel/tracing"

// traceMoves starts tracing the kernel's cgroup_attach_task event, which
// fires for each task moved into a cgroup (through cgroup.procs or tasks)
// and not for a task cloned into one. The function it returns stops the
// tracing and returns the events, one line each.
func traceMoves() (func() ([]string, error), error) {
	if _, err := os.Stat(filepath.Join(tracefs, "events")); err != nil {
		if err := unix.Mount("tracefs", tracefs, "tracefs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			return nil, fmt.Errorf("mount tracefs on %s: %w", tracefs, err)
		}
	}
	enable := filepath.Join(tracefs, "events/cgroup/cgroup_attach_task/enable")
	// Opening the trace for writing with O_TRUNC empties it.
	if err := os.WriteFile(filepath.Join(tracefs, "trace"), nil, 0); err != nil {
		return nil, err
	}
	if err := os.WriteFile(enable, []byte("1"), 0); err != nil {
		return nil, err
	}
	return func() ([]string, error) {
		if err := os.WriteFile(enable, []byte("0"), 0); err != nil {
			return nil, err
		}
		b, err := os.ReadFile(filepath.Join(tracefs, "trace"))
		if err != nil {
			return nil, err
		}
		var events []string
		for line := range strings.Lines(string(b)) {
			if !strings.HasPrefix(line, "#") && strings.Contains(line, "cgroup_attach_task") {
				events = append(events, strings.TrimSpace(line))
			}
		}
		return events, nil
	}, nil
}

// checkStaleCgroup: forgebox killed with SIGKILL mid-run cannot remove its
// group; the sandbox dies with it, and the next run removes the group.
func checkStaleCgroup(ctx context.Context, g *guest) (string, error) {
	if g.who != "root" {
		return "", skipError{"only root has cgroups in this guest"}
	}
	flags, err := g.launchFlags(ctx, "stale_cgroup")
	if err != nil {
		return "", err
	}
	cmd := exec.Command(g.forgeboxBin, append(append([]string{"run", "--no-policy", "--workspace", g.ws}, flags...), "--", "/bin/sleep", "30")...)
	cmd.Dir = g.ws
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	pattern := fmt.Sprintf("forgebox-%d-*", cmd.Process.Pid)
	var groups []string
	for deadline := time.Now().Add(30 * time.Second); ; {
		groups = findGroups(pattern)
		if len(groups) > 0 && len(groupProcs(groups)) > 0 {
			break
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("no group %s with a process in it 30s after forgebox started (groups %q); output: %s", pattern, groups, out.Bytes())
		}
		time.Sleep(20 * time.Millisecond)
	}
	inside := groupProcs(groups)
	cmd.Process.Signal(unix.SIGKILL)
	cmd.Wait()
	for deadline := time.Now().Add(5 * time.Second); len(groupProcs(groups)) > 0; {
		if time.Now().After(deadline) {
			return "", fmt.Errorf("5s after forgebox was killed, its sandbox still runs in %q: pids %v", groups, groupProcs(groups))
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, dir := range groups {
		if _, err := os.Stat(dir); err != nil {
			return "", fmt.Errorf("the killed run's group %s is gone before the next run: nothing to clean up (%v)", dir, err)
		}
	}
	r, o, err := g.runJSON(ctx, "stale_cgroup", append(flags, "--", "/bin/true")...)
	if err != nil {
		return "", err
	}
	if o.exit != 0 {
		g.logf("stale_cgroup", "%v", o)
		return "", fmt.Errorf("the next run exited %d", o.exit)
	}
	var still []string
	for _, dir := range groups {
		if _, err := os.Stat(dir); err == nil {
			still = append(still, dir)
		}
	}
	if len(still) > 0 {
		g.logf("stale_cgroup", "%v", o)
		return "", fmt.Errorf("the next run (group %s) left the killed run's groups %q", r.Enforced.Cgroup, still)
	}
	if left := afterRun(); left != "" {
		return "", errors.New(left)
	}
	return fmt.Sprintf("SIGKILL left %d directories (%d processes inside, dead within 5s); the next run removed them", len(groups), len(inside)), nil
}

// checkNprocBelowDefault: a caller whose RLIMIT_NPROC hard limit is below
// forgebox's default task limit (4096; the kernel's default on a machine
// with 1 GiB of RAM is about 3800, here about 1900) still gets its command
// run: a lower limit already binds it, and a default limit the host
// cannot enforce does not stop a run.
func checkNprocBelowDefault(ctx context.Context, g *guest) (string, error) {
	if g.who == "root" {
		return "", skipError{"RLIMIT_NPROC does not bind root, whose tasks a cgroup limits here"}
	}
	flags, err := g.launchFlags(ctx, "nproc_below_default")
	if err != nil {
		return "", err
	}
	const hard = 1024
	wrap := []string{"/bin/sh", "-c", fmt.Sprintf(`ulimit -u %d && exec "$0" "$@"`, hard)}
	r, o, err := g.runJSONVia(ctx, "nproc_below_default", wrap, append(flags, "--", "/bin/true")...)
	if err != nil {
		return "", err
	}
	if o.exit != 0 || r.Enforced == nil || r.Enforced.Limits == nil {
		g.logf("nproc_below_default", "%v", o)
		return "", fmt.Errorf("with RLIMIT_NPROC %d (under the default task limit), forgebox run -- /bin/true exited %d", hard, o.exit)
	}
	p := r.Enforced.Limits.Pids
	return fmt.Sprintf("ran under RLIMIT_NPROC %d: tasks limit %v by %s", hard, p.Value, p.Mechanism), nil
}

// afterRun describes what a finished run left: forgebox groups under
// /sys/fs/cgroup, or processes of the checks. Empty when nothing.
func afterRun() string {
	var problems []string
	if left := findGroups("forgebox-*"); len(left) > 0 {
		problems = append(problems, fmt.Sprintf("groups left under %s: %q", cgroupRoot, left))
	}
	var alive []process
	for deadline := time.Now().Add(leftoverGrace); ; {
		alive = alive[:0]
		ps, _ := processes()
		for _, p := range ps {
			if p.state != "Z" && (strings.HasPrefix(p.cmdline, "sleep 30") || strings.HasPrefix(p.cmdline, "/bin/fbvm-check hog")) {
				alive = append(alive, p)
			}
		}
		if len(alive) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(alive) > 0 {
		problems = append(problems, fmt.Sprintf("processes of the run still alive: %v", alive))
	}
	return strings.Join(problems, "; ")
}

// findGroups lists the cgroup directories named like pattern at the top
// of the v2 hierarchy or of any v1 hierarchy (or a level below: a
// delegated user's groups sit beside its own cgroup).
func findGroups(pattern string) []string {
	var found []string
	for _, parent := range []string{"", "*", "*/*"} {
		dirs, _ := filepath.Glob(filepath.Join(cgroupRoot, parent, pattern))
		for _, d := range dirs {
			if fi, err := os.Stat(d); err == nil && fi.IsDir() {
				found = append(found, d)
			}
		}
	}
	slices.Sort(found)
	return slices.Compact(found)
}

// groupProcs lists the processes in the groups' cgroup.procs files.
func groupProcs(groups []string) []int {
	var pids []int
	for _, d := range groups {
		b, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && !slices.Contains(pids, pid) {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return cmp.Or(s, "no message")
}

// lastNumber is the last word of out as a number, 0 if it is none: the
// count a guest loop printed before it was stopped.
func lastNumber(out string) int {
	f := strings.Fields(out)
	if len(f) == 0 {
		return 0
	}
	n, _ := strconv.Atoi(f[len(f)-1])
	return n
}

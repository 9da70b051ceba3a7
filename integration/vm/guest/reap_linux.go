package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// A run kind for the zombie checks: forgebox's arguments after
// `run --json --workspace WS`, and the exit status it must give (-1: any).
type runKind struct {
	name string
	args []string
	exit int
}

// checkNoZombies: twenty runs that launch their command leave no process
// behind, dead or alive: forgebox reaps its children before it exits.
func checkNoZombies(ctx context.Context, g *guest) (string, error) {
	flags, err := g.launchFlags(ctx, "no_zombies")
	if err != nil {
		return "", err
	}
	return g.noOrphans(ctx, "no_zombies", 20, []runKind{
		{"/bin/true", append(slices.Clone(flags), "--", "/bin/true"), 0},
		{"exit 3", append(slices.Clone(flags), "-c", "exit 3"), 3},
	})
}

// checkNoZombiesUnlaunched: runs that do not use the child forgebox
// forked when it started, because the arguments are invalid, the run is
// refused for a missing layer, or --net host needs another child, leave no
// process behind either.
func checkNoZombiesUnlaunched(ctx context.Context, g *guest) (string, error) {
	return g.noOrphans(ctx, "no_zombies_unlaunched", 6, []runKind{
		{"invalid", []string{"--memory", "512k", "--", "/bin/true"}, 125},
		// Refused for root where the kernel lacks a Landlock feature or
		// memory cgroups, for the user everywhere (no cgroup).
		{"unavailable", []string{"--memory", "64M", "--", "/bin/true"}, -1},
		{"--net host", []string{"--best-effort", "--net", "host", "--", "/bin/true"}, 0},
	})
}

// noOrphans makes n runs, cycling through kinds, and fails if any left a
// process behind. It makes this process a child subreaper, so that whatever
// forgebox orphans becomes its child, as it would become the child of a
// container's or a minimal VM's PID 1 that never reaps; it reaps nothing
// until the end, so an orphan shows up as a zombie (or as a process still
// running).
func (g *guest) noOrphans(ctx context.Context, name string, n int, kinds []runKind) (string, error) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return "", fmt.Errorf("become a child subreaper: %w", err)
	}
	seen := map[int]bool{}
	var orphans []string
	defer func() {
		unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
		for pid := range seen {
			unix.Kill(pid, unix.SIGKILL)
			unix.Wait4(pid, nil, 0, nil)
		}
	}()
	note := func(kind string) {
		for _, p := range adopted() {
			if !seen[p.pid] {
				seen[p.pid] = true
				orphans = append(orphans, fmt.Sprintf("after a %s run: %v, NSpid %s", kind, p, nsPID(p.pid)))
			}
		}
	}
	exits := map[string][]int{}
	for i := range n {
		k := kinds[i%len(kinds)]
		o, err := g.forgebox(ctx, append([]string{"run", "--no-policy", "--json", "--workspace", g.ws}, k.args...)...)
		if err != nil {
			return "", err
		}
		if k.exit >= 0 && o.exit != k.exit {
			g.logf(name, "%v", o)
			return "", fmt.Errorf("a %s run exited %d, want %d", k.name, o.exit, k.exit)
		}
		if !slices.Contains(exits[k.name], o.exit) {
			exits[k.name] = append(exits[k.name], o.exit)
		}
		note(k.name)
	}
	// An orphan still alive when forgebox exited dies of its parent-death
	// signal soon after; give it that time, then look again.
	time.Sleep(time.Second)
	note("late")
	var kindExits []string
	for _, k := range kinds {
		kindExits = append(kindExits, fmt.Sprintf("%s: exit %v", k.name, exits[k.name]))
	}
	if len(orphans) > 0 {
		for _, o := range orphans {
			g.logf(name, "%s", o)
		}
		zombies := 0
		for _, p := range adopted() {
			if p.state == "Z" {
				zombies++
			}
		}
		return "", fmt.Errorf("%d runs (%s) left %d orphans, %d of them zombies now: forgebox exited without reaping them",
			n, strings.Join(kindExits, ", "), len(orphans), zombies)
	}
	return fmt.Sprintf("%d runs (%s) left no process behind", n, strings.Join(kindExits, ", ")), nil
}

// adopted lists this process's children: with no forgebox running, each is
// an orphan it adopted as a subreaper.
func adopted() []process {
	ps, _ := processes()
	self := os.Getpid()
	var out []process
	for _, p := range ps {
		if p.ppid == self {
			out = append(out, p)
		}
	}
	return out
}

// nsPID is the NSpid line of /proc/PID/status: the process's pid in each
// pid namespace it belongs to ("1234 1" is PID 1 of a sandbox).
func nsPID(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "NSpid:"); ok {
			return strings.Join(strings.Fields(v), " ")
		}
	}
	return "?"
}

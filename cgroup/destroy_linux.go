package cgroup

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Destroy kills every process left in the group, waits until the group is
// empty and removes its directories. It works on a group whose command
// timed out or whose forgebox died (CleanStale calls it), and may be called
// again after an error. ctx bounds the wait; give it a context of its own,
// not one that has already expired with the run: Destroy kills and tries
// once even then, but cannot wait for slow exits.
func (g *Group) Destroy(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.impl == nil {
		return nil
	}
	if err := destroy(ctx, g.impl, g.name); err != nil {
		return fmt.Errorf("destroy cgroup %s: %w", g.name, err)
	}
	g.impl = nil
	return nil
}

// destroy removes the group's directories, and while the kernel refuses
// because processes are left, SIGKILLs them: with cgroup.kill where the
// kernel has it, else one by one, again and again, since a process may
// fork while its siblings die. The common case, a group whose command has
// exited, costs one rmdir per directory.
func destroy(ctx context.Context, g groupImpl, name string) error {
	pause := 50 * time.Microsecond
	tried, atOnce := false, false
	for {
		var busy []string
		for _, p := range g.paths() {
			left, err := rmdirTree(p)
			if err != nil {
				return err
			}
			if left {
				busy = append(busy, p)
			}
		}
		if len(busy) == 0 {
			return nil
		}
		if !tried {
			var err error
			if atOnce, err = g.kill(); err != nil {
				return fmt.Errorf("kill: %w", err)
			}
			tried = true
		}
		var pids []int
		for _, p := range busy {
			var err error
			if pids, err = procsUnder(p, pids); err != nil {
				return err
			}
		}
		if !atOnce {
			for _, pid := range pids {
				if err := killMember(pid, name); err != nil {
					return err
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d processes still in the group: %w", len(pids), ctx.Err())
		case <-time.After(pause):
		}
		pause = min(2*pause, 10*time.Millisecond)
	}
}

// killMember SIGKILLs pid if it is still in the group. The pid was read
// from cgroup.procs and may have been reused since: the pidfd pins one
// process, and the membership check then looks at that process, so an
// unrelated process that took the number is never signalled (a pidfd whose
// process has died signals nothing).
func killMember(pid int, name string) error {
	fd, err := unix.PidfdOpen(pid, 0)
	switch {
	case errors.Is(err, unix.ESRCH):
		return nil
	case errors.Is(err, unix.ENOSYS):
		if inGroup(pid, name) { // Linux < 5.3: a small window remains
			unix.Kill(pid, unix.SIGKILL)
		}
		return nil
	case err != nil:
		return fmt.Errorf("pidfd_open %d: %w", pid, err)
	}
	defer unix.Close(fd)
	if !inGroup(pid, name) {
		return nil
	}
	if err := unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0); err != nil && !errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("kill %d: %w", pid, err)
	}
	return nil
}

// inGroup reports whether /proc/PID/cgroup puts pid in group name (or a
// group below it) in any hierarchy.
func inGroup(pid int, name string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(b)) {
		_, path, _ := strings.Cut(strings.TrimSpace(line), ":")
		_, path, _ = strings.Cut(path, ":")
		if slices.Contains(strings.Split(path, "/"), name) {
			return true
		}
	}
	return false
}

// CleanStale destroys the groups left by forgebox processes that are gone
// (a forgebox killed with SIGKILL cannot clean up) and returns their
// directories. It never touches a group whose owner is alive, nor one made
// in another pid namespace, whose owner it cannot check. On a host where
// the caller cannot create groups there is nothing of its own to clean.
func CleanStale(ctx context.Context, h Host) (removed []string, err error) {
	if !h.CanCreate {
		return nil, nil
	}
	self, err := selfOwner()
	if err != nil {
		return nil, fmt.Errorf("clean stale cgroups: %w", err)
	}
	var dirs []string
	if h.Version == VersionV2 {
		dirs = []string{h.Root}
	} else {
		for _, c := range []string{Memory, Pids, CPUAcct, CPU} {
			dirs = append(dirs, filepath.Join(h.Root, c))
		}
	}
	var stale []string
	for _, dir := range dirs {
		ents, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("clean stale cgroups: %w", err)
		}
		for _, e := range ents {
			o, _, ok := parseGroupName(e.Name())
			if ok && e.IsDir() && o.PidNS == self.PidNS && !alive(o) && !slices.Contains(stale, e.Name()) {
				stale = append(stale, e.Name())
			}
		}
	}
	var errs []error
	for _, name := range stale {
		var impl groupImpl
		if h.Version == VersionV2 {
			impl, err = loadV2(h.Root, name)
		} else {
			impl, err = loadV1(h.Root, name)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("load stale cgroup %s: %w", name, err))
			continue
		}
		g := &Group{name: name, impl: impl}
		paths := impl.paths()
		if err := g.Destroy(ctx); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, paths...)
	}
	return removed, errors.Join(errs...)
}

// selfOwner identifies this process for the names of its groups.
func selfOwner() (owner, error) {
	start, err := startTime("self")
	if err != nil {
		return owner{}, err
	}
	link, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return owner{}, err
	}
	var ns uint64
	if _, err := fmt.Sscanf(link, "pid:[%d]", &ns); err != nil {
		return owner{}, fmt.Errorf("parse %q: %w", link, err)
	}
	return owner{PID: os.Getpid(), Start: start, PidNS: ns}, nil
}

// alive reports whether the owner still runs. In doubt it says yes: a
// group kept too long costs little, a group destroyed under a live run
// kills that run.
func alive(o owner) bool {
	start, err := startTime(strconv.Itoa(o.PID))
	if err == nil {
		return start == o.Start
	}
	if errors.Is(err, fs.ErrNotExist) {
		// hidden from us (hidepid) or gone: kill(0) tells
		return !errors.Is(unix.Kill(o.PID, 0), unix.ESRCH)
	}
	return true
}

// startTime reads field 22 of /proc/PID/stat, the start time in clock
// ticks after boot.
func startTime(pid string) (uint64, error) {
	f, err := os.Open("/proc/" + pid + "/stat")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil && line == "" {
		return 0, err
	}
	return parseStartTime(line)
}

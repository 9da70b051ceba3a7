package cgroup

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// testHost is a host the group tests run on.
type testHost struct {
	name string
	Host
}

// hosts lists what this machine offers: the host Probe describes, when the
// caller may create groups there, and on a hybrid host run by root the
// cgroup2 mount without controllers, which still runs the whole v2 code
// path except the limits.
func hosts(t *testing.T) []testHost {
	t.Helper()
	var out []testHost
	h := Probe()
	if h.CanCreate {
		out = append(out, testHost{"probe-" + string(h.Version), h})
	}
	if h.Version == VersionHybrid && os.Geteuid() == 0 {
		root := filepath.Join(mountRoot, "unified")
		out = append(out, testHost{"unified-v2", Host{Version: VersionV2, CanCreate: true, Root: root,
			Controllers: usableV2(root), UID: 0}})
	}
	if len(out) == 0 {
		t.Skipf("cannot create cgroups here (uid %d): %s", h.UID, h.Why)
	}
	return out
}

// withControllers returns the first host that has every controller in cs.
func withControllers(t *testing.T, cs ...string) Host {
	t.Helper()
	for _, h := range hosts(t) {
		if !slices.ContainsFunc(cs, func(c string) bool { return !h.Has(c) }) {
			return h.Host
		}
	}
	t.Skipf("no cgroup host here offers the %s controllers", strings.Join(cs, ", "))
	return Host{}
}

// create makes a group that is destroyed when the test ends.
func create(t *testing.T, h Host, id string, l Limits) *Group {
	t.Helper()
	g, err := Create(h, id, l)
	if err != nil {
		t.Fatalf("Create(%q, %+v) on %s: %v", id, l, h.Root, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := g.Destroy(ctx); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return g
}

// controllerFile is the path of a control file of g.
func controllerFile(h Host, g *Group, ctrl, file string) string {
	if h.Version == VersionV2 {
		return filepath.Join(h.Root, g.Name(), file)
	}
	return filepath.Join(h.Root, ctrl, g.Name(), file)
}

func mustReadInt(t *testing.T, path string) int64 {
	t.Helper()
	n, err := readInt(path)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// membersOf scans /proc for processes in group name.
func membersOf(name string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && inGroup(pid, name) {
			out = append(out, pid)
		}
	}
	return out
}

// checkGone fails unless every directory of paths is gone.
func checkGone(t *testing.T, paths []string) {
	t.Helper()
	if len(paths) == 0 {
		t.Fatal("group had no directories")
	}
	for _, p := range paths {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("after Destroy, stat %s: %v, want not exist", p, err)
		}
	}
}

func killedBySIGKILL(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

func TestForkBombIsContained(t *testing.T) {
	h := withControllers(t, Pids)
	const limit = 32
	g := create(t, h, "forkbomb", Limits{Pids: limit})
	bomb := exec.Command("/bin/sh", "-c", "read go; f() { f | f & }; f; wait")
	stdin, err := bomb.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := bomb.Start(); err != nil {
		t.Fatal(err)
	}
	defer bomb.Wait()
	if err := g.Add(bomb.Process.Pid); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, "go\n")

	current := controllerFile(h, g, Pids, "pids.current")
	var peak int64
	for end := time.Now().Add(500 * time.Millisecond); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		peak = max(peak, mustReadInt(t, current))
	}
	if peak > limit {
		t.Errorf("pids.current peaked at %d, above the limit %d", peak, limit)
	}
	if peak < limit/2 {
		t.Errorf("pids.current peaked at %d: the bomb never came near the limit %d", peak, limit)
	}
	// The host is fine: it still starts processes, at once.
	start := time.Now()
	if out, err := exec.Command("/bin/echo", "alive").Output(); err != nil || string(out) != "alive\n" {
		t.Errorf("starting a process on the host during the bomb: %q, %v", out, err)
	}
	t.Logf("pids.current peak %d (limit %d); a host process started in %v", peak, limit, time.Since(start))
	s, err := g.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if s.ForksRefused == 0 {
		t.Errorf("Stats().ForksRefused = 0, want > 0 after a fork bomb")
	}

	// Destroy while the bomb still forks.
	paths := g.Paths()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start = time.Now()
	if err := g.Destroy(ctx); err != nil {
		t.Fatalf("Destroy with a live fork bomb: %v", err)
	}
	t.Logf("Destroy of a raging fork bomb took %v; %d forks refused", time.Since(start), s.ForksRefused)
	checkGone(t, paths)
	if left := membersOf(g.Name()); len(left) > 0 {
		t.Errorf("processes %v still in the destroyed group", left)
	}
}

func TestMemoryHogIsOOMKilled(t *testing.T) {
	h := withControllers(t, Memory)
	const limit = 64 << 20
	g := create(t, h, "hog", Limits{MemoryBytes: limit})
	hp := startHelper(t, "hog", nil)
	if err := g.Add(hp.cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	hp.goAhead(t)
	err := hp.cmd.Wait()
	if !killedBySIGKILL(err) {
		t.Fatalf("hog ended with %v, want killed by SIGKILL", err)
	}
	s, err := g.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if !s.OOMKilled {
		t.Errorf("Stats().OOMKilled = false after the OOM killer killed the hog")
	}
	t.Logf("stats: %+v", s)
	if h.Version == VersionV2 && !exists(controllerFile(h, g, Memory, "memory.peak")) {
		t.Logf("no memory.peak on this kernel (before 5.19): PeakMemoryBytes not checked")
		return
	}
	// v2's memory.peak may pass memory.max by the charge the kernel refused
	if s.PeakMemoryBytes < limit*3/4 || s.PeakMemoryBytes > limit+1<<20 {
		t.Errorf("Stats().PeakMemoryBytes = %d, want near the limit %d", s.PeakMemoryBytes, limit)
	}
}

func TestCPUTimeIsReported(t *testing.T) {
	h := cpuAccounting(t)
	g := create(t, h, "cputime", Limits{})
	hp := startHelper(t, "burn:300ms", nil)
	if err := g.Add(hp.cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	hp.goAhead(t)
	if err := hp.cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	s, err := g.Stats()
	if err != nil {
		t.Fatal(err)
	}
	// the helper's start-up ran before Add, outside the group
	if s.CPUTime < 250*time.Millisecond || s.CPUTime > 5*time.Second {
		t.Errorf("Stats().CPUTime = %v for a process that used 300ms of CPU, want about that", s.CPUTime)
	}
}

// cpuAccounting is a host whose groups measure CPU time: every v2 host,
// v1 with cpuacct.
func cpuAccounting(t *testing.T) Host {
	t.Helper()
	for _, h := range hosts(t) {
		if h.Version == VersionV2 || h.Has(CPUAcct) {
			return h.Host
		}
	}
	t.Skip("no cgroup host here accounts CPU time")
	return Host{}
}

func TestCPULimitThrottles(t *testing.T) {
	h := withControllers(t, CPU)
	if h.Version != VersionV2 && !h.Has(CPUAcct) {
		t.Skip("no cpuacct hierarchy to measure with")
	}
	const wall = 600 * time.Millisecond
	g := create(t, h, "cpulimit", Limits{CPUs: 0.25})
	hp := startHelper(t, "spin:"+wall.String(), nil)
	if err := g.Add(hp.cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	hp.goAhead(t)
	if err := hp.cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	s, err := g.Stats()
	if err != nil {
		t.Fatal(err)
	}
	// a quarter of the time it ran, plus two periods of slack (the clocks
	// of an emulated machine drift); unthrottled it would use all of it
	if limit := elapsed/4 + 2*cfsPeriod*time.Microsecond; s.CPUTime > limit {
		t.Errorf("CPUTime = %v spinning %v at 0.25 CPUs, want at most %v", s.CPUTime, elapsed, limit)
	}
	if s.CPUTime < wall/10 {
		t.Errorf("CPUTime = %v: the spinner hardly ran", s.CPUTime)
	}
}

func TestDestroyKillsWhatIsLeft(t *testing.T) {
	for _, h := range hosts(t) {
		t.Run(h.name, func(t *testing.T) {
			g, err := Create(h.Host, "destroy", Limits{})
			if err != nil {
				t.Fatal(err)
			}
			// a process and its child, both left running, as after a timeout
			cmd := exec.Command("/bin/sh", "-c", "read go; sleep 1000 & exec sleep 1000")
			stdin, _ := cmd.StdinPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if err := g.Add(cmd.Process.Pid); err != nil {
				t.Fatal(err)
			}
			io.WriteString(stdin, "go\n")
			for end := time.Now().Add(2 * time.Second); len(membersOf(g.Name())) < 2 && time.Now().Before(end); {
				time.Sleep(time.Millisecond)
			}
			if n := len(membersOf(g.Name())); n != 2 {
				t.Fatalf("%d processes in the group, want 2", n)
			}
			paths := g.Paths()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := g.Destroy(ctx); err != nil {
				t.Fatal(err)
			}
			checkGone(t, paths)
			if err := cmd.Wait(); !killedBySIGKILL(err) {
				t.Errorf("process left in the group ended with %v, want killed by SIGKILL", err)
			}
			if err := g.Destroy(ctx); err != nil {
				t.Errorf("second Destroy: %v, want nil", err)
			}
			if err := g.Add(os.Getpid()); !errors.Is(err, ErrDestroyed) {
				t.Errorf("Add after Destroy: %v, want ErrDestroyed", err)
			}
		})
	}
}

func TestCreateRefusesAnExistingGroup(t *testing.T) {
	for _, h := range hosts(t) {
		t.Run(h.name, func(t *testing.T) {
			create(t, h.Host, "twice", Limits{})
			if g, err := Create(h.Host, "twice", Limits{}); err == nil || !errors.Is(err, fs.ErrExist) {
				t.Errorf("second Create of the same id: %v, want an error wrapping fs.ErrExist", err)
				if g != nil {
					g.Destroy(context.Background())
				}
			}
		})
	}
}

func TestCreateChecks(t *testing.T) {
	if _, err := Create(Host{Why: "no cgroups for you"}, "x", Limits{}); !errors.Is(err, ErrCannotCreate) ||
		!strings.Contains(err.Error(), "no cgroups for you") {
		t.Errorf("Create on a host that cannot: %v, want ErrCannotCreate with the reason", err)
	}
	h := Host{Version: VersionV2, CanCreate: true, Root: t.TempDir(), Controllers: []string{Pids}}
	if _, err := Create(h, "../escape", Limits{}); !errors.Is(err, ErrInvalidID) {
		t.Errorf("Create with id ../escape: %v, want ErrInvalidID", err)
	}
	if _, err := Create(h, "x", Limits{MemoryBytes: 1 << 30}); !errors.Is(err, ErrCannotCreate) {
		t.Errorf("Create with a memory limit and no memory controller: %v, want ErrCannotCreate", err)
	}
}

func TestDirIsForV2Only(t *testing.T) {
	for _, h := range hosts(t) {
		t.Run(h.name, func(t *testing.T) {
			g := create(t, h.Host, "dir", Limits{})
			f, err := g.Dir()
			if h.Version != VersionV2 {
				if !errors.Is(err, ErrCgroupV1) {
					t.Errorf("Dir on %s: %v, want ErrCgroupV1", h.Version, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			// clone3(CLONE_INTO_CGROUP): the process starts inside
			cmd := exec.Command("/bin/sleep", "1000")
			cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: int(f.Fd())}
			if err := cmd.Start(); err != nil {
				t.Fatalf("start with CLONE_INTO_CGROUP: %v", err)
			}
			defer cmd.Wait()
			if !inGroup(cmd.Process.Pid, g.Name()) {
				b, _ := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/cgroup")
				t.Errorf("process started into %s is in %s", g.Name(), b)
			}
			if _, err := g.Stats(); err != nil {
				t.Errorf("Stats: %v", err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := g.Destroy(ctx); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); !killedBySIGKILL(err) {
				t.Errorf("process ended with %v, want killed by SIGKILL (cgroup.kill)", err)
			}
		})
	}
}

func TestCleanStale(t *testing.T) {
	for _, h := range hosts(t) {
		t.Run(h.name, func(t *testing.T) { testCleanStale(t, h.Host) })
	}
}

func testCleanStale(t *testing.T, h Host) {
	self, err := selfOwner()
	if err != nil {
		t.Fatal(err)
	}
	dead := exec.Command("/bin/true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	live := exec.Command("/bin/sleep", "1000")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { live.Process.Kill(); live.Wait() }()
	liveStart, err := startTime(strconv.Itoa(live.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	// groups as if made by other forgebox processes
	mk := func(o owner, id string) *Group {
		t.Helper()
		name := groupName(o, id)
		var impl groupImpl
		if h.Version == VersionV2 {
			impl, err = createV2(h, name, Limits{})
		} else {
			impl, err = createV1(h, name, Limits{})
		}
		if err != nil {
			t.Fatal(err)
		}
		g := &Group{name: name, impl: impl}
		t.Cleanup(func() { g.Destroy(context.Background()) })
		return g
	}
	deadOwner := mk(owner{dead.Process.Pid, 1, self.PidNS}, "dead")
	reused := mk(owner{live.Process.Pid, liveStart + 1, self.PidNS}, "reused")
	liveOwner := mk(owner{live.Process.Pid, liveStart, self.PidNS}, "live")
	otherNS := mk(owner{dead.Process.Pid, 1, self.PidNS + 1}, "otherns")
	mine := create(t, h, "mine", Limits{})

	// a leftover command still running in the dead owner's group
	orphan := exec.Command("/bin/sleep", "1000")
	if err := orphan.Start(); err != nil {
		t.Fatal(err)
	}
	defer orphan.Wait()
	if err := deadOwner.Add(orphan.Process.Pid); err != nil {
		t.Fatal(err)
	}

	want := append(deadOwner.Paths(), reused.Paths()...)
	keep := [][]string{liveOwner.Paths(), otherNS.Paths(), mine.Paths()}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	removed, err := CleanStale(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range want {
		if !slices.Contains(removed, p) {
			t.Errorf("CleanStale removed %v, want it to include %s", removed, p)
		}
	}
	checkGone(t, want)
	for _, paths := range keep {
		for _, p := range paths {
			if slices.Contains(removed, p) {
				t.Errorf("CleanStale removed %s, whose owner is alive or unknown", p)
			}
			if _, err := os.Stat(p); err != nil {
				t.Errorf("kept group: %v", err)
			}
		}
	}
	if err := orphan.Wait(); !killedBySIGKILL(err) {
		t.Errorf("process in the stale group ended with %v, want killed by SIGKILL", err)
	}
}

// TestCloneIntoFromUserNS starts a process into the group the way the
// sandbox does on cgroup v2: its PID 1, in a user and PID namespace of its
// own, clones the command with CLONE_INTO_CGROUP on the directory
// descriptor the parent passed down. The kernel checks write access to
// cgroup.procs of the common ancestor with the cloning process's
// credentials, so this needs the namespace's uid 0 to be the caller.
func TestCloneIntoFromUserNS(t *testing.T) {
	ran := false
	for _, h := range hosts(t) {
		if h.Version != VersionV2 {
			continue
		}
		ran = true
		t.Run(h.name, func(t *testing.T) {
			g := create(t, h.Host, "cloneinto", Limits{})
			f, err := g.Dir()
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			attr := &syscall.SysProcAttr{
				Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID,
				UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}},
				GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}},
			}
			hp := startHelper(t, "cloneinto", attr, f)
			hp.goAhead(t)
			line, err := hp.out.ReadString('\n')
			if line != "started\n" {
				t.Fatalf("PID 1 in a user namespace, cloning into %s: %q, %v", g.Name(), line, err)
			}
			members := membersOf(g.Name())
			if len(members) != 1 || members[0] == hp.cmd.Process.Pid {
				t.Errorf("members of the group: %v, want the command alone (its PID 1 is %d)", members, hp.cmd.Process.Pid)
			}
			hp.stdin.Close()
			if err := hp.cmd.Wait(); err != nil {
				t.Errorf("helper: %v", err)
			}
		})
	}
	if !ran {
		t.Skip("no cgroup v2 host here")
	}
}

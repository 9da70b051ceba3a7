package cgroup

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/containerd/cgroups/v3/cgroup2"
)

// v2Group is a group on the unified hierarchy, made and filled with
// containerd's cgroup2 package. Plain files do the rest: reading and
// removal (files_linux.go says why), the directory descriptor for clone3,
// and cgroup.kill, since the library's Kill falls back on old kernels to
// reaping the caller's own children, which would steal the sandbox
// child's exit status from the launcher.
type v2Group struct {
	path string
	m    *cgroup2.Manager
}

func createV2(h Host, name string, l Limits) (groupImpl, error) {
	path := filepath.Join(h.Root, name)
	// Exclusive, so that Create never adopts a group someone else made.
	if err := os.Mkdir(path, 0o755); err != nil {
		return nil, err
	}
	g, err := setupV2(h, name, path, l)
	if err != nil {
		os.Remove(path)
		return nil, err
	}
	return g, nil
}

func setupV2(h Host, name, path string, l Limits) (*v2Group, error) {
	res := &cgroup2.Resources{}
	if h.Has(Memory) {
		res.Memory = &cgroup2.Memory{}
		if m := l.MemoryBytes; m > 0 {
			res.Memory.Max = &m
		}
	}
	if h.Has(Pids) {
		res.Pids = &cgroup2.Pids{Max: l.Pids}
	}
	if l.CPUs > 0 {
		quota, period := cfsQuota(l.CPUs), uint64(cfsPeriod)
		res.CPU = &cgroup2.CPU{Max: cgroup2.NewCPUMax(&quota, &period)}
	}
	m, err := cgroup2.Load("/"+name, cgroup2.WithMountpoint(h.Root))
	if err != nil {
		return nil, err
	}
	// Enable in the parent only what is not on yet: a delegated parent may
	// let us create children without letting us write its subtree_control.
	enabled := fields(filepath.Join(h.Root, "cgroup.subtree_control"))
	var missing []string
	for _, c := range res.EnabledControllers() {
		if !slices.Contains(enabled, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		if err := m.ToggleControllers(missing, cgroup2.Enable); err != nil {
			return nil, err
		}
	}
	if err := m.Update(res); err != nil {
		return nil, err
	}
	// v2 has no memory+swap knob: no swap at all keeps memory+swap under
	// memory.max, as memory.memsw.limit_in_bytes does on v1.
	if l.MemoryBytes > 0 && exists(filepath.Join(path, "memory.swap.max")) {
		zero := int64(0)
		if err := m.Update(&cgroup2.Resources{Memory: &cgroup2.Memory{Swap: &zero}}); err != nil {
			return nil, err
		}
	}
	return &v2Group{path: path, m: m}, nil
}

// loadV2 attaches to an existing group, for CleanStale.
func loadV2(root, name string) (groupImpl, error) {
	m, err := cgroup2.Load("/"+name, cgroup2.WithMountpoint(root))
	if err != nil {
		return nil, err
	}
	return &v2Group{path: filepath.Join(root, name), m: m}, nil
}

func (g *v2Group) add(pid int) error { return g.m.AddProc(uint64(pid)) }

func (g *v2Group) joinFile() string { return "cgroup.procs" }

func (g *v2Group) paths() []string { return []string{g.path} }

func (g *v2Group) dir() (*os.File, error) { return openDir(g.path) }

func (g *v2Group) stats() (Stats, error) {
	var s Stats
	var err error
	// memory.peak appeared in Linux 5.19; before, the peak is unknown (0)
	if s.PeakMemoryBytes, err = readInt(filepath.Join(g.path, "memory.peak")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return s, err
	}
	usec, err := eventCount(filepath.Join(g.path, "cpu.stat"), "usage_usec")
	if err != nil {
		return s, err
	}
	s.CPUTime = time.Duration(usec) * time.Microsecond
	kills, err := eventCount(filepath.Join(g.path, "memory.events"), "oom_kill")
	if err != nil && !errors.Is(err, fs.ErrNotExist) { // no memory controller
		return s, err
	}
	s.OOMKilled = kills > 0
	if s.ForksRefused, err = eventCount(filepath.Join(g.path, "pids.events"), "max"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return s, err
	}
	return s, nil
}

// kill writes cgroup.kill (Linux 5.14+), which SIGKILLs the whole subtree
// at once, new forks included.
func (g *v2Group) kill() (bool, error) {
	err := os.WriteFile(filepath.Join(g.path, "cgroup.kill"), []byte("1"), 0)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/containerd/cgroups/v3/cgroup1"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// cfsPeriod is the CPU bandwidth period, the kernel's default (100 ms).
const cfsPeriod = 100_000

// v1Group is a group on cgroup v1, made and filled with containerd's
// cgroup1 package on the static hierarchy under root (no systemd), read
// and removed with plain files (files_linux.go says why).
type v1Group struct {
	root  string   // e.g. /sys/fs/cgroup
	name  string   // the group's directory name in each hierarchy
	ctrls []string // the controllers it uses
	dirs  []string // its directories, one per hierarchy (co-mounted controllers share one)
	cg    cgroup1.Cgroup
}

// v1Controllers picks the hierarchies for a group with limits l: memory,
// pids and cpuacct whenever the host has them (they measure Stats and
// count the tasks Destroy kills), cpu only for a CPU limit.
func v1Controllers(h Host, l Limits) []string {
	var out []string
	for _, c := range []string{Memory, Pids, CPUAcct, CPU} {
		if h.Has(c) && (c != CPU || l.CPUs > 0) {
			out = append(out, c)
		}
	}
	return out
}

// v1Subsystems is the containerd hierarchy for ctrls, so that it creates
// and fills those and no other controller's directories.
func v1Subsystems(root string, ctrls []string) cgroup1.Hierarchy {
	return func() ([]cgroup1.Subsystem, error) {
		var s []cgroup1.Subsystem
		for _, c := range ctrls {
			switch c {
			case Memory:
				s = append(s, cgroup1.NewMemory(root, cgroup1.OptionalSwap()))
			case Pids:
				s = append(s, cgroup1.NewPids(root))
			case CPU:
				s = append(s, cgroup1.NewCpu(root))
			case CPUAcct:
				s = append(s, cgroup1.NewCpuacct(root))
			}
		}
		return s, nil
	}
}

func createV1(h Host, name string, l Limits) (groupImpl, error) {
	ctrls := v1Controllers(h, l)
	dirs, err := v1Dirs(h.Root, name, ctrls)
	if err != nil {
		return nil, err
	}
	// Make each directory first, exclusively, so that Create never adopts
	// a group someone else made; containerd's New would (it uses MkdirAll).
	var made []string
	undo := func() {
		for _, d := range slices.Backward(made) {
			unix.Rmdir(d)
		}
	}
	for _, d := range dirs {
		if err := os.Mkdir(d, 0o755); err != nil {
			undo()
			return nil, err
		}
		made = append(made, d)
	}
	res := &specs.LinuxResources{}
	if m := l.MemoryBytes; m > 0 {
		res.Memory = &specs.LinuxMemory{Limit: &m}
		if exists(filepath.Join(h.Root, Memory, "memory.memsw.limit_in_bytes")) {
			res.Memory.Swap = &m // memory+swap, so swap cannot dodge the limit
		}
	}
	if n := l.Pids; n > 0 {
		res.Pids = &specs.LinuxPids{Limit: &n}
	}
	if l.CPUs > 0 {
		quota, period := cfsQuota(l.CPUs), uint64(cfsPeriod)
		res.CPU = &specs.LinuxCPU{Quota: &quota, Period: &period}
	}
	cg, err := cgroup1.New(cgroup1.StaticPath("/"+name), res, cgroup1.WithHierarchy(v1Subsystems(h.Root, ctrls)))
	if err != nil {
		undo()
		return nil, fmt.Errorf("set limits: %w", err)
	}
	return &v1Group{root: h.Root, name: name, ctrls: ctrls, dirs: dirs, cg: cg}, nil
}

// v1Dirs lists the group's directories for ctrls: co-mounted controllers
// (cpu,cpuacct) share one hierarchy, reached through symlinks.
func v1Dirs(root, name string, ctrls []string) ([]string, error) {
	var dirs []string
	for _, c := range ctrls {
		h := filepath.Join(root, c)
		if target, err := os.Readlink(h); err == nil {
			if filepath.IsAbs(target) {
				h = filepath.Clean(target)
			} else {
				h = filepath.Join(root, target)
			}
		}
		if d := filepath.Join(h, name); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs, nil
}

// loadV1 finds the directories of an existing group, for CleanStale.
func loadV1(root, name string) (groupImpl, error) {
	var ctrls []string
	for _, c := range []string{Memory, Pids, CPUAcct, CPU} {
		if exists(filepath.Join(root, c, name)) {
			ctrls = append(ctrls, c)
		}
	}
	dirs, err := v1Dirs(root, name, ctrls)
	if err != nil {
		return nil, err
	}
	cg, err := cgroup1.Load(cgroup1.StaticPath("/"+name), cgroup1.WithHierarchy(v1Subsystems(root, ctrls)))
	if err != nil {
		return nil, err
	}
	return &v1Group{root: root, name: name, ctrls: ctrls, dirs: dirs, cg: cg}, nil
}

// cfsQuota converts cores to a quota per cfsPeriod; the kernel's minimum
// quota is 1 ms.
func cfsQuota(cpus float64) int64 {
	return max(int64(cpus*cfsPeriod), 1000)
}

func (g *v1Group) add(pid int) error { return g.cg.AddProc(uint64(pid)) }

func (g *v1Group) joinFile() string { return "tasks" }

func (g *v1Group) paths() []string { return g.dirs }

func (g *v1Group) dir() (*os.File, error) { return nil, ErrCgroupV1 }

func (g *v1Group) stats() (Stats, error) {
	var s Stats
	var err error
	dir := func(c string) string { return filepath.Join(g.root, c, g.name) }
	if slices.Contains(g.ctrls, Memory) {
		if s.PeakMemoryBytes, err = readInt(filepath.Join(dir(Memory), "memory.max_usage_in_bytes")); err != nil {
			return s, err
		}
		// oom_kill appeared in Linux 4.13; before, it reads as no kill
		n, err := eventCount(filepath.Join(dir(Memory), "memory.oom_control"), "oom_kill")
		if err != nil {
			return s, err
		}
		s.OOMKilled = n > 0
	}
	if slices.Contains(g.ctrls, CPUAcct) {
		ns, err := readInt(filepath.Join(dir(CPUAcct), "cpuacct.usage"))
		if err != nil {
			return s, err
		}
		s.CPUTime = time.Duration(ns)
	}
	if slices.Contains(g.ctrls, Pids) {
		if s.ForksRefused, err = eventCount(filepath.Join(dir(Pids), "pids.events"), "max"); err != nil {
			return s, err
		}
	}
	return s, nil
}

// kill: cgroup v1 has no cgroup.kill; Destroy signals each process.
func (g *v1Group) kill() (bool, error) { return false, nil }

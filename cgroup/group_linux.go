package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"golang.org/x/sys/unix"
)

// Group is one run's cgroup: on v1 a directory of the same name in each
// controller hierarchy it uses, on v2 one directory.
type Group struct {
	name string
	mu   sync.Mutex
	impl groupImpl // nil once destroyed
}

// groupImpl is the version-specific half of a Group.
type groupImpl interface {
	add(pid int) error
	stats() (Stats, error)
	// paths lists the group's directories.
	paths() []string
	// kill kills every process in the group at once, if the kernel can
	// (cgroup.kill); ok is false when it cannot.
	kill() (ok bool, err error)
	dir() (*os.File, error)
	// joinFile names the file a process writes "0" to, to join.
	joinFile() string
}

// Create creates the group of run id on host h (from Probe) and sets limits
// l on it; a limit whose controller h lacks is an error. Give it the limits
// Plan assigned to cgroups (Decision.Cgroup). The group always gets the
// controllers that measure Stats when h has them, and the cpu controller
// only for a CPU limit. Create fails if the group exists already.
func Create(h Host, id string, l Limits) (*Group, error) {
	if !h.CanCreate {
		return nil, fmt.Errorf("create cgroup for %q: %w: %s", id, ErrCannotCreate, orUnknown(h.Why))
	}
	if err := checkID(id); err != nil {
		return nil, fmt.Errorf("create cgroup: %w", err)
	}
	for _, need := range []struct {
		set  bool
		ctrl string
	}{{l.MemoryBytes > 0, Memory}, {l.Pids > 0, Pids}, {l.CPUs > 0, CPU}} {
		if need.set && !h.Has(need.ctrl) {
			return nil, fmt.Errorf("create cgroup for %q: %w: no %s controller under %s",
				id, ErrCannotCreate, need.ctrl, h.Root)
		}
	}
	o, err := selfOwner()
	if err != nil {
		return nil, fmt.Errorf("create cgroup for %q: %w", id, err)
	}
	name := groupName(o, id)
	var impl groupImpl
	if h.Version == VersionV2 {
		impl, err = createV2(h, name, l)
	} else {
		impl, err = createV1(h, name, l)
	}
	if err != nil {
		return nil, fmt.Errorf("create cgroup %s: %w", name, err)
	}
	return &Group{name: name, impl: impl}, nil
}

// Name is the group's directory name, forgebox-PID-START-PIDNS-ID.
func (g *Group) Name() string { return g.name }

// Paths lists the group's directories: one per v1 hierarchy, one on v2.
func (g *Group) Paths() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.impl == nil {
		return nil
	}
	return slices.Clone(g.impl.paths())
}

// Add moves process pid into the group (into every hierarchy on v1).
func (g *Group) Add(pid int) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.impl == nil {
		return fmt.Errorf("add pid %d to cgroup %s: %w", pid, g.name, ErrDestroyed)
	}
	if err := g.impl.add(pid); err != nil {
		return fmt.Errorf("add pid %d to cgroup %s: %w", pid, g.name, err)
	}
	return nil
}

// Dir opens the group's directory for clone3(CLONE_INTO_CGROUP), which
// starts a process inside the group before its first instruction. cgroup v2
// only: on v1 it fails with ErrCgroupV1 and the caller uses Add. The
// descriptor is close-on-exec; the caller closes it.
func (g *Group) Dir() (*os.File, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.impl == nil {
		return nil, fmt.Errorf("open cgroup %s: %w", g.name, ErrDestroyed)
	}
	f, err := g.impl.dir()
	if err != nil {
		return nil, fmt.Errorf("open cgroup %s: %w", g.name, err)
	}
	return f, nil
}

// JoinFiles opens, for writing, the file of each of the group's
// directories through which a single-threaded process joins the group by
// writing "0" (itself). The kernel checks the credentials of the opener, not
// of the writer, so a sandboxed process without privileges can join before
// it execs. The descriptors are close-on-exec; the caller closes them.
//
// On cgroup v1 that file is tasks, which moves the writing thread alone:
// for the calling thread the kernel skips the global lock that a move
// through cgroup.procs write-locks, which waits for an RCU grace period
// (12-14 ms here, against well under 1 ms). A single-threaded process is
// moved whole either way. On cgroup v2 it is cgroup.procs.
func (g *Group) JoinFiles() ([]*os.File, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.impl == nil {
		return nil, fmt.Errorf("open cgroup %s: %w", g.name, ErrDestroyed)
	}
	var files []*os.File
	for _, dir := range g.impl.paths() {
		f, err := os.OpenFile(filepath.Join(dir, g.impl.joinFile()), os.O_WRONLY, 0)
		if err != nil {
			for _, f := range files {
				f.Close()
			}
			return nil, fmt.Errorf("open cgroup %s: %w", g.name, err)
		}
		files = append(files, f)
	}
	return files, nil
}

// Stats reads what the group measured so far. Read it before Destroy.
func (g *Group) Stats() (Stats, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.impl == nil {
		return Stats{}, fmt.Errorf("read stats of cgroup %s: %w", g.name, ErrDestroyed)
	}
	s, err := g.impl.stats()
	if err != nil {
		return s, fmt.Errorf("read stats of cgroup %s: %w", g.name, err)
	}
	return s, nil
}

// openDir opens a cgroup v2 directory the way clone3 needs it: a real
// open, since CLONE_INTO_CGROUP rejects O_PATH descriptors.
func openDir(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

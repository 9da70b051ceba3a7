package cgroup

import (
	"errors"
	"time"
)

// Stats is what a group measured over a run.
type Stats struct {
	// PeakMemoryBytes is the high-water mark of the group's memory, page
	// cache included; 0 when the kernel does not report one (cgroup v2
	// before Linux 5.19) or the group has no memory controller.
	PeakMemoryBytes int64 `json:"peak_memory_bytes"`
	// CPUTime is the user and system CPU time of every task that ran in
	// the group.
	CPUTime time.Duration `json:"cpu_time_ns"`
	// OOMKilled is true when the OOM killer killed a task of the group.
	OOMKilled bool `json:"oom_killed"`
	// ForksRefused counts forks and clones the pids limit refused.
	ForksRefused int64 `json:"forks_refused"`
}

var (
	// ErrCannotCreate is returned by Create on a host where the caller
	// cannot create groups; the error text carries Host.Why.
	ErrCannotCreate = errors.New("cannot create cgroups")
	// ErrCgroupV1 is returned by Group.Dir on cgroup v1, which has no
	// single directory to clone a process into.
	ErrCgroupV1 = errors.New("not possible on cgroup v1")
	// ErrDestroyed is returned by the methods of a destroyed group.
	ErrDestroyed = errors.New("cgroup destroyed")
)

package cgroup

import (
	"fmt"
	"slices"
)

// Version is the cgroup layout of a host.
type Version string

const (
	VersionNone   Version = "none"   // no cgroup filesystem
	VersionV1     Version = "v1"     // cgroup v1 only
	VersionHybrid Version = "hybrid" // v1 controllers, plus a cgroup2 mount without them
	VersionV2     Version = "v2"     // the unified hierarchy only
)

// Mechanism is what enforces one limit.
type Mechanism string

const (
	MechanismCgroupV1 Mechanism = "cgroup-v1"
	MechanismCgroupV2 Mechanism = "cgroup-v2"
	MechanismRlimit   Mechanism = "rlimit" // a resource limit set in the sandbox child
	MechanismNone     Mechanism = "none"   // not enforced
)

// Controller names as the kernel spells them.
const (
	Memory  = "memory"
	Pids    = "pids"
	CPU     = "cpu"
	CPUAcct = "cpuacct" // cgroup v1 only: CPU time accounting
)

// Host is what this host and caller can do with cgroups: the input of Plan
// and what forgebox doctor shows. Probe fills it in; tests build their own.
type Host struct {
	Version Version `json:"version"`
	// CanCreate is true when the caller may create groups under Root.
	CanCreate bool `json:"can_create"`
	// Delegated is true when an unprivileged caller may create groups
	// because a cgroup v2 subtree was delegated to it.
	Delegated bool `json:"delegated"`
	// Root is where groups go: on cgroup v2 the directory that holds them,
	// on v1 the directory that holds one hierarchy per controller.
	Root string `json:"root,omitempty"`
	// Controllers lists the controllers a new group gets (Memory, Pids,
	// CPU, and CPUAcct on v1).
	Controllers []string `json:"controllers,omitempty"`
	// Why says why CanCreate is false, or what is missing when it is true,
	// in words a user can act on.
	Why string `json:"why,omitempty"`

	UID    int    `json:"uid"`    // effective uid of the caller
	Kernel string `json:"kernel"` // kernel release
	// NprocPerUserNS is true when the kernel counts RLIMIT_NPROC per user
	// namespace (Linux 5.14 and later).
	NprocPerUserNS bool  `json:"nproc_per_userns"`
	MemoryBytes    int64 `json:"memory_bytes"` // total RAM
	CPUs           int   `json:"cpus"`         // CPUs this process may run on
}

// Has reports whether a new group on this host can use controller c.
func (h Host) Has(c string) bool {
	return h.CanCreate && slices.Contains(h.Controllers, c)
}

// mechanism is the cgroup mechanism of this host's version.
func (h Host) mechanism() Mechanism {
	if h.Version == VersionV2 {
		return MechanismCgroupV2
	}
	return MechanismCgroupV1
}

// Enforcement is the decision for one limit.
type Enforcement[T int64 | float64] struct {
	Value     T         `json:"value"` // the requested limit; 0 is none
	Mechanism Mechanism `json:"mechanism"`
	Reason    string    `json:"reason,omitempty"` // why not a cgroup, when not
}

// Resource names a resource limit the way setrlimit(2) does.
type Resource string

const ResourceNproc Resource = "RLIMIT_NPROC"

// Rlimit is a resource limit the sandbox child sets before it execs the
// command. Soft and Hard are equal: the command cannot raise either.
type Rlimit struct {
	Resource Resource `json:"resource"`
	Soft     uint64   `json:"soft"`
	Hard     uint64   `json:"hard"`
}

// Decision says how each limit of a run is enforced on a host.
type Decision struct {
	Memory Enforcement[int64]   `json:"memory"`
	Pids   Enforcement[int64]   `json:"pids"`
	CPUs   Enforcement[float64] `json:"cpus"`
	// Rlimits are the limits the child sets in the sandbox's own user
	// namespace, after entering it and before exec.
	Rlimits []Rlimit `json:"rlimits,omitempty"`
}

// Cgroup returns the limits the run's group must enforce: those Plan gave
// to a cgroup, zero elsewhere.
func (d Decision) Cgroup() Limits {
	var l Limits
	if isCgroup(d.Memory.Mechanism) {
		l.MemoryBytes = d.Memory.Value
	}
	if isCgroup(d.Pids.Mechanism) {
		l.Pids = d.Pids.Value
	}
	if isCgroup(d.CPUs.Mechanism) {
		l.CPUs = d.CPUs.Value
	}
	return l
}

// UsesCgroup reports whether any limit needs a group.
func (d Decision) UsesCgroup() bool {
	return isCgroup(d.Memory.Mechanism) || isCgroup(d.Pids.Mechanism) || isCgroup(d.CPUs.Mechanism)
}

func isCgroup(m Mechanism) bool { return m == MechanismCgroupV1 || m == MechanismCgroupV2 }

// Plan decides which mechanism enforces each limit on host h. A cgroup
// wherever the host offers the controller; otherwise only the pids limit
// has an honest stand-in (RLIMIT_NPROC counted in the sandbox's own user
// namespace), and the others are not enforced. doc.go gives the reasons.
func Plan(l Limits, h Host) Decision {
	d := Decision{
		Memory: plan(l.MemoryBytes, h, Memory),
		Pids:   plan(l.Pids, h, Pids),
		CPUs:   plan(l.CPUs, h, CPU),
	}
	if d.Memory.Mechanism == MechanismNone && l.MemoryBytes > 0 {
		d.Memory.Reason += "; RLIMIT_AS is no substitute: it caps the address space of each " +
			"process, not the memory of the tree, and Go, Java and Node reserve gigabytes they never use"
	}
	if d.CPUs.Mechanism == MechanismNone && l.CPUs > 0 {
		d.CPUs.Reason += "; RLIMIT_CPU is no substitute: it caps the CPU seconds of each process, not a share of the CPUs"
	}
	if d.Pids.Mechanism == MechanismNone && l.Pids > 0 {
		switch {
		case h.UID == 0:
			d.Pids.Reason += "; RLIMIT_NPROC does not bind root (the kernel exempts uid 0)"
		case !h.NprocPerUserNS:
			d.Pids.Reason += "; before Linux 5.14 RLIMIT_NPROC counts every process of the user, " +
				"not only the sandbox's, so it is no substitute"
		default:
			n := uint64(l.Pids)
			d.Pids.Mechanism = MechanismRlimit
			d.Pids.Reason += "; RLIMIT_NPROC stands in: counted in the sandbox's own user namespace, " +
				"it covers the sandbox's tasks and none of the caller's other processes"
			d.Rlimits = append(d.Rlimits, Rlimit{Resource: ResourceNproc, Soft: n, Hard: n})
		}
	}
	return d
}

// plan decides one limit: a cgroup if the host offers the controller.
func plan[T int64 | float64](v T, h Host, controller string) Enforcement[T] {
	e := Enforcement[T]{Value: v, Mechanism: MechanismNone}
	switch {
	case v <= 0:
		e.Value = 0
		e.Reason = "no limit requested"
	case h.Has(controller):
		e.Mechanism = h.mechanism()
		e.Reason = ""
	case !h.CanCreate:
		e.Reason = "no cgroup: " + orUnknown(h.Why)
	default:
		e.Reason = fmt.Sprintf("the %s controller is not available under %s", controller, h.Root)
	}
	return e
}

func orUnknown(s string) string {
	if s == "" {
		return "the caller cannot create cgroups"
	}
	return s
}

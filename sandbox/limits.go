package sandbox

import (
	"math"

	"github.com/forgebox/forgebox/cgroup"
)

// Limits caps the resources of the command's whole process tree. A zero
// field takes the default (cgroup.DefaultLimits: half the RAM up to 8 GiB,
// and 4096 tasks or 128 per CPU; no CPU cap); NoLimit turns a limit off.
// A limit set here explicitly is refused, when the host cannot enforce it,
// like any other missing protection; a default the host cannot enforce is
// reported in Enforced.Limits and the run goes on.
type Limits struct {
	MemoryBytes int64   // memory of the tree, swap included
	Pids        int64   // tasks (processes and threads) alive at once
	CPUs        float64 // CPU bandwidth in cores; zero is no cap
}

// NoLimit as a Limits field turns that limit off.
const NoLimit = -1

// The smallest limits that make sense: below them nothing starts.
const (
	MinMemoryBytes = 1 << 20
	MinCPUs        = 0.01 // 1 ms of every 100 ms period, the kernel's least quota
	MaxCPUs        = 1 << 16
)

// check refuses limits that cannot mean anything.
func (l Limits) check() error {
	switch {
	case l.MemoryBytes != NoLimit && l.MemoryBytes != 0 && l.MemoryBytes < MinMemoryBytes:
		return invalidf("a memory limit of %d bytes is too small: give at least 1MiB (or none)", l.MemoryBytes)
	case l.Pids != NoLimit && l.Pids < 0:
		return invalidf("a task limit of %d makes no sense: give at least 1 (or none)", l.Pids)
	case math.IsNaN(l.CPUs) || l.CPUs < 0 || (l.CPUs > 0 && l.CPUs < MinCPUs) || l.CPUs > MaxCPUs:
		return invalidf("a CPU limit of %v makes no sense: give %v to %d cores", l.CPUs, MinCPUs, MaxCPUs)
	}
	return nil
}

// resolve fills in the defaults for host h and says which limits the
// caller set explicitly.
func (l Limits) resolve(h cgroup.Host) (want cgroup.Limits, explicit Limits) {
	def := cgroup.DefaultLimits(h.MemoryBytes, h.CPUs)
	pick := func(v, d int64) int64 {
		switch v {
		case 0:
			return d
		case NoLimit:
			return 0
		}
		return v
	}
	want = cgroup.Limits{MemoryBytes: pick(l.MemoryBytes, def.MemoryBytes), Pids: pick(l.Pids, def.Pids), CPUs: l.CPUs}
	explicit = Limits{MemoryBytes: max(l.MemoryBytes, 0), Pids: max(l.Pids, 0), CPUs: l.CPUs}
	return want, explicit
}

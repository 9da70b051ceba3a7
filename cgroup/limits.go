package cgroup

// Limits are the resource limits of one run. A zero field means no limit.
type Limits struct {
	// MemoryBytes caps the memory of the whole process tree with swap
	// counted in, so that being swapped out cannot dodge the cap.
	MemoryBytes int64 `json:"memory_bytes,omitempty"`
	// Pids caps the tasks (processes and threads) alive at once in the
	// tree; a fork or clone past it fails with EAGAIN.
	Pids int64 `json:"pids,omitempty"`
	// CPUs caps CPU bandwidth in cores: 1.5 lets the tree run for 150 ms
	// of every 100 ms period, summed over all CPUs.
	CPUs float64 `json:"cpus,omitempty"`
}

// The default limits. They are set to stop a fork bomb and a memory hog
// before the host suffers, and to stay out of the way of real builds:
//
//   - Memory: half the RAM, at most 8 GiB. Half leaves the desktop, the
//     editor and the agent itself room on an 8-16 GiB laptop. 8 GiB is
//     eight times what go build -a std took at its peak here, page cache
//     included: 542 MiB with 2 CPUs, 1065 MiB with 32 parallel compiles
//     (GOMAXPROCS=32 -p 32). Swap is counted in the cap, so a hog is
//     OOM-killed instead of pushing the host into swap.
//   - Pids: 4096 tasks, or 128 per CPU on machines with more than 32 CPUs.
//     Tasks include threads, and build tools run a job per CPU with threads
//     of their own: go build -a std peaked at 21 tasks with 2 CPUs and 251
//     with 32 parallel compiles, about 8 per CPU, so the cap leaves a
//     margin of more than ten. The kernel's pid_max is at least 32768 and
//     1024 per CPU, so the cap stays at an eighth of the pid space or less:
//     a fork bomb that fills it leaves the host able to start processes.
//   - CPUs: none. A quota only slows builds down; the scheduler already
//     shares the CPUs between the sandbox and the rest of the host.
const (
	DefaultMemoryMax   int64 = 8 << 30
	DefaultMemoryShare       = 0.5
	DefaultPidsMin     int64 = 4096
	DefaultPidsPerCPU  int64 = 128
)

// DefaultLimits returns the default limits for a machine with totalRAM
// bytes of memory and cpus usable CPUs (Host.MemoryBytes and Host.CPUs).
// An unknown (zero) RAM size gets DefaultMemoryMax.
func DefaultLimits(totalRAM int64, cpus int) Limits {
	mem := DefaultMemoryMax
	if totalRAM > 0 {
		mem = min(int64(float64(totalRAM)*DefaultMemoryShare), DefaultMemoryMax)
	}
	return Limits{
		MemoryBytes: mem,
		Pids:        max(DefaultPidsMin, DefaultPidsPerCPU*int64(cpus)),
	}
}

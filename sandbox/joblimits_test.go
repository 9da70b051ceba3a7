package sandbox

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/forgebox/forgebox/cgroup"
)

func TestJobLimitsPlan(t *testing.T) {
	const gib = int64(1) << 30
	for _, c := range []struct {
		name     string
		l        Limits
		cores    int
		ram      int64
		procs    uint32
		memory   uint64
		rate     uint32
		mem, pid cgroup.Mechanism
		cpu      cgroup.Mechanism
		reason   string // in the CPU reason
	}{
		{name: "defaults", cores: 2, ram: 16 * gib, procs: 4096, memory: uint64(8 * gib),
			mem: MechanismJobObject, pid: MechanismJobObject, cpu: cgroup.MechanismNone, reason: "no limit requested"},
		{name: "defaults small machine", cores: 64, ram: 4 * gib, procs: 128 * 64, memory: uint64(2 * gib),
			mem: MechanismJobObject, pid: MechanismJobObject, cpu: cgroup.MechanismNone},
		{name: "defaults unknown RAM", cores: 8, procs: 4096, memory: uint64(cgroup.DefaultMemoryMax),
			mem: MechanismJobObject, pid: MechanismJobObject, cpu: cgroup.MechanismNone},
		{name: "no limits", l: Limits{MemoryBytes: NoLimit, Pids: NoLimit}, cores: 4, ram: 8 * gib,
			mem: cgroup.MechanismNone, pid: cgroup.MechanismNone, cpu: cgroup.MechanismNone},
		{name: "explicit", l: Limits{MemoryBytes: 512 << 20, Pids: 100, CPUs: 1}, cores: 4, ram: 8 * gib,
			procs: 100, memory: 512 << 20, rate: 2500,
			mem: MechanismJobObject, pid: MechanismJobObject, cpu: MechanismJobObject, reason: "25.00% of the machine's 4"},
		{name: "three of four cores", l: Limits{CPUs: 3}, cores: 4, procs: 4096, memory: uint64(cgroup.DefaultMemoryMax), rate: 7500,
			mem: MechanismJobObject, pid: MechanismJobObject, cpu: MechanismJobObject, reason: "75.00%"},
		{name: "rounded rate", l: Limits{CPUs: 0.01}, cores: 64, procs: 128 * 64, memory: uint64(cgroup.DefaultMemoryMax), rate: 2,
			mem: MechanismJobObject, pid: MechanismJobObject, cpu: MechanismJobObject, reason: "0.01% steps"},
		{name: "smallest rate", l: Limits{CPUs: 0.01}, cores: 256, procs: 128 * 256, memory: uint64(cgroup.DefaultMemoryMax), rate: 1,
			mem: MechanismJobObject, pid: MechanismJobObject, cpu: MechanismJobObject, reason: "0.01% steps"},
		{name: "more cores than the machine", l: Limits{CPUs: 8}, cores: 4, procs: 4096, memory: uint64(cgroup.DefaultMemoryMax), rate: cpuRateScale,
			mem: MechanismJobObject, pid: MechanismJobObject, cpu: MechanismJobObject, reason: "never binds"},
		{name: "unknown core count", l: Limits{CPUs: 0.5}, cores: 0, procs: 4096, memory: uint64(cgroup.DefaultMemoryMax), rate: 5000,
			mem: MechanismJobObject, pid: MechanismJobObject, cpu: MechanismJobObject},
		{name: "huge task limit", l: Limits{Pids: 1 << 40}, cores: 2, procs: math.MaxUint32, memory: uint64(cgroup.DefaultMemoryMax),
			mem: MechanismJobObject, pid: MechanismJobObject, cpu: cgroup.MechanismNone},
	} {
		t.Run(c.name, func(t *testing.T) {
			j, err := planJobLimits(c.l, c.cores, c.ram)
			if err != nil {
				t.Fatalf("planJobLimits(%+v) = %v", c.l, err)
			}
			if j.ActiveProcesses != c.procs || j.JobMemoryBytes != c.memory || j.CPURate != c.rate {
				t.Errorf("planJobLimits(%+v, %d, %d) = processes %d, memory %d, rate %d; want %d, %d, %d",
					c.l, c.cores, c.ram, j.ActiveProcesses, j.JobMemoryBytes, j.CPURate, c.procs, c.memory, c.rate)
			}
			d := j.Decision
			if d.Memory.Mechanism != c.mem || d.Pids.Mechanism != c.pid || d.CPUs.Mechanism != c.cpu {
				t.Errorf("mechanisms = %s, %s, %s; want %s, %s, %s", d.Memory.Mechanism, d.Pids.Mechanism, d.CPUs.Mechanism, c.mem, c.pid, c.cpu)
			}
			if !strings.Contains(d.CPUs.Reason, c.reason) {
				t.Errorf("CPU reason = %q, want it to mention %q", d.CPUs.Reason, c.reason)
			}
			// The decision's values are what the job enforces.
			if d.Memory.Mechanism == MechanismJobObject && uint64(d.Memory.Value) != j.JobMemoryBytes {
				t.Errorf("Memory.Value = %d, job memory %d", d.Memory.Value, j.JobMemoryBytes)
			}
			if d.Pids.Mechanism == MechanismJobObject && uint64(d.Pids.Value) != uint64(j.ActiveProcesses) {
				t.Errorf("Pids.Value = %d, active processes %d", d.Pids.Value, j.ActiveProcesses)
			}
			for _, e := range []cgroup.Mechanism{d.Memory.Mechanism, d.Pids.Mechanism} {
				if e == MechanismJobObject && d.Memory.Reason == "" {
					t.Errorf("a job-object limit without its meaning: %+v", d)
				}
			}
		})
	}
}

func TestJobLimitsInvalid(t *testing.T) {
	for _, l := range []Limits{
		{MemoryBytes: 100},
		{Pids: -5},
		{CPUs: -1},
		{CPUs: 0.001},
		{CPUs: math.NaN()},
		{CPUs: MaxCPUs + 1},
	} {
		if _, err := planJobLimits(l, 4, 1<<30); !errors.Is(err, ErrInvalid) {
			t.Errorf("planJobLimits(%+v) = %v, want ErrInvalid", l, err)
		}
	}
}

func TestJobLimitsRefuse(t *testing.T) {
	l := Limits{MemoryBytes: 1 << 30, CPUs: 1}
	j, err := planJobLimits(l, 4, 8<<30)
	if err != nil {
		t.Fatal(err)
	}
	if missing, err := j.refuse(l, false); err != nil || len(missing) != 0 {
		t.Fatalf("refuse with every limit enforced = %q, %v", missing, err)
	}
	// Windows before 8 has no CPU rate control: the job refuses it.
	j.unenforced("cpus", "this Windows has no job CPU rate control")
	if j.CPURate != 0 || j.Decision.CPUs.Mechanism != cgroup.MechanismNone {
		t.Fatalf("unenforced(cpus) left rate %d, mechanism %s", j.CPURate, j.Decision.CPUs.Mechanism)
	}
	_, err = j.refuse(l, false)
	var un *UnavailableError
	if !errors.As(err, &un) || un.Layer != "CPU limit (--cpus)" || !strings.Contains(un.Reason, "rate control") {
		t.Fatalf("refuse(explicit --cpus not enforced) = %v, want an UnavailableError for the CPU limit", err)
	}
	missing, err := j.refuse(l, true)
	if err != nil || len(missing) != 1 || !strings.HasPrefix(missing[0], "CPU limit (--cpus) (") {
		t.Fatalf("refuse(best effort) = %q, %v, want one missing CPU limit", missing, err)
	}
	// A default that is not enforced is reported, never refused.
	d, _ := planJobLimits(Limits{}, 4, 8<<30)
	d.unenforced("memory", "refused")
	d.unenforced("pids", "refused")
	if missing, err := d.refuse(Limits{}, false); err != nil || len(missing) != 0 {
		t.Fatalf("refuse(defaults only) = %q, %v, want nothing", missing, err)
	}
	if d.JobMemoryBytes != 0 || d.ActiveProcesses != 0 || d.Decision.Memory.Reason != "refused" {
		t.Fatalf("unenforced defaults left %+v", d)
	}
}

package sandbox

import (
	"fmt"
	"math"

	"github.com/forgebox/forgebox/cgroup"
)

// MechanismJobObject: a Windows job object enforces the limit. It reads
// like the cgroup mechanisms in Enforced.Limits; the lead may move it to
// package cgroup beside them.
const MechanismJobObject cgroup.Mechanism = "job-object"

// cpuRateScale is what JOBOBJECT_CPU_RATE_CONTROL_INFORMATION.CpuRate counts
// in: hundredths of a percent of all the machine's processors, 10000 being
// all of them.
const cpuRateScale = 10000

// jobLimits are the limits of a run's job object, as plain data: the
// Windows backend sets them with SetInformationJobObject. A zero field is no
// limit. Decision says, per limit, what enforces it, in the form
// Enforced.Limits has on Linux.
type jobLimits struct {
	// ActiveProcesses is JOBOBJECT_BASIC_LIMIT_INFORMATION.ActiveProcessLimit
	// (JOB_OBJECT_LIMIT_ACTIVE_PROCESS).
	ActiveProcesses uint32
	// JobMemoryBytes is JOBOBJECT_EXTENDED_LIMIT_INFORMATION.JobMemoryLimit
	// (JOB_OBJECT_LIMIT_JOB_MEMORY): the committed memory of every process
	// of the job together.
	JobMemoryBytes uint64
	// CPURate is JOBOBJECT_CPU_RATE_CONTROL_INFORMATION.CpuRate with
	// JOB_OBJECT_CPU_RATE_CONTROL_ENABLE | JOB_OBJECT_CPU_RATE_CONTROL_HARD_CAP.
	CPURate  uint32
	Decision cgroup.Decision
}

// What each job limit means, for Enforcement.Reason: the job object's
// semantics differ from the cgroup's the flags describe.
const (
	jobMemoryReason = "the job memory limit caps the committed memory (private bytes, page file included) of the whole tree; " +
		"an allocation past it fails in the process that asked, which is not killed"
	jobPidsReason = "the job's active process limit counts processes, not threads; a process creation past it fails"
)

// planJobLimits resolves the limits of s (defaults included, as on Linux)
// for a machine with cores logical processors and totalRAM bytes of RAM
// (0 when unknown), and says how the job object enforces each.
func planJobLimits(l Limits, cores int, totalRAM int64) (jobLimits, error) {
	if err := l.check(); err != nil {
		return jobLimits{}, err
	}
	cores = max(cores, 1)
	want, _ := l.resolve(cgroup.Host{MemoryBytes: totalRAM, CPUs: cores})
	var j jobLimits
	d := &j.Decision

	d.Memory = cgroup.Enforcement[int64]{Value: want.MemoryBytes, Mechanism: cgroup.MechanismNone, Reason: "no limit requested"}
	if want.MemoryBytes > 0 {
		j.JobMemoryBytes = uint64(want.MemoryBytes)
		d.Memory.Mechanism, d.Memory.Reason = MechanismJobObject, jobMemoryReason
	}

	d.Pids = cgroup.Enforcement[int64]{Value: want.Pids, Mechanism: cgroup.MechanismNone, Reason: "no limit requested"}
	if want.Pids > 0 {
		d.Pids.Mechanism, d.Pids.Reason = MechanismJobObject, jobPidsReason
		j.ActiveProcesses = uint32(min(want.Pids, math.MaxUint32))
		if want.Pids > math.MaxUint32 {
			d.Pids.Value = math.MaxUint32
			d.Pids.Reason += fmt.Sprintf("; lowered to %d, the most a job object takes", uint32(math.MaxUint32))
		}
	}

	d.CPUs = cgroup.Enforcement[float64]{Value: want.CPUs, Mechanism: cgroup.MechanismNone, Reason: "no limit requested"}
	if want.CPUs > 0 {
		rate, why := cpuRate(want.CPUs, cores)
		j.CPURate = rate
		d.CPUs.Mechanism, d.CPUs.Reason = MechanismJobObject, why
	}
	return j, nil
}

// cpuRate converts a cap in cores into a job's CPU rate on a machine with
// cores logical processors, and says what the rate means.
func cpuRate(cpus float64, cores int) (uint32, string) {
	if cpus >= float64(cores) {
		return cpuRateScale, fmt.Sprintf("a hard cap at or above the machine's %d logical processors never binds", cores)
	}
	exact := cpus / float64(cores) * cpuRateScale
	rate := uint32(min(max(math.Round(exact), 1), cpuRateScale))
	why := fmt.Sprintf("a hard CPU rate cap of %.2f%% of the machine's %d logical processors", float64(rate)/100, cores)
	if float64(rate) != exact {
		why += fmt.Sprintf(" (%.4g cores, the nearest the job object's 0.01%% steps allow)", float64(rate)*float64(cores)/cpuRateScale)
	}
	return rate, why
}

// unenforced records that the job object refused one limit ("memory",
// "pids" or "cpus"): it is dropped from the job and reported as not
// enforced, with why.
func (j *jobLimits) unenforced(limit, why string) {
	d := &j.Decision
	switch limit {
	case "memory":
		j.JobMemoryBytes = 0
		d.Memory.Mechanism, d.Memory.Reason = cgroup.MechanismNone, why
	case "pids":
		j.ActiveProcesses = 0
		d.Pids.Mechanism, d.Pids.Reason = cgroup.MechanismNone, why
	case "cpus":
		j.CPURate = 0
		d.CPUs.Mechanism, d.CPUs.Reason = cgroup.MechanismNone, why
	}
}

// refuse applies the fail-closed rule to the limits the caller set
// explicitly: each one the job does not enforce is an *UnavailableError, or
// with bestEffort an entry for Enforced.Missing. Defaults that are not
// enforced are only reported, as on Linux.
func (j jobLimits) refuse(l Limits, bestEffort bool) (missing []string, err error) {
	d := j.Decision
	for _, x := range []struct {
		set       bool
		layer     string
		mechanism cgroup.Mechanism
		reason    string
	}{
		{l.MemoryBytes > 0, "memory limit (--memory)", d.Memory.Mechanism, d.Memory.Reason},
		{l.Pids > 0, "task limit (--pids)", d.Pids.Mechanism, d.Pids.Reason},
		{l.CPUs > 0, "CPU limit (--cpus)", d.CPUs.Mechanism, d.CPUs.Reason},
	} {
		if !x.set || x.mechanism != cgroup.MechanismNone {
			continue
		}
		if !bestEffort {
			return nil, &UnavailableError{Layer: x.layer, Reason: x.reason}
		}
		missing = append(missing, fmt.Sprintf("%s (%s)", x.layer, x.reason))
	}
	return missing, nil
}

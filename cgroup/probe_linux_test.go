package cgroup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProbeThisHost(t *testing.T) {
	h := Probe()
	t.Logf("Probe() = %+v", h)
	if h.UID != os.Geteuid() || h.Kernel == "" || h.MemoryBytes <= 0 || h.CPUs <= 0 {
		t.Errorf("Probe() facts: uid %d, kernel %q, memory %d, cpus %d", h.UID, h.Kernel, h.MemoryBytes, h.CPUs)
	}
	if !h.CanCreate {
		if h.Why == "" {
			t.Errorf("Probe().CanCreate = false without a reason")
		}
		if len(h.Controllers) > 0 {
			t.Errorf("Probe().Controllers = %v on a host where the caller cannot create groups", h.Controllers)
		}
	}
	if h.CanCreate && (h.Root == "" || len(h.Controllers) == 0) {
		t.Errorf("Probe() can create but names root %q, controllers %v", h.Root, h.Controllers)
	}
	// cgroup v1 hierarchies are root's unless an administrator handed one over
	if (h.Version == VersionV1 || h.Version == VersionHybrid) && h.UID != 0 &&
		!writable(filepath.Join(mountRoot, Memory)) && !writable(filepath.Join(mountRoot, Pids)) {
		if h.CanCreate || !strings.Contains(h.Why, "only by root") {
			t.Errorf("Probe() for uid %d on cgroup v1: CanCreate %v, Why %q; want false, saying only root can",
				h.UID, h.CanCreate, h.Why)
		}
	}
}

// TestPlanThisHost checks the fallback on this host: without cgroups, the
// pids limit falls back to RLIMIT_NPROC for an ordinary user on Linux
// 5.14+, and memory and CPU are not enforced.
func TestPlanThisHost(t *testing.T) {
	h := Probe()
	d := Plan(DefaultLimits(h.MemoryBytes, h.CPUs), h)
	t.Logf("Plan(defaults) = %+v", d)
	if h.CanCreate {
		if !d.UsesCgroup() {
			t.Errorf("host can create groups but the plan uses none: %+v", d)
		}
		return
	}
	wantPids := MechanismNone
	if h.UID != 0 && h.NprocPerUserNS {
		wantPids = MechanismRlimit
	}
	if d.Pids.Mechanism != wantPids || d.Memory.Mechanism != MechanismNone {
		t.Errorf("Plan on uid %d without cgroups: pids %s, memory %s; want %s, none",
			h.UID, d.Pids.Mechanism, d.Memory.Mechanism, wantPids)
	}
}

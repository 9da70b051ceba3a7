package cgroup

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// planGolden is embedded so that the test binary also runs outside the
// package directory (as the unprivileged user, from /tmp).
//
//go:embed testdata/plan.golden
var planGolden []byte

const gib = 1 << 30

// fakeHosts are the kinds of host Plan must handle.
var fakeHosts = []struct {
	name string
	h    Host
}{
	{"v1-root", Host{Version: VersionHybrid, CanCreate: true, Root: "/sys/fs/cgroup",
		Controllers: []string{Memory, Pids, CPU, CPUAcct}, UID: 0, NprocPerUserNS: true}},
	{"v2-root", Host{Version: VersionV2, CanCreate: true, Root: "/sys/fs/cgroup",
		Controllers: []string{Memory, Pids, CPU}, UID: 0, NprocPerUserNS: true}},
	{"v2-delegated-user-without-cpu", Host{Version: VersionV2, CanCreate: true, Delegated: true,
		Root:        "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice",
		Controllers: []string{Memory, Pids}, UID: 1000, NprocPerUserNS: true}},
	{"v2-delegated-user-without-pids", Host{Version: VersionV2, CanCreate: true, Delegated: true,
		Root:        "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice",
		Controllers: []string{Memory, CPU}, UID: 1000, NprocPerUserNS: true}},
	{"v2-undelegated-user", Host{Version: VersionV2, UID: 1000, NprocPerUserNS: true,
		Why: "this process's cgroup /user.slice/user-1000.slice/session-3.scope is not in a subtree delegated to uid 1000"}},
	{"v1-user", Host{Version: VersionHybrid, Root: "/sys/fs/cgroup", UID: 1001, NprocPerUserNS: true,
		Why: "the cgroup v1 hierarchies under /sys/fs/cgroup are writable only by root"}},
	{"no-cgroups-user-old-kernel", Host{Version: VersionNone, UID: 1000, NprocPerUserNS: false,
		Why: "no cgroup filesystem is mounted at /sys/fs/cgroup"}},
	{"no-cgroups-root", Host{Version: VersionNone, UID: 0, NprocPerUserNS: true,
		Why: "no cgroup filesystem is mounted at /sys/fs/cgroup"}},
}

func TestPlan(t *testing.T) {
	l := Limits{MemoryBytes: 4 * gib, Pids: 4096, CPUs: 1.5}
	const (
		v1 = MechanismCgroupV1
		v2 = MechanismCgroupV2
		rl = MechanismRlimit
		no = MechanismNone
	)
	want := map[string][3]Mechanism{ // memory, pids, cpus
		"v1-root":                        {v1, v1, v1},
		"v2-root":                        {v2, v2, v2},
		"v2-delegated-user-without-cpu":  {v2, v2, no},
		"v2-delegated-user-without-pids": {v2, rl, v2},
		"v2-undelegated-user":            {no, rl, no},
		"v1-user":                        {no, rl, no},
		"no-cgroups-user-old-kernel":     {no, no, no},
		"no-cgroups-root":                {no, no, no},
	}
	var golden bytes.Buffer
	for _, c := range fakeHosts {
		d := Plan(l, c.h)
		got := [3]Mechanism{d.Memory.Mechanism, d.Pids.Mechanism, d.CPUs.Mechanism}
		if got != want[c.name] {
			t.Errorf("Plan(%+v, %s) = memory %s, pids %s, cpus %s; want %v", l, c.name, got[0], got[1], got[2], want[c.name])
		}
		wantRlimits := []Rlimit(nil)
		if d.Pids.Mechanism == MechanismRlimit {
			wantRlimits = []Rlimit{{Resource: ResourceNproc, Soft: 4096, Hard: 4096}}
		}
		if !slices.Equal(d.Rlimits, wantRlimits) {
			t.Errorf("Plan(%s).Rlimits = %v, want %v", c.name, d.Rlimits, wantRlimits)
		}
		for _, e := range []struct {
			m      Mechanism
			reason string
		}{{d.Memory.Mechanism, d.Memory.Reason}, {d.Pids.Mechanism, d.Pids.Reason}, {d.CPUs.Mechanism, d.CPUs.Reason}} {
			if e.m != v1 && e.m != v2 && e.reason == "" {
				t.Errorf("Plan(%s): %s without a reason", c.name, e.m)
			}
		}
		cg := d.Cgroup()
		if (cg != Limits{}) != d.UsesCgroup() {
			t.Errorf("Plan(%s): Cgroup() = %+v but UsesCgroup() = %v", c.name, cg, d.UsesCgroup())
		}
		if d.Pids.Mechanism == MechanismRlimit && cg.Pids != 0 {
			t.Errorf("Plan(%s).Cgroup().Pids = %d, want 0: the rlimit enforces it", c.name, cg.Pids)
		}
		b, _ := json.MarshalIndent(struct {
			Host     string   `json:"host"`
			Decision Decision `json:"decision"`
		}{c.name, d}, "", "  ")
		golden.Write(append(b, '\n'))
	}
	checkGolden(t, "plan.golden", planGolden, golden.Bytes())
}

func TestPlanNoLimits(t *testing.T) {
	for _, c := range fakeHosts {
		d := Plan(Limits{}, c.h)
		if d.UsesCgroup() || len(d.Rlimits) > 0 {
			t.Errorf("Plan(no limits, %s) = %+v, want nothing enforced", c.name, d)
		}
		if d.Memory.Mechanism != MechanismNone || d.Memory.Reason != "no limit requested" {
			t.Errorf("Plan(no limits, %s).Memory = %+v", c.name, d.Memory)
		}
	}
}

func checkGolden(t *testing.T, name string, want, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(filepath.Join("testdata", name), got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(got, want) {
		t.Errorf("testdata/%s differs; run go test -update and review the diff\ngot:\n%s", name, got)
	}
}

func TestDefaultLimits(t *testing.T) {
	for _, c := range []struct {
		ram  int64
		cpus int
		want Limits
	}{
		{24 * gib, 2, Limits{MemoryBytes: 8 * gib, Pids: 4096}},
		{8 * gib, 8, Limits{MemoryBytes: 4 * gib, Pids: 4096}},
		{2 * gib, 1, Limits{MemoryBytes: 1 * gib, Pids: 4096}},
		{16 * gib, 32, Limits{MemoryBytes: 8 * gib, Pids: 4096}},
		{256 * gib, 128, Limits{MemoryBytes: 8 * gib, Pids: 16384}},
		{0, 0, Limits{MemoryBytes: 8 * gib, Pids: 4096}},
	} {
		if got := DefaultLimits(c.ram, c.cpus); got != c.want {
			t.Errorf("DefaultLimits(%d GiB, %d CPUs) = %+v, want %+v", c.ram/gib, c.cpus, got, c.want)
		}
	}
}

package cgroup

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// BenchmarkCreateAddDestroy measures what every run pays: create a group,
// move the command in, and after it exits read Stats and destroy the
// group. Starting and reaping the process is not timed. It reports the
// median and the 99th percentile besides the mean.
func BenchmarkCreateAddDestroy(b *testing.B) {
	h := Probe()
	if !h.CanCreate {
		b.Skipf("cannot create cgroups here: %s", h.Why)
	}
	cases := []struct {
		name  string
		ctrls []string
		l     Limits
	}{
		{"pids", []string{Pids}, Limits{Pids: 4096}},
		{"memory+pids", []string{Memory, Pids}, Limits{MemoryBytes: 1 << 30, Pids: 4096}},
		{"defaults", h.Controllers, DefaultLimits(h.MemoryBytes, h.CPUs)},
		{"defaults+cpu", h.Controllers, Limits{MemoryBytes: 1 << 30, Pids: 4096, CPUs: 1}},
	}
	for _, c := range cases {
		hc := h
		hc.Controllers = slices.DeleteFunc(slices.Clone(h.Controllers), func(s string) bool {
			return !slices.Contains(c.ctrls, s)
		})
		if (c.l.CPUs > 0 && !hc.Has(CPU)) || (c.l.MemoryBytes > 0 && !hc.Has(Memory)) || !hc.Has(Pids) {
			continue
		}
		b.Run(c.name, func(b *testing.B) { benchCreateAddDestroy(b, hc, c.l) })
		if h.Version != VersionV2 && c.l.CPUs == 0 {
			b.Run("by-hand-"+c.name, func(b *testing.B) { benchByHandV1(b, h.Root, v1Controllers(hc, c.l), c.l) })
		}
	}
}

// benchByHandV1 is the peer: the same work on cgroup v1 as bare system
// calls, the floor of what any implementation pays.
func benchByHandV1(b *testing.B, root string, ctrls []string, l Limits) {
	var took []time.Duration
	for i := 0; b.Loop(); i++ {
		t0 := time.Now()
		var dirs []string
		for _, c := range ctrls {
			d := filepath.Join(root, c, "forgebox-byhand-"+strconv.Itoa(i))
			if err := os.Mkdir(d, 0o755); err != nil {
				b.Fatal(err)
			}
			dirs = append(dirs, d)
			switch c {
			case Memory:
				writeFile(b, filepath.Join(d, "memory.limit_in_bytes"), l.MemoryBytes)
			case Pids:
				writeFile(b, filepath.Join(d, "pids.max"), l.Pids)
			}
		}
		d := time.Since(t0)
		b.StopTimer()
		cmd := exec.Command("/bin/cat")
		stdin, _ := cmd.StdinPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 = time.Now()
		for _, dir := range dirs {
			writeFile(b, filepath.Join(dir, "cgroup.procs"), int64(cmd.Process.Pid))
		}
		d += time.Since(t0)
		b.StopTimer()
		stdin.Close()
		cmd.Wait()
		b.StartTimer()
		t0 = time.Now()
		for _, dir := range dirs {
			for _, f := range []string{"memory.max_usage_in_bytes", "memory.oom_control", "cpuacct.usage", "pids.events"} {
				os.ReadFile(filepath.Join(dir, f))
			}
			if err := os.Remove(dir); err != nil {
				b.Fatal(err)
			}
		}
		took = append(took, d+time.Since(t0))
	}
	reportPercentiles(b, took)
}

func writeFile(b *testing.B, path string, v int64) {
	if err := os.WriteFile(path, []byte(strconv.FormatInt(v, 10)), 0); err != nil {
		b.Fatal(err)
	}
}

func reportPercentiles(b *testing.B, took []time.Duration) {
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds()), "median-µs")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-µs")
}

func benchCreateAddDestroy(b *testing.B, h Host, l Limits) {
	ctx := context.Background()
	var took []time.Duration
	for i := 0; b.Loop(); i++ {
		t0 := time.Now()
		g, err := Create(h, "bench-"+strconv.Itoa(i), l)
		if err != nil {
			b.Fatal(err)
		}
		d := time.Since(t0)

		b.StopTimer()
		cmd := exec.Command("/bin/cat")
		stdin, err := cmd.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()

		t0 = time.Now()
		if err := g.Add(cmd.Process.Pid); err != nil {
			b.Fatal(err)
		}
		d += time.Since(t0)

		b.StopTimer()
		stdin.Close()
		cmd.Wait()
		b.StartTimer()

		t0 = time.Now()
		if _, err := g.Stats(); err != nil {
			b.Fatal(err)
		}
		if err := g.Destroy(ctx); err != nil {
			b.Fatal(err)
		}
		took = append(took, d+time.Since(t0))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds()), "median-µs")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-µs")
}

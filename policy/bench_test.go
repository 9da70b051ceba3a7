package policy

import (
	"encoding/json"
	"os"
	"slices"
	"testing"
	"time"
)

// agentMix is a mix of command lines agents run, harmless and not.
func agentMix(tb testing.TB) []string {
	tb.Helper()
	b, err := os.ReadFile("testdata/agent-mix.json")
	if err != nil {
		tb.Fatal(err)
	}
	var lines []string
	if err := json.Unmarshal(b, &lines); err != nil {
		tb.Fatal(err)
	}
	return lines
}

// BenchmarkDecide measures decisions per second over the agent mix and
// the latency of single decisions (goal: 50,000/s on one core, p99 under
// 100 µs for lines under 1 KB). Run with -cpu 1 for the one-core figure.
func BenchmarkDecide(b *testing.B) {
	benchDecide(b, New(nil), agentMix(b))
}

// benchDecide judges lines in turn and reports decisions per second and
// the p50 and p99 latency of single decisions.
func benchDecide(b *testing.B, e *Engine, lines []string) {
	ctx := &Context{Workspace: "/home/u/proj", Cwd: "/home/u/proj", Home: "/home/u"}
	lat := make([]time.Duration, 0, 1<<16)
	short := make([]time.Duration, 0, 1<<16) // lines under 1 KB
	n := 0
	start := time.Now()
	for b.Loop() {
		l := lines[n%len(lines)]
		t0 := time.Now()
		e.DecideLine(ctx, l)
		if len(lat) < cap(lat) {
			d := time.Since(t0)
			lat = append(lat, d)
			if len(l) < 1024 {
				short = append(short, d)
			}
		}
		n++
	}
	elapsed := time.Since(start)
	slices.Sort(lat)
	slices.Sort(short)
	b.ReportMetric(float64(n)/elapsed.Seconds(), "decisions/s")
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1000, "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1000, "p99-µs")
	if len(short) > 0 {
		b.ReportMetric(float64(short[len(short)*99/100].Nanoseconds())/1000, "p99-µs-under-1KB")
	}
}

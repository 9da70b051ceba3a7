package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// historyBench measures what recording a run in the history adds to it:
// interleaved pairs of `forgebox run -- /bin/true` recorded in a warm
// database and with --no-history, and the median of the pair differences.
// The goal is under 0.1 ms. The store's own figures (inserts per second,
// `history --limit 50` over a million rows) come from the history
// package's benchmarks.
func historyBench(dir, bin string, n int) {
	db := filepath.Join(dir, ".bench-history", "history.db")
	defer os.RemoveAll(filepath.Dir(db))
	on := []string{bin, "run", "--history-db", db, "--", "/bin/true"}
	off := []string{bin, "run", "--no-history", "--", "/bin/true"}
	const warmup = 20
	var with, without, diff []float64
	for i := 0; i < n+warmup; i++ {
		var a, b float64
		if i%2 == 0 {
			a, b = timeRun(dir, on), timeRun(dir, off)
		} else {
			b, a = timeRun(dir, off), timeRun(dir, on)
		}
		if i >= warmup {
			with, without, diff = append(with, a), append(without, b), append(diff, a-b)
		}
	}
	fmt.Printf("\nhistory, %d interleaved pairs of forgebox run -- /bin/true, recorded (warm database) and --no-history\n", n)
	fmt.Printf("  recorded     median %6.2f ms  p99 %6.2f ms\n", pct(with, 50), pct(with, 99))
	fmt.Printf("  --no-history median %6.2f ms  p99 %6.2f ms\n", pct(without, 50), pct(without, 99))
	fmt.Printf("  added: median of pair differences %+.3f ms (goal < 0.1 ms), of medians %+.3f ms, p90 of differences %+.3f ms\n",
		pct(diff, 50), pct(with, 50)-pct(without, 50), pct(diff, 90))
	fmt.Println("  the store alone (inserts/s; history --limit 50 over 1,000,000 rows): go test ./history -run '^$' -bench 'StartFinish|OpenStartFinish|ListLimit50'")
}

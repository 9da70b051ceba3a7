package undo

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkCommit1000 is a run's commit of 1,000 rewritten files (copied
// up, with overlay's origin attribute) in 334 directories.
func BenchmarkCommit1000(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		root := b.TempDir()
		ws := filepath.Join(root, "ws")
		store := StoreFor(filepath.Join(root, "state"))
		for d := 0; d < 334; d++ {
			for f := 0; f < 3; f++ {
				write(b, filepath.Join(ws, fmt.Sprintf("p%d/lib/f%d.js", d, f)), "x\n")
			}
		}
		p, err := store.Begin(ws, nil, "x", time.Now())
		if err != nil {
			b.Fatal(err)
		}
		for d := 0; d < 334; d++ {
			for f := 0; f < 3; f++ {
				q := filepath.Join(p.Upper(), fmt.Sprintf("p%d/lib/f%d.js", d, f))
				write(b, q, "changed\n")
				unix.Setxattr(q, "user.overlay.origin", []byte("0123456789abcdef0123456789"), 0)
			}
		}
		b.StartTimer()
		t0 := time.Now()
		if _, err := p.Commit(time.Now()); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(time.Since(t0).Milliseconds()), "ms/commit")
		b.StopTimer()
	}
}

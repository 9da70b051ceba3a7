package session

import (
	"context"
	"testing"
	"time"
)

// BenchmarkExecTrue is the round trip of one command line in a warm session:
// typing, readline, eval, the markers, and the reader goroutine.
func BenchmarkExecTrue(b *testing.B) {
	s, err := Start(context.Background(), Options{Env: []string{"PATH=/usr/bin:/bin", "HOME=" + b.TempDir()}})
	if err != nil {
		b.Fatalf("Start: %v", err)
	}
	defer s.Close()
	for b.Loop() {
		if res, err := s.Exec(context.Background(), "true", 10*time.Second); err != nil || res.ExitCode != 0 {
			b.Fatalf("Exec(true) = %+v, %v", res, err)
		}
	}
}

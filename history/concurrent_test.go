package history

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const concurrentRuns = 100

// checkComplete asserts exactly n finished rows and a sound database.
func checkComplete(t *testing.T, path string, n int) {
	t.Helper()
	ctx := context.Background()
	s, warnings, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatalf("Open after the runs: %v", err)
	}
	defer s.Close()
	if len(warnings) > 0 {
		t.Errorf("Open warnings after the runs: %q", warnings)
	}
	st, err := s.Stats(ctx, Filter{})
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	if st.Total != int64(n) || st.ByStatus[StatusFinished] != int64(n) {
		t.Errorf("after %d concurrent runs: %d rows, by status %v; want %d finished", n, st.Total, st.ByStatus, n)
	}
	if err := s.Check(ctx); err != nil {
		t.Errorf("Check: %v", err)
	}
}

// TestConcurrentStores: 100 goroutines, each with its own Store (its own
// connection, as separate processes have), start and finish a run on one
// fresh file at once.
func TestConcurrentStores(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	var wg sync.WaitGroup
	errs := make(chan error, concurrentRuns)
	start := make(chan struct{})
	for i := range concurrentRuns {
		wg.Go(func() {
			<-start
			ctx := context.Background()
			s, _, err := Open(ctx, path, Options{})
			if err != nil {
				errs <- fmt.Errorf("run %d: %w", i, err)
				return
			}
			defer s.Close()
			r := &Run{SessionID: fmt.Sprintf("s%d", i%7), Command: fmt.Sprintf("echo %d", i), Cwd: "/"}
			if _, err := s.Start(ctx, r); err != nil {
				errs <- fmt.Errorf("run %d: %w", i, err)
				return
			}
			r.ExitCode, r.Stdout = ptr(0), fmt.Sprintf("%d\n", i)
			if err := s.Finish(ctx, r); err != nil {
				errs <- fmt.Errorf("run %d: %w", i, err)
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err) // "database is locked" would show here
	}
	checkComplete(t, path, concurrentRuns)
}

// TestConcurrentProcesses proves the same across processes: the test binary
// re-executes itself 100 times at once in its start-finish helper mode.
func TestConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 100 processes")
	}
	path := filepath.Join(t.TempDir(), "history.db")
	var wg sync.WaitGroup
	errs := make(chan error, concurrentRuns)
	for i := range concurrentRuns {
		wg.Go(func() {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), helperModeEnv+"=start-finish", helperDBEnv+"="+path)
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("process %d: %v: %s", i, err, strings.TrimSpace(string(out)))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	checkComplete(t, path, concurrentRuns)
}

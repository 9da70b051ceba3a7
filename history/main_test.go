package history

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"
)

// Helper modes: the test binary re-executes itself to act as a separate
// forgebox process (TestConcurrentProcesses, TestOpenReadOnlyDir).
const (
	helperModeEnv = "FORGEBOX_HISTORY_TEST_HELPER"
	helperDBEnv   = "FORGEBOX_HISTORY_TEST_DB"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperModeEnv); mode != "" {
		if err := runHelper(mode, os.Getenv(helperDBEnv)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runHelper(mode, path string) error {
	ctx := context.Background()
	switch mode {
	case "start-finish":
		s, _, err := Open(ctx, path, Options{})
		if err != nil {
			return err
		}
		defer s.Close()
		r := &Run{SessionID: "procs", Command: "echo hi", Cwd: "/", Permission: PermAutoApproved}
		if _, err := s.Start(ctx, r); err != nil {
			return err
		}
		exit := 0
		r.ExitCode, r.Stdout, r.OutputKept = &exit, "hi\n", true
		return s.Finish(ctx, r)
	case "open-read-only":
		_, _, err := Open(ctx, path, Options{})
		if err == nil {
			return errors.New("Open in a read-only directory succeeded")
		}
		fmt.Println(err)
		return nil
	}
	return fmt.Errorf("unknown helper mode %q", mode)
}

// fixedClock returns a clock stopped at t.
func fixedClock(t time.Time) func() time.Time { return func() time.Time { return t } }

// openTest opens a fresh database in a temporary directory.
func openTest(t testing.TB, o Options) *Store {
	t.Helper()
	s, warnings, err := Open(context.Background(), t.TempDir()+"/history.db", o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if len(warnings) > 0 {
		t.Fatalf("Open warnings on a fresh database: %q", warnings)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

package session

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

// testOptions runs plain bash in a fresh HOME: the test user's real home
// may not be writable.
func testOptions(t *testing.T) Options {
	t.Helper()
	home := t.TempDir()
	return Options{
		Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8", "TERM=xterm-256color"},
		Dir: home,
	}
}

func startBash(t *testing.T) *Session {
	t.Helper()
	s, err := Start(context.Background(), testOptions(t))
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func mustExec(t *testing.T, s *Session, command string) ExecResult {
	t.Helper()
	res, err := s.Exec(context.Background(), command, 10*time.Second)
	if err != nil {
		t.Fatalf("Exec(%q): %v", command, err)
	}
	if res.TimedOut {
		t.Fatalf("Exec(%q) timed out: %+v", command, res)
	}
	return res
}

// readUntil reads until cond holds for the output gathered so far and the
// latest screen, or fails after 10 s.
func readUntil(t *testing.T, s *Session, what string, cond func(output string, r ReadResult) bool) ReadResult {
	t.Helper()
	var output strings.Builder
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := s.Read(200 * time.Millisecond)
		output.WriteString(r.Output)
		if cond(output.String(), r) {
			r.Output = output.String()
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: output %q, screen:\n%s", what, output.String(), r.Screen.Text)
		}
	}
}

func needProgram(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s is not installed: %v", name, err)
	}
}

// processGone is true once pid has exited (a zombie counts: it runs nothing
// and its new parent reaps it).
func processGone(pid int) bool {
	return !alive(pid)
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if processGone(pid) {
			return
		}
	}
	t.Errorf("process %d still alive after Close", pid)
}

// checkNoGoroutineLeak fails if goroutines started during the test outlive it.
func checkNoGoroutineLeak(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		var now int
		for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if now = runtime.NumGoroutine(); now <= before {
				return
			}
		}
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines before, %d after:\n%s", before, now, buf[:runtime.Stack(buf, true)])
	})
}

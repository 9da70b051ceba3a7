package history

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func ptr[T any](v T) *T { return &v }

// fullRun sets every field of Run to a distinct, non-zero value.
func fullRun() *Run {
	start := time.Unix(0, 1_700_000_000_123_456_789)
	end := time.Unix(0, 1_700_000_002_223_456_789)
	return &Run{
		SessionID: "sess-1", PTYSessionID: "pty-1",
		Command: `ls -la | grep "x"`, Argv: []string{"ls", "-la", "a<b>&c"}, Cwd: "/home/u/proj", Workspace: "/home/u/proj",
		Args:   []string{"run", "--workspace", ".", "--", "ls"},
		Status: StatusFinished, StartedAt: start, EndedAt: &end, DurationMS: ptr(2100.5), ExitCode: ptr(3),
		Signal: "SIGTERM", TimedOut: true, OOMKilled: true, ErrorCode: "E_SANDBOX",
		Stdout: "out\n", Stderr: "err\n", StdoutBytes: 4, StderrBytes: 4, OutputTruncated: true, OutputKept: true,
		Permission: PermAskedApproved, Scope: "session", Risk: 42, Level: "medium", Category: "filesystem", Rule: "rm-rf",
		Decision: json.RawMessage(`{"decision":"ask","risk":42}`),
		Enforced: json.RawMessage(`{"landlock_abi":7,"namespaces":["user","pid"]}`),
		Env:      []EnvVar{{Name: "HOME", Value: "/home/u"}, {Name: "GITHUB_TOKEN", Secret: true}},
		Version:  "0.1.0", Host: "box", User: "u", PID: 1234, PIDStart: 98765, BootID: "boot-1",
	}
}

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})

	t.Run("Record", func(t *testing.T) {
		want := fullRun()
		id, err := s.Record(ctx, want)
		if err != nil {
			t.Fatalf("Record: %v", err)
		}
		if id == 0 || want.ID != id {
			t.Fatalf("Record id = %d, r.ID = %d", id, want.ID)
		}
		got, err := s.Get(ctx, id)
		if err != nil {
			t.Fatalf("Get(%d): %v", id, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Get(%d) =\n%+v\nwant\n%+v", id, got, want)
		}
	})

	t.Run("Start+Finish", func(t *testing.T) {
		want := fullRun()
		begin := *want
		begin.Status, begin.EndedAt, begin.DurationMS, begin.ExitCode = "ignored", nil, nil, nil
		begin.Signal, begin.TimedOut, begin.OOMKilled, begin.ErrorCode = "", false, false, ""
		begin.Stdout, begin.Stderr, begin.StdoutBytes, begin.StderrBytes = "", "", 0, 0
		begin.OutputTruncated, begin.OutputKept, begin.Enforced = false, false, nil
		if _, err := s.Start(ctx, &begin); err != nil {
			t.Fatalf("Start: %v", err)
		}
		mid, err := s.Get(ctx, begin.ID)
		if err != nil {
			t.Fatalf("Get after Start: %v", err)
		}
		if mid.Status != StatusRunning || mid.EndedAt != nil {
			t.Errorf("after Start: status %q, ended %v; want running, nil", mid.Status, mid.EndedAt)
		}
		want.ID = begin.ID
		end := *want
		end.Status = "" // Finish defaults to finished
		if err := s.Finish(ctx, &end); err != nil {
			t.Fatalf("Finish: %v", err)
		}
		got, err := s.Get(ctx, want.ID)
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Get(%d) =\n%+v\nwant\n%+v", want.ID, got, want)
		}
	})

	t.Run("empty fields stay empty", func(t *testing.T) {
		want := &Run{Status: StatusDenied, StartedAt: time.Unix(0, 5), Cwd: "/", PID: 1}
		if _, err := s.Record(ctx, want); err != nil {
			t.Fatalf("Record: %v", err)
		}
		got, err := s.Get(ctx, want.ID)
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		want.BootID = s.bootID // Record fills this process's boot ID
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Get =\n%+v\nwant\n%+v", got, want)
		}
	})
}

func TestStartFillsDefaults(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	s := openTest(t, Options{Now: fixedClock(now), BootID: "this-boot"})
	r := &Run{Command: "true", Cwd: "/"}
	if _, err := s.Start(ctx, r); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if err := s.Finish(ctx, &Run{ID: r.ID, EndedAt: ptr(now.Add(1500 * time.Millisecond))}); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	got, err := s.Get(ctx, r.ID)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if !got.StartedAt.Equal(now) || got.PID != os.Getpid() || got.BootID != "this-boot" || got.Status != StatusFinished {
		t.Errorf("Get = started %v pid %d boot %q status %q; want %v %d %q %q",
			got.StartedAt, got.PID, got.BootID, got.Status, now, os.Getpid(), "this-boot", StatusFinished)
	}
	if got.DurationMS == nil || *got.DurationMS != 1500 {
		t.Errorf("DurationMS = %v, want 1500 (from the stored start)", got.DurationMS)
	}
}

func TestNotFound(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	if _, err := s.Get(ctx, 99); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get(99) error = %v, want ErrNotFound", err)
	}
	if err := s.Finish(ctx, &Run{ID: 99}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Finish(99) error = %v, want ErrNotFound", err)
	}
	if err := s.Finish(ctx, &Run{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Finish(no id) error = %v, want ErrNotFound", err)
	}
}

func TestOutputCap(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	big := "HEAD" + strings.Repeat("é", maxText) + "TAIL" // 2-byte runes: cuts must respect them
	r := &Run{Status: StatusFinished, Cwd: "/", Stdout: big, Stderr: "small"}
	if _, err := s.Record(ctx, r); err != nil {
		t.Fatalf("Record: %v", err)
	}
	got, err := s.Get(ctx, r.ID)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if len(got.Stdout) > maxText+100 || !strings.HasPrefix(got.Stdout, "HEAD") || !strings.HasSuffix(got.Stdout, "TAIL") ||
		!strings.Contains(got.Stdout, "bytes omitted") {
		t.Errorf("stored stdout: %d bytes, head %q, tail %q", len(got.Stdout), got.Stdout[:8], got.Stdout[len(got.Stdout)-8:])
	}
	if !json.Valid([]byte(`"`+strings.ReplaceAll(got.Stdout, "\n", `\n`)+`"`)) || !got.OutputTruncated {
		t.Errorf("stored stdout is not valid UTF-8 or not marked truncated (truncated=%v)", got.OutputTruncated)
	}
	if got.StdoutBytes != int64(len(big)) || got.Stderr != "small" || got.StderrBytes != 5 {
		t.Errorf("byte counts = %d, %d; want %d, 5", got.StdoutBytes, got.StderrBytes, len(big))
	}
}

func TestFileMode(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "forgebox")
	s, _, err := Open(context.Background(), filepath.Join(dir, "history.db"), Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	if _, err := s.Start(context.Background(), &Run{Command: "true"}); err != nil {
		t.Fatalf("Start: %v", err)
	}
	for _, c := range []struct {
		path string
		want os.FileMode
	}{{dir, 0o700 | os.ModeDir}, {s.Path(), 0o600}, {s.Path() + "-wal", 0o600}, {s.Path() + "-shm", 0o600}} {
		fi, err := os.Stat(c.path)
		if err != nil {
			t.Fatalf("stat: %v", err)
		}
		if fi.Mode() != c.want {
			t.Errorf("mode of %s = %v, want %v", c.path, fi.Mode(), c.want)
		}
	}
}

// TestPragmas checks what every connection runs with, also after Start
// switched its commit to synchronous=FULL.
func TestPragmas(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	if _, err := s.Start(ctx, &Run{Command: "true"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pragma, want string
	}{
		{"journal_mode", "wal"}, {"busy_timeout", "10000"}, {"foreign_keys", "1"},
		{"synchronous", "1"}, {"journal_size_limit", "4194304"}, {"user_version", "3"},
	} {
		var got string
		if err := s.db.QueryRowContext(ctx, "PRAGMA "+c.pragma).Scan(&got); err != nil {
			t.Fatalf("PRAGMA %s: %v", c.pragma, err)
		}
		if got != c.want {
			t.Errorf("PRAGMA %s = %s, want %s", c.pragma, got, c.want)
		}
	}
}

// A huge argument list is bounded like output: a row never grows to the
// size of what the kernel accepts as argv.
func TestHugeArgvIsBounded(t *testing.T) {
	s := openTest(t, Options{})
	big := strings.Repeat("x", 1<<20)
	r := &Run{Argv: []string{"echo", big, big}, Args: []string{"--", "echo", big}, Cwd: "/w", Status: StatusFinished,
		Env: []EnvVar{{Name: "BIG", Value: big}}}
	id, err := s.Record(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	size := 0
	for _, a := range append(got.Argv, got.Args...) {
		size += len(a)
	}
	if size > 3*maxText || len(got.Env[0].Value) > maxText+200 {
		t.Errorf("stored %d bytes of arguments and a %d-byte variable; want them bounded near %d", size, len(got.Env[0].Value), maxText)
	}
}

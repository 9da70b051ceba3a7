package session

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestExecStatePersists(t *testing.T) {
	s := startBash(t)
	steps := []struct{ command, want string }{
		{"cd /tmp && export X=1", ""},
		{"pwd; echo $X", "/tmp\n1\n"},
		{"greet() { echo \"hi $1\"; }", ""},
		{"greet there", "hi there\n"},
		{"declare Y=2", ""},
		{"echo $Y", "2\n"},
		{"false", ""},
		{"echo $?", "1\n"},
	}
	for _, step := range steps {
		if got := mustExec(t, s, step.command).Output; got != step.want {
			t.Errorf("Exec(%q).Output = %q, want %q", step.command, got, step.want)
		}
	}
}

func TestExecCommands(t *testing.T) {
	s := startBash(t)
	tests := []struct {
		name, command, want string
		code                int
	}{
		{"exit status", "(exit 3)", "", 3},
		{"failing function", "f() { echo failing >&2; return 3; }; f", "failing\n", 3},
		{"no trailing newline", "printf abc", "abc", 0},
		{"multi-line", "echo one\necho two\n\necho three", "one\ntwo\nthree\n", 0},
		{"heredoc", "cat <<'EOF'\n  indented $HOME\nline2\nEOF", "  indented $HOME\nline2\n", 0},
		{"quotes and bang", `echo "it's" 'a \ b' hi!`, "it's a \\ b hi!\n", 0},
		{"unicode", "echo 'héllo ✓'", "héllo ✓\n", 0},
		{"syntax error", "echo 'unterminated", "", 2},
		{"fake markers", `printf 'x\033]6973;P;%s;0\007y\n' 0123456789abcdef0123456789abcdef; ` +
			`printf '\033]6973;S;%s\007' abc; echo '__fb_begin 00; eval z'`, "xy\n__fb_begin 00; eval z\n", 0},
		{"empty", "", "", 0},
		{"colours stripped", `printf '\033[1;31mred\033[0m\n'`, "red\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := s.Exec(context.Background(), tt.command, 10*time.Second)
			if err != nil {
				t.Fatalf("Exec(%q): %v", tt.command, err)
			}
			if tt.name == "syntax error" {
				// bash's message goes to the terminal too; only the status matters.
				res.Output = ""
			}
			if res.Output != tt.want || res.ExitCode != tt.code {
				t.Errorf("Exec(%q) = %q, %d, want %q, %d", tt.command, res.Output, res.ExitCode, tt.want, tt.code)
			}
		})
	}
}

func TestExecHidesEchoAndMarkers(t *testing.T) {
	s := startBash(t)
	res := mustExec(t, s, "echo hi-$((1+2))")
	s.mu.Lock()
	nonce := s.nonces[len(s.nonces)-1]
	s.mu.Unlock()
	if res.Output != "hi-3\n" {
		t.Errorf("Output = %q, want %q", res.Output, "hi-3\n")
	}
	r := s.Read(200 * time.Millisecond)
	for _, got := range []string{res.Output, r.Output, r.Screen.Text} {
		for _, bad := range []string{nonce, "echo hi-", "__fb", "6973", "eval"} {
			if strings.Contains(got, bad) {
				t.Errorf("%q contains %q", got, bad)
			}
		}
	}
	if r.Screen.Text != "hi-3" {
		t.Errorf("screen = %q, want only the output", r.Screen.Text)
	}
}

func TestExecTimeout(t *testing.T) {
	s := startBash(t)
	res, err := s.Exec(context.Background(), "echo started; sleep 100", 300*time.Millisecond)
	if err != nil {
		t.Fatalf("Exec(sleep 100): %v", err)
	}
	if !res.TimedOut || res.StillRunning || res.ExitCode != 130 || !strings.HasPrefix(res.Output, "started\n") {
		t.Errorf("Exec(sleep 100, 300ms) = %+v, want TimedOut with status 130 and the output so far", res)
	}
	if got := mustExec(t, s, "echo ok").Output; got != "ok\n" {
		t.Errorf("Exec(echo ok) after a timeout = %q", got)
	}
}

func TestExecContextCancel(t *testing.T) {
	s := startBash(t)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := s.Exec(ctx, "sleep 100", time.Minute)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Exec with an expiring context: err = %v, want context.DeadlineExceeded", err)
	}
	mustExec(t, s, "true")
}

func TestExecStillRunningAfterInterrupt(t *testing.T) {
	s := startBash(t)
	res, err := s.Exec(context.Background(), `bash -c "trap '' INT; sleep 1.5; echo late"`, 200*time.Millisecond)
	if err != nil {
		t.Fatalf("Exec: %v", err)
	}
	if !res.TimedOut || !res.StillRunning || res.ExitCode != -1 {
		t.Errorf("Exec(command ignoring SIGINT) = %+v, want TimedOut, StillRunning, ExitCode -1", res)
	}
	if _, err := s.Exec(context.Background(), "echo x", time.Second); !errors.Is(err, ErrNotAtPrompt) {
		t.Errorf("Exec while the command still runs: err = %v, want ErrNotAtPrompt", err)
	}
	r := readUntil(t, s, "the shell's prompt", func(out string, r ReadResult) bool { return r.AtPrompt })
	if !strings.Contains(r.Output, "late") {
		t.Errorf("Read after the command ended = %q, want its late output", r.Output)
	}
	if got := mustExec(t, s, "echo again").Output; got != "again\n" {
		t.Errorf("Exec after recovery = %q", got)
	}
}

func TestExecBusy(t *testing.T) {
	s := startBash(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Exec(context.Background(), "sleep 0.5", 5*time.Second)
	}()
	time.Sleep(100 * time.Millisecond)
	if _, err := s.Exec(context.Background(), "true", time.Second); !errors.Is(err, ErrBusy) {
		t.Errorf("concurrent Exec: err = %v, want ErrBusy", err)
	}
	<-done
}

func TestExecHugeOutput(t *testing.T) {
	s := startBash(t)
	res := mustExec(t, s, `head -c 5000000 /dev/zero | tr '\0' a; echo; echo END`)
	if !res.Truncated || len(res.Output) > DefaultOutputLimit+100 {
		t.Fatalf("5 MB output: %d bytes, Truncated %v; want bounded", len(res.Output), res.Truncated)
	}
	if !strings.Contains(res.Output, "bytes omitted ...]") || !strings.HasSuffix(res.Output, "a\nEND\n") {
		t.Errorf("5 MB output lacks the omission note or its tail: ...%q", res.Output[len(res.Output)-50:])
	}
	if got := mustExec(t, s, "echo after").Output; got != "after\n" {
		t.Errorf("Exec after huge output = %q", got)
	}
}

func TestExecBinaryOutput(t *testing.T) {
	s := startBash(t)
	res := mustExec(t, s, `printf 'a\000b\377c\n'; head -c 20000 /dev/urandom; echo; echo done`)
	if !utf8.ValidString(res.Output) {
		t.Fatalf("Output is not valid UTF-8")
	}
	if !strings.HasPrefix(res.Output, "ab\uFFFDc\n") || !strings.HasSuffix(res.Output, "done\n") {
		t.Errorf("Output = %q...%q, want NUL dropped, 0xff replaced, and the end intact", res.Output[:8], res.Output[len(res.Output)-8:])
	}
	if got := mustExec(t, s, "echo fine").Output; got != "fine\n" {
		t.Errorf("Exec after binary output = %q", got)
	}
}

func TestExecLongCommand(t *testing.T) {
	s := startBash(t)
	body := strings.Repeat("0123456789abcdef\n", 3000) // 51 KB, past any line buffer
	res := mustExec(t, s, "wc -c <<'EOF'\n"+body+"EOF")
	if got := strings.TrimSpace(res.Output); got != strconv.Itoa(len(body)) {
		t.Errorf("heredoc of %d bytes: wc -c says %q", len(body), got)
	}
}

func TestExecShellExit(t *testing.T) {
	s := startBash(t)
	res, err := s.Exec(context.Background(), "echo bye; exit 3", 5*time.Second)
	// Interactive bash says "exit" as it leaves.
	if !errors.Is(err, ErrExited) || res.ExitCode != 3 || !strings.HasPrefix(res.Output, "bye\n") {
		t.Errorf("Exec(exit 3) = %+v, %v; want output, status 3 and ErrExited", res, err)
	}
	if s.Alive() {
		t.Errorf("Alive() after exit = true")
	}
	if _, err := s.Exec(context.Background(), "true", time.Second); !errors.Is(err, ErrExited) {
		t.Errorf("Exec after exit: err = %v, want ErrExited", err)
	}
}

func TestClosedSession(t *testing.T) {
	s := startBash(t)
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := s.Exec(context.Background(), "true", time.Second); !errors.Is(err, ErrClosed) {
		t.Errorf("Exec after Close: err = %v, want ErrClosed", err)
	}
	if err := s.Send("x"); !errors.Is(err, ErrClosed) {
		t.Errorf("Send after Close: err = %v, want ErrClosed", err)
	}
	if err := s.Resize(30, 100); !errors.Is(err, ErrClosed) {
		t.Errorf("Resize after Close: err = %v, want ErrClosed", err)
	}
	if r := s.Read(time.Second); r.Alive {
		t.Errorf("Read after Close: Alive = true")
	}
}

func TestCloseKillsSession(t *testing.T) {
	checkNoGoroutineLeak(t)
	s := startBash(t)
	pids := map[string]string{
		"background job": "sleep 1000 & echo $!",
		"ignores SIGHUP": "nohup sleep 1000 >/dev/null 2>&1 & echo $!",
		"stopped job":    "sleep 1000 & kill -STOP $!; echo $!",
		// Left the session but is still a descendant of the shell.
		"new session": `(setsid sleep 1000 & echo $! >"$HOME/pid"; wait) >/dev/null 2>&1 & sleep 0.2; cat "$HOME/pid"`,
	}
	var victims []int
	for name, command := range pids {
		if name == "new session" {
			needProgram(t, "setsid")
		}
		out := strings.TrimSpace(mustExec(t, s, command).Output)
		lines := strings.Split(out, "\n")
		pid, err := strconv.Atoi(lines[len(lines)-1])
		if err != nil {
			t.Fatalf("%s: %q: %v", name, out, err)
		}
		if processGone(pid) {
			t.Fatalf("%s: pid %d not running before Close", name, pid)
		}
		victims = append(victims, pid)
	}
	shell := s.proc.pid
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, pid := range append(victims, shell) {
		waitGone(t, pid)
	}
}

func TestNoGoroutineLeak(t *testing.T) {
	checkNoGoroutineLeak(t)
	for range 3 {
		s, err := Start(context.Background(), testOptions(t))
		if err != nil {
			t.Fatalf("Start: %v", err)
		}
		mustExec(t, s, "echo hi")
		s.Send("sleep 100{Enter}")
		s.Read(50 * time.Millisecond)
		s.Close()
	}
	s, err := Start(context.Background(), testOptions(t))
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	s.Exec(context.Background(), "exit 0", time.Second)
	s.Close()
}

func TestStartFailures(t *testing.T) {
	tests := []struct {
		name    string
		o       Options
		wantErr string
	}{
		{"missing program", Options{Argv: []string{"/nonexistent/bash"}}, "no such file"},
		{"not bash", Options{Argv: []string{"cat"}}, "is the program bash?"},
		{"exits at once", Options{Argv: []string{"true"}}, "exited during setup (status 0)"},
		{"bad size", Options{Rows: 1, Cols: 5}, "terminal size 1x5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			s, err := Start(ctx, tt.o)
			if err == nil {
				s.Close()
				t.Fatalf("Start(%v) succeeded", tt.o.Argv)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Start(%v) = %v, want an error saying %q", tt.o.Argv, err, tt.wantErr)
			}
		})
	}
}

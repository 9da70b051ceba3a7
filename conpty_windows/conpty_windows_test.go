package conpty

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// realWindows skips tests that need Windows security to behave as on a
// real Windows: Wine stubs restricted tokens, and runs ConPTY only under a
// terminal.
func realWindows(t *testing.T) {
	t.Helper()
	if os.Getenv("FORGEBOX_REAL_WINDOWS") != "1" {
		t.Skip("needs real Windows security (restricted tokens, integrity labels, ConPTY): set FORGEBOX_REAL_WINDOWS=1 on a Windows machine")
	}
}

func cmdExe(t *testing.T) string {
	t.Helper()
	dir, err := windows.GetSystemDirectory()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "cmd.exe")
}

func nul(t *testing.T) windows.Handle {
	t.Helper()
	f, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return windows.Handle(f.Fd())
}

// TestJobKillsTreeOnClose works under Wine too: closing the job kills a
// process and its child.
func TestJobKillsTreeOnClose(t *testing.T) {
	job, err := NewJob()
	if err != nil {
		t.Fatal(err)
	}
	n := nul(t)
	p, err := Start(ProcAttr{Job: job, App: cmdExe(t), CmdLine: `cmd.exe /d /c ping -n 60 127.0.0.1`,
		Env: os.Environ(), Stdin: n, Stdout: n, Stderr: n, NoWindow: true})
	if err != nil {
		job.Close()
		t.Fatal(err)
	}
	defer p.Close()
	time.Sleep(300 * time.Millisecond)
	if a, err := job.Accounting(); err != nil || a.ActiveProcesses < 1 {
		t.Fatalf("Accounting = %+v, %v: the process is not in the job", a, err)
	}
	job.Close()
	ev, err := windows.WaitForSingleObject(p.Handle, 5000)
	if err != nil || ev != windows.WAIT_OBJECT_0 {
		t.Fatalf("the process outlived its job: wait = %#x, %v", ev, err)
	}
}

func TestJobTimeoutExitCode(t *testing.T) {
	job, err := NewJob()
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	n := nul(t)
	p, err := Start(ProcAttr{Job: job, App: cmdExe(t), CmdLine: `cmd.exe /d /c ping -n 60 127.0.0.1`,
		Env: os.Environ(), Stdin: n, Stdout: n, Stderr: n, NoWindow: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := job.Terminate(124); err != nil {
		t.Fatal(err)
	}
	if code, err := p.Wait(); err != nil || code != 124 {
		t.Fatalf("Wait = %d, %v, want 124", code, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := job.WaitEmpty(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestRestrictedTokenIsLowAndRestricted(t *testing.T) {
	realWindows(t)
	sid, err := RunSID()
	if err != nil {
		t.Fatal(err)
	}
	token, info, err := NewRestrictedToken(TokenOptions{RunSID: sid})
	if err != nil {
		t.Fatal(err)
	}
	defer token.Close()
	if r, err := token.IsRestricted(); err != nil || !r {
		t.Errorf("IsRestricted = %v, %v", r, err)
	}
	var n uint32
	buf := make([]byte, 256)
	if err := windows.GetTokenInformation(token, windows.TokenIntegrityLevel, &buf[0], uint32(len(buf)), &n); err != nil {
		t.Fatal(err)
	}
	tml := (*windows.Tokenmandatorylabel)(unsafe.Pointer(&buf[0]))
	if got := tml.Label.Sid.String(); got != LowLabelSID {
		t.Errorf("integrity level %s, want %s", got, LowLabelSID)
	}
	for _, want := range []string{sid, everyoneSID, usersSID, restrictedSID} {
		if !strings.Contains(strings.Join(info.Restricting, " "), want) {
			t.Errorf("restricting SIDs %v lack %s", info.Restricting, want)
		}
	}
	if strings.Contains(strings.Join(info.Restricting, " "), info.User) {
		t.Errorf("strict token keeps the user %s among %v", info.User, info.Restricting)
	}
}

// sddl reads the DACL and label of path as SDDL.
func sddl(t *testing.T, path string) string {
	t.Helper()
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION|windows.LABEL_SECURITY_INFORMATION)
	if err != nil {
		t.Fatal(err)
	}
	return sd.String()
}

// TestTreeApplyRevoke labels a small tree, checks what the walk did, and
// checks that the undo gives every descriptor back as it was.
func TestTreeApplyRevoke(t *testing.T) {
	realWindows(t)
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "src", "deep"), 0o755))
	must(os.MkdirAll(filepath.Join(root, ".git", "hooks"), 0o755))
	must(os.WriteFile(filepath.Join(root, "src", "a.go"), []byte("package a"), 0o644))
	must(os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[core]"), 0o644))
	outside := t.TempDir()
	must(os.WriteFile(filepath.Join(outside, "target"), []byte("x"), 0o644))
	must(os.Link(filepath.Join(outside, "target"), filepath.Join(root, "linked")))

	paths := []string{root, filepath.Join(root, "src"), filepath.Join(root, "src", "a.go"), filepath.Join(root, ".git", "config"),
		filepath.Join(root, ".git", "hooks"), filepath.Join(outside, "target")}
	before := map[string]string{}
	for _, p := range paths {
		before[p] = sddl(t, p)
	}
	sid, _ := RunSID()
	plan := WritablePlan(sid, false, true)
	plan.Protect([]string{".git", "config"}, false)
	plan.Protect([]string{".git", "hooks"}, true)
	res, err := ApplyTree(context.Background(), root, plan)
	if err != nil {
		t.Fatal(err)
	}
	if res.Root.AlreadyLow || !res.Root.OwnerRights || res.Changed < 5 {
		t.Errorf("ApplyTree = %+v", res)
	}
	if !strings.Contains(sddl(t, filepath.Join(root, "src", "a.go")), "LW") {
		t.Errorf("src/a.go is not labelled Low: %s", sddl(t, filepath.Join(root, "src", "a.go")))
	}
	if got := sddl(t, filepath.Join(outside, "target")); got != before[filepath.Join(outside, "target")] {
		t.Errorf("a file outside the tree changed through its hard link: %s, was %s", got, before[filepath.Join(outside, "target")])
	}
	res, err = RevokeTree(context.Background(), root, Revoke{RunSIDs: []string{sid}, OwnerRights: true, Labels: true}, nil)
	if err != nil || res.SkippedCount() > 0 {
		t.Fatalf("RevokeTree = %+v, %v", res, err)
	}
	for _, p := range paths {
		if got := sddl(t, p); got != before[p] {
			t.Errorf("%s after undo:\n %s\nwant\n %s", p, got, before[p])
		}
	}
}

func TestPTYEcho(t *testing.T) {
	realWindows(t)
	if !HasConPTY() {
		t.Skip(ErrNoConPTY)
	}
	pty, err := NewPTY(80, 25)
	if err != nil {
		t.Fatal(err)
	}
	defer pty.Close()
	job, err := NewJob()
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	p, err := Start(ProcAttr{Job: job, App: cmdExe(t), CmdLine: `cmd.exe /d /c echo forgebox-pty-ok`, Env: os.Environ(), PTY: pty})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var out bytes.Buffer
	done := make(chan struct{})
	go func() {
		io.Copy(&out, pty.Output())
		close(done)
	}()
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	go pty.CloseConsole()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the pseudo console's output did not end")
	}
	if !strings.Contains(out.String(), "forgebox-pty-ok") {
		t.Errorf("PTY output %q lacks the echo", out.String())
	}
}

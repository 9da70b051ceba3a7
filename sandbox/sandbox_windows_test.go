package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// realWindows skips tests that need Windows security to behave as on a
// real Windows: Wine stubs restricted tokens.
func realWindows(t *testing.T) {
	t.Helper()
	if os.Getenv("FORGEBOX_REAL_WINDOWS") != "1" {
		t.Skip("needs real Windows security (restricted tokens, integrity labels): set FORGEBOX_REAL_WINDOWS=1 on a Windows machine")
	}
}

func TestWindowsRefusesWhatItCannotEnforce(t *testing.T) {
	// Not t.TempDir: Wine, where this test runs too, fails its removal.
	ws, err := os.MkdirTemp("", "forgebox-refuses-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(ws) })
	for _, c := range []struct {
		name  string
		spec  Spec
		layer string
	}{
		{"net none", Spec{Argv: []string{"cmd"}, Dir: ws, Profile: ProfileStrict}, "network"},
		{"net loopback", Spec{Argv: []string{"cmd"}, Dir: ws, Profile: ProfileStrict, Network: NetLoopback}, "network"},
		{"workspace profile", Spec{Argv: []string{"cmd"}, Dir: ws, Network: NetHost}, "secret hiding"},
		{"readonly profile", Spec{Argv: []string{"cmd"}, Dir: ws, Network: NetHost, Profile: ProfileReadOnly}, "secret hiding"},
		{"net allow", Spec{Argv: []string{"cmd"}, Dir: ws, Profile: ProfileStrict, Network: NetAllow}, "network allowlist (--net allow)"},
		{"net allow, best effort", Spec{Argv: []string{"cmd"}, Dir: ws, Profile: ProfileStrict, Network: NetAllow, BestEffort: true}, "network allowlist (--net allow)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Run(context.Background(), c.spec, Streams{Capture: true})
			var un *UnavailableError
			if !errors.As(err, &un) || un.Layer != c.layer {
				t.Fatalf("Run(%s) = %v, want an UnavailableError for %q", c.name, err, c.layer)
			}
		})
	}
}

func TestWindowsEnv(t *testing.T) {
	s := Spec{Environ: []string{`Path=C:\Windows\System32;C:\Tools`, `SystemRoot=C:\Windows`, "PATHEXT=.COM;.EXE;.BAT",
		"GITHUB_TOKEN=ghp_x", "TEMP=C:\\Users\\a\\AppData\\Local\\Temp", "UserProfile=C:\\Users\\a", "Unrelated=1"},
		SetEnv: []string{"Foo=bar"}}
	env, withheld, err := windowsEnv(s, `C:\t\run`)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`PATH=C:\Windows\System32;C:\Tools`, `SYSTEMROOT=C:\Windows`, "PATHEXT=.COM;.EXE;.BAT",
		`TEMP=C:\t\run`, `TMP=C:\t\run`, `USERPROFILE=C:\Users\a`, "FOO=bar", "GIT_TERMINAL_PROMPT=0"} {
		if !slices.Contains(env, want) {
			t.Errorf("env lacks %q: %q", want, env)
		}
	}
	for _, kv := range env {
		if strings.HasPrefix(strings.ToUpper(kv), "UNRELATED=") || strings.Contains(kv, "ghp_x") {
			t.Errorf("env has %q", kv)
		}
	}
	if !slices.Contains(withheld, "ghp_x") {
		t.Errorf("withheld = %q, want the token", withheld)
	}
	// TEMP set explicitly wins; no PATH gets the system's.
	env, _, _ = windowsEnv(Spec{Environ: []string{`SystemRoot=D:\Win`}, SetEnv: []string{`TEMP=C:\mine`}}, `C:\t\run`)
	if !slices.Contains(env, `TEMP=C:\mine`) || !slices.Contains(env, `PATH=D:\Win\System32;D:\Win;D:\Win\System32\Wbem;D:\Win\System32\WindowsPowerShell\v1.0`) {
		t.Errorf("env = %q", env)
	}
}

func TestLookPathWindows(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"tool.exe", "script.cmd", "data.txt", "noext"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(dir, "sub.exe"), 0o755)
	cwd := t.TempDir()
	os.WriteFile(filepath.Join(cwd, "local.exe"), nil, 0o755)
	for _, c := range []struct {
		name, want string
	}{
		{"tool", filepath.Join(dir, "tool.exe")},
		{"TOOL.EXE", filepath.Join(dir, "TOOL.EXE")},
		{"script", filepath.Join(dir, "script.cmd")},
		{"data.txt", ""}, // not a program extension
		{"sub", ""},      // a directory
		{"local", ""},    // never the working directory implicitly
		{`.\local`, filepath.Join(cwd, "local.exe")},
		{filepath.Join(dir, "tool"), filepath.Join(dir, "tool.exe")},
	} {
		got, err := lookPathWindows(c.name, `relative;;"`+dir+`"`, ".COM;.EXE;.BAT;.CMD", cwd)
		var ee *ExecError
		switch {
		case c.want == "" && (!errors.As(err, &ee) || !ee.NotFound()):
			t.Errorf("lookPathWindows(%q) = %q, %v, want not found", c.name, got, err)
		case c.want != "" && (err != nil || !strings.EqualFold(got, c.want)):
			t.Errorf("lookPathWindows(%q) = %q, %v, want %q", c.name, got, err, c.want)
		}
	}
}

func TestBatchArgumentsRefused(t *testing.T) {
	r := &winRun{app: `C:\x\build.bat`}
	for _, a := range []string{`a&calc`, `"`, `%PATH%`, `x|y`, `^`, "a\nb"} {
		if err := r.batch([]string{a}); !errors.Is(err, ErrInvalid) {
			t.Errorf("batch(%q) = %v, want ErrInvalid", a, err)
		}
	}
	if err := r.batch([]string{"plain", "with space", "-x=1"}); err != nil {
		t.Fatal(err)
	}
	if want := `cmd.exe /d /s /c ""C:\x\build.bat" plain "with space" -x=1"`; r.cmdline != want {
		t.Errorf("cmdline = %s, want %s", r.cmdline, want)
	}
}

// run runs cmd.exe line in a strict sandbox on the workspace ws.
func runCmd(t *testing.T, ws, line string, mod func(*Spec)) *Result {
	t.Helper()
	s := Spec{Command: line, Shell: "cmd", Dir: ws, Profile: ProfileStrict, Network: NetHost, Environ: os.Environ(), Timeout: time.Minute}
	if mod != nil {
		mod(&s)
	}
	res, err := Run(context.Background(), s, Streams{Capture: true})
	if err != nil {
		t.Fatalf("Run(%q) = %v", line, err)
	}
	return res
}

func TestWindowsSandboxWrites(t *testing.T) {
	realWindows(t)
	ws := t.TempDir()
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim.txt")
	os.WriteFile(victim, []byte("original"), 0o644)
	os.MkdirAll(filepath.Join(ws, ".git"), 0o755)
	gitConfig := filepath.Join(ws, ".git", "config")
	os.WriteFile(gitConfig, []byte("[core]\n"), 0o644)
	before := sddlOf(t, ws)

	res := runCmd(t, ws, `echo made> made.txt & echo pwned> "`+victim+`" & echo pwned>> .git\config & del /q .git\config & echo x`, nil)
	if !res.Enforced.Sandbox || len(res.Enforced.Namespaces) != 0 {
		t.Errorf("Enforced = %+v", res.Enforced)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "made.txt")); err != nil || !strings.Contains(string(b), "made") {
		t.Errorf("the workspace was not writable: %q, %v (output %q)", b, err, res.Stdout.Head)
	}
	if b, _ := os.ReadFile(victim); string(b) != "original" {
		t.Errorf("a file outside the workspace changed: %q", b)
	}
	if b, _ := os.ReadFile(gitConfig); string(b) != "[core]\n" {
		t.Errorf(".git/config changed: %q", b)
	}
	if after := sddlOf(t, ws); after != before {
		t.Errorf("the workspace's security after the run:\n %s\nwant\n %s", after, before)
	}
	if s := sddlOf(t, filepath.Join(ws, "made.txt")); strings.Contains(s, "S-1-9-") || strings.Contains(s, "LW") {
		t.Errorf("a file the run made keeps its permissions: %s", s)
	}
	if _, err := os.Stat(res.Enforced.PrivateDirs[0]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the private temporary directory %s is left: %v", res.Enforced.PrivateDirs[0], err)
	}
}

func TestWindowsSandboxTimeoutKillsTree(t *testing.T) {
	realWindows(t)
	ws := t.TempDir()
	start := time.Now()
	res := runCmd(t, ws, `start /b ping -n 120 127.0.0.1 & ping -n 120 127.0.0.1`, func(s *Spec) { s.Timeout = 2 * time.Second })
	if res.ExitCode != 124 || !res.TimedOut {
		t.Errorf("ExitCode %d, TimedOut %v; want 124", res.ExitCode, res.TimedOut)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the run took %v", d)
	}
}

func TestWindowsExitCode(t *testing.T) {
	realWindows(t)
	res := runCmd(t, t.TempDir(), `exit /b 7`, nil)
	if res.ExitCode != 7 {
		t.Errorf("ExitCode = %d, want 7", res.ExitCode)
	}
}

func sddlOf(t *testing.T, path string) string {
	t.Helper()
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION|windows.LABEL_SECURITY_INFORMATION)
	if err != nil {
		t.Fatal(err)
	}
	return sd.String()
}

package sandbox

import (
	"errors"
	"strings"
	"testing"
)

func TestCommandArgv(t *testing.T) {
	argv, alt, err := commandArgv(Spec{Command: "echo hi"})
	if err != nil || strings.Join(argv, "|") != "bash|-c|echo hi" || alt != "sh" {
		t.Errorf("commandArgv(-c) = %q, %q, %v; want bash -c with sh as fallback", argv, alt, err)
	}
	argv, alt, _ = commandArgv(Spec{Command: "echo hi", Shell: "/bin/dash"})
	if argv[0] != "/bin/dash" || alt != "" {
		t.Errorf("commandArgv(--shell) = %q, %q; want the shell, no fallback", argv, alt)
	}
	bad := []Spec{
		{},
		{Command: "   "},
		{Argv: []string{""}},
		{Argv: []string{"ls"}, Command: "ls"},
		{Argv: []string{"echo", "a\x00b"}},
		{Command: "echo \x00"},
		{Argv: []string{"echo", strings.Repeat("x", maxArgLen+1)}},
		{Argv: append([]string{"echo"}, repeat(strings.Repeat("x", 100<<10), 11)...)},
	}
	for _, s := range bad {
		if _, _, err := commandArgv(s); !errors.Is(err, ErrInvalid) {
			t.Errorf("commandArgv(%.40q, %.40q) = %v; want ErrInvalid", s.Argv, s.Command, err)
		}
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestCheckWorkspace(t *testing.T) {
	homes := []string{"/home/u"}
	secrets := []string{"/home/u/.ssh"}
	tests := map[string]bool{
		"/": false, "/home": false, "/home/u": false, "/usr": false, "/usr/lib/x": false, "/etc": false,
		"/etc/nginx": false, "/proc/1": false, "/var": false, "/tmp": false, "/home/u/.ssh/keys": false,
		"/home/u/proj": true, "/srv/work": true, "/tmp/build": true, "/var/tmp/x": true, "/opt/app": true,
	}
	for ws, ok := range tests {
		err := checkWorkspace(ws, homes, secrets)
		if (err == nil) != ok {
			t.Errorf("checkWorkspace(%s) = %v; want ok=%v", ws, err, ok)
		}
		if err != nil && !strings.Contains(err.Error(), "--workspace") {
			t.Errorf("checkWorkspace(%s) = %q; want advice naming --workspace", ws, err)
		}
	}
}

func TestStartDir(t *testing.T) {
	for _, tt := range []struct{ dir, ws, want string }{
		{"/p", "/p", "/p"}, {"/p/sub", "/p", "/p/sub"}, {"/elsewhere", "/p", "/p"}, {"/pp", "/p", "/p"},
	} {
		if got := startDir(tt.dir, tt.ws); got != tt.want {
			t.Errorf("startDir(%s, %s) = %s; want %s", tt.dir, tt.ws, got, tt.want)
		}
	}
}

package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Bad input gets exit 125 and a forgebox: message, and changes nothing:
// the command (which would leave a file behind) never runs.
func TestBadInput(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		file := filepath.Join(e.ws, "file.txt")
		e.write(file, "x")
		locked := filepath.Join(e.dir, "locked")
		e.mkdir(locked)
		os.Chmod(locked, 0)
		t.Cleanup(func() { os.Chmod(locked, 0o755) })
		ran := "touch ran; echo ran"
		long := strings.Repeat("x", 100<<10)
		var tooMany []string
		for range 12 {
			tooMany = append(tooMany, long)
		}
		cases := []struct {
			name     string
			args     []string
			userOnly bool
		}{
			{"nonexistent workspace", []string{"--workspace", filepath.Join(e.dir, "missing"), "-c", ran}, false},
			{"workspace is a file", []string{"--workspace", file, "-c", ran}, false},
			{"unreadable workspace", []string{"--workspace", locked, "-c", ran}, true},
			{"relative --ro", []string{"--ro", "ws", "-c", ran}, false},
			{"nonexistent --ro", []string{"--ro", filepath.Join(e.dir, "missing"), "-c", ran}, false},
			{"relative --rw", []string{"--rw", "outside", "-c", ran}, false},
			{"nonexistent --rw", []string{"--rw", filepath.Join(e.dir, "missing"), "-c", ran}, false},
			{"relative --hide", []string{"--hide", "secret", "-c", ran}, false},
			{"--rw /", []string{"--rw", "/", "-c", ran}, false},
			{"--rw /proc", []string{"--rw", "/proc", "-c", ran}, false},
			{"invalid --timeout", []string{"--timeout", "soon", "-c", ran}, false},
			{"negative --timeout", []string{"--timeout", "-1s", "-c", ran}, false},
			{"invalid --grace", []string{"--grace", "1x", "-c", ran}, false},
			{"invalid --max-output", []string{"--max-output", "lots", "-c", ran}, false},
			{"negative --max-output", []string{"--max-output", "-5", "-c", ran}, false},
			{"unknown --profile", []string{"--profile", "lax", "-c", ran}, false},
			{"unknown --net", []string{"--net", "bridge", "-c", ran}, false},
			{"invalid --env", []string{"--env", "=x", "-c", ran}, false},
			{"--pty and --no-pty", []string{"--pty", "--no-pty", "-c", ran}, false},
			{"no command", []string{}, false},
			{"empty exec form", []string{"--"}, false},
			{"empty -c", []string{"-c", ""}, false},
			{"blank -c", []string{"-c", "  \n\t "}, false},
			{"empty program name", []string{"--", ""}, false},
			{"both -c and a program", []string{"-c", ran, "--", "sh", "-c", ran}, false},
			{"unknown flag", []string{"--frobnicate", "-c", ran}, false},
			{"argv over 1 MiB", append([]string{"--", "echo"}, tooMany...), false},
		}
		before := tree(t, e.dir)
		for _, c := range cases {
			if c.userOnly && e.m.root() {
				continue
			}
			t.Run(c.name, func(t *testing.T) {
				r := e.run(append([]string{"run"}, c.args...))
				if r.code != 125 {
					t.Errorf("forgebox run %.200q: exit %d; want 125\nstdout: %.200s\nstderr: %.500s", c.args, r.code, r.stdout, r.stderr)
				}
				if strings.Contains(r.stdout, "ran") {
					t.Errorf("forgebox run %.200q: the command ran", c.args)
				}
				forgeboxOnly(t, r.stderr)
			})
		}
		if after := tree(t, e.dir); after != before {
			t.Errorf("bad input changed the host:\nbefore:\n%s\nafter:\n%s", before, after)
		}

		// Unknown verbs are refused the same way.
		r := e.run([]string{"frobnicate"})
		if r.code != 125 {
			t.Errorf("forgebox frobnicate: exit %d; want 125", r.code)
		}
		forgeboxOnly(t, r.stderr)
	})
}

// The exec form hands argv to the program untouched: no shell, no
// expansion, empty and odd arguments kept. The largest argument the kernel
// lets a caller pass runs too.
func TestArgvPassesVerbatim(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		args := []string{"a", "b c", "", "x\ny", `"q"`, "'s'", "$HOME", "*", "$(id)", "é✓", "-n", "--"}
		r := e.run(append([]string{"run", "--", "printf", "[%s]"}, args...))
		want := ""
		for _, a := range args {
			want += "[" + a + "]"
		}
		if r.code != 0 || r.stdout != want {
			t.Errorf("printf through forgebox: exit %d, stdout %q; want %q", r.code, r.stdout, want)
		}

		// MAX_ARG_STRLEN is 128 KiB including the NUL: 131071 bytes is the
		// longest argument any caller can hand forgebox.
		big := strings.Repeat("y", 128<<10-1)
		r = e.run([]string{"run", "--", "sh", "-c", `printf %s "$1" | wc -c`, "sh", big})
		if r.code != 0 || strings.TrimSpace(r.stdout) != "131071" {
			t.Errorf("a 131071-byte argument: exit %d, stdout %q, stderr %.300q; want it passed whole", r.code, r.stdout, r.stderr)
		}
	})
}

// Pathological command lines end, one way or another, without hanging.
func TestPathologicalCommandLines(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		for _, c := range []struct {
			name, line string
		}{
			{"deep nesting", strings.Repeat("(", 20000) + "true" + strings.Repeat(")", 20000)},
			{"deep braces", strings.Repeat("{ ", 20000) + "true" + strings.Repeat("; }", 20000)},
			{"syntax error", ";;;&&||"},
			{"many commands", strings.Repeat("true;", 26000)},
			{"unterminated quote", `echo "never closed`},
			{"control bytes", "echo \x01\x02\x1b[2J\x7f"},
		} {
			r := e.start([]string{"run", "--no-stdin", "-c", c.line})
			res := r.wait(t, 60*time.Second)
			if res.code == 125 && !strings.HasPrefix(res.stderr, "forgebox: ") {
				t.Errorf("%s: exit 125 without a forgebox: message: %.300q", c.name, res.stderr)
			}
			t.Logf("%s: exit %d", c.name, res.code)
		}
	})
}

// A directory handed over as a standard stream would be a handle on a host
// directory (/proc/self/fd/0/x writes into it): refused.
func TestDirectoryAsStdioRefused(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		d, err := os.Open(e.outside)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		before := tree(t, e.outside)
		r := e.run([]string{"run", "--", "sh", "-c", "echo x > /proc/self/fd/0/escaped"}, func(c *exec.Cmd) { c.Stdin = d })
		if r.code != 125 || !strings.HasPrefix(r.stderr, "forgebox: ") {
			t.Errorf("directory as stdin: exit %d, stderr %q; want 125 and a forgebox: message", r.code, r.stderr)
		}
		if after := tree(t, e.outside); after != before {
			t.Errorf("the directory given as stdin changed:\n%s", after)
		}
	})
}

// --rw gets the refusals of --workspace: the home directory or a system
// directory made writable would let a command plant what runs later.
func TestDangerousRWRefused(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		for _, p := range []string{e.home, "/etc", "/usr", "/"} {
			r := e.run([]string{"run", "--rw", p, "--", "true"})
			if r.code != 125 {
				t.Errorf("--rw %s: exit %d; want 125", p, r.code)
			}
		}
	})
}

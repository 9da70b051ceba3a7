package integration

import (
	"encoding/base64"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// --json prints one object with the documented fields, and the exit status
// is the command's.
func TestJSONResult(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		r, res := e.runJSON([]string{"-c", "echo out; echo err >&2; exit 3"})
		if r.code != 3 {
			t.Errorf("forgebox exit %d; want 3, the command's", r.code)
		}
		for _, k := range []string{"command", "cwd", "exit_code", "signal", "timed_out", "duration_ms", "stdout", "stderr",
			"stdout_bytes", "stderr_bytes", "stdout_truncated", "stderr_truncated", "usage", "enforced", "warnings", "quarantined"} {
			if _, ok := res.raw[k]; !ok {
				t.Errorf("JSON result has no %q field", k)
			}
		}
		for _, k := range []string{"stdout_base64", "stderr_base64", "error", "argv"} {
			if _, ok := res.raw[k]; ok {
				t.Errorf("JSON result has %q = %v; want it absent here", k, res.raw[k])
			}
		}
		if res.Command != "echo out; echo err >&2; exit 3" || res.Cwd != e.ws || res.ExitCode != 3 || res.Signal != nil || res.TimedOut {
			t.Errorf("command %q, cwd %q, exit_code %d, signal %v, timed_out %v; want the line, %s, 3, null, false",
				res.Command, res.Cwd, res.ExitCode, res.Signal, res.TimedOut, e.ws)
		}
		if res.Stdout != "out\n" || res.Stderr != "err\n" || res.StdoutBytes != 4 || res.StderrBytes != 4 || res.StdoutTruncated || res.StderrTruncated {
			t.Errorf("stdout %q (%d bytes, truncated %v), stderr %q (%d, %v); want out and err, 4 bytes each, whole",
				res.Stdout, res.StdoutBytes, res.StdoutTruncated, res.Stderr, res.StderrBytes, res.StderrTruncated)
		}
		if res.DurationMS <= 0 {
			t.Errorf("duration_ms = %v; want > 0", res.DurationMS)
		}
		enf, ok := res.raw["enforced"].(map[string]any)
		if !ok {
			t.Fatalf("enforced = %v; want an object", res.raw["enforced"])
		}
		for _, k := range []string{"sandbox", "namespaces", "network", "profile", "read_only_root", "writable", "hidden",
			"sockets_hidden", "protected", "watched", "private_dirs", "pty"} {
			if _, ok := enf[k]; !ok {
				t.Errorf("enforced has no %q field", k)
			}
		}
		en := res.Enforced
		if !en.Sandbox || en.Network != "none" || en.Profile != "workspace" || !en.ReadOnlyRoot || en.PTY {
			t.Errorf("enforced = %+v; want sandbox, network none, profile workspace, read-only root, no pty", en)
		}
		for _, ns := range []string{"user", "pid", "mount", "net", "ipc", "uts"} {
			if !slices.Contains(en.Namespaces, ns) {
				t.Errorf("enforced.namespaces = %v; want %s among them", en.Namespaces, ns)
			}
		}
		if !slices.Contains(en.Writable, e.ws) {
			t.Errorf("enforced.writable = %v; want the workspace", en.Writable)
		}
		for _, d := range []string{"/tmp", "/dev/shm"} {
			if !slices.Contains(en.PrivateDirs, d) {
				t.Errorf("enforced.private_dirs = %v; want %s", en.PrivateDirs, d)
			}
		}

		// The exec form reports argv, not command.
		_, res = e.runJSON([]string{"--", "sh", "-c", "exit 0"})
		if !slices.Equal(res.Argv, []string{"sh", "-c", "exit 0"}) {
			t.Errorf("argv = %q; want [sh -c exit 0]", res.Argv)
		}
		if _, ok := res.raw["command"]; ok {
			t.Errorf("exec form: JSON has a command field %v", res.raw["command"])
		}
	})
}

// The JSON stays valid whatever the command prints: invalid UTF-8 becomes
// U+FFFD, one per byte, NUL bytes survive, and the exact bytes are in
// base64 next to the text.
func TestJSONBinaryOutput(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		r, res := e.runJSON([]string{"-c", `printf 'A\377\376B\000C\303' ; printf '\200ok\342\202' >&2`})
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		if want := "A\uFFFD\uFFFDB\x00C\uFFFD"; res.Stdout != want {
			t.Errorf("stdout = %q; want %q", res.Stdout, want)
		}
		if want := "\uFFFDok\uFFFD\uFFFD"; res.Stderr != want {
			t.Errorf("stderr = %q; want %q", res.Stderr, want)
		}
		for name, c := range map[string]struct {
			b64  *string
			want string
		}{"stdout": {res.StdoutBase64, "A\377\376B\000C\303"}, "stderr": {res.StderrBase64, "\200ok\342\202"}} {
			if c.b64 == nil {
				t.Errorf("%s_base64 is missing; want the exact bytes", name)
				continue
			}
			if b, err := base64.StdEncoding.DecodeString(*c.b64); err != nil || string(b) != c.want {
				t.Errorf("%s_base64 decodes to %q (%v); want %q", name, b, err, c.want)
			}
		}

		// Random binary: still one valid object, the byte count exact.
		_, res = e.runJSON([]string{"-c", "head -c 200000 /dev/urandom"})
		if res.StdoutBytes != 200000 || res.StdoutBase64 == nil {
			t.Fatalf("stdout_bytes %d, base64 present %v; want 200000 and the bytes", res.StdoutBytes, res.StdoutBase64 != nil)
		}
		if b, _ := base64.StdEncoding.DecodeString(*res.StdoutBase64); len(b) != 200000 {
			t.Errorf("stdout_base64 holds %d bytes; want 200000", len(b))
		}
	})
}

// How the command ended is in the JSON: the signal's name, a timeout.
func TestJSONSignalAndTimeout(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		r, res := e.runJSON([]string{"-c", "kill -KILL $$"})
		if r.code != 137 || res.ExitCode != 137 || res.Signal == nil || *res.Signal != "SIGKILL" {
			t.Errorf("kill -KILL $$: forgebox exit %d, exit_code %d, signal %v; want 137, 137, SIGKILL", r.code, res.ExitCode, res.raw["signal"])
		}
		r, res = e.runJSON([]string{"--timeout", "1s", "--grace", "200ms", "-c", "echo started; exec sleep " + marker()})
		if r.code != 124 || res.ExitCode != 124 || !res.TimedOut {
			t.Errorf("timeout: forgebox exit %d, exit_code %d, timed_out %v; want 124, 124, true", r.code, res.ExitCode, res.TimedOut)
		}
		if res.Stdout != "started\n" {
			t.Errorf("timeout: stdout %q; want the output printed before it", res.Stdout)
		}
		if res.DurationMS < 900 || res.DurationMS > 10000 {
			t.Errorf("timeout: duration_ms = %v; want about 1000", res.DurationMS)
		}
	})
}

// When the command cannot run, the JSON says why with a stable code.
func TestJSONErrors(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.write(e.ws+"/data.txt", "not a program")
		for _, c := range []struct {
			name string
			args []string
			exit int
			code string
		}{
			{"bad workspace", []string{"--workspace", e.dir + "/missing", "--", "true"}, 125, "invalid"},
			{"bad flag value", []string{"--timeout", "soon", "--", "true"}, 125, "invalid"},
			{"not found", []string{"--", "forgebox-no-such-program"}, 127, "not_found"},
			{"not executable", []string{"--", e.ws + "/data.txt"}, 126, "not_executable"},
		} {
			r := e.run(append([]string{"run", "--json"}, c.args...))
			if r.code != c.exit {
				t.Errorf("%s: exit %d; want %d\nstderr: %s", c.name, r.code, c.exit, r.stderr)
			}
			if strings.TrimSpace(r.stdout) == "" {
				t.Errorf("%s: no JSON on stdout; stderr: %s", c.name, r.stderr)
				continue
			}
			res := decodeResult(t, r.stdout)
			if res.ExitCode != c.exit || res.Error == nil || res.Error.Code != c.code || res.Error.Message == "" {
				t.Errorf("%s: exit_code %d, error %+v; want %d and code %s with a message", c.name, res.ExitCode, res.Error, c.exit, c.code)
			}
		}
	})
}

var omitted = regexp.MustCompile(`\[forgebox: (\d+) bytes omitted\]`)

// --max-output keeps the head and the tail of each stream and says how
// much was dropped between them.
func TestMaxOutput(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		total := int64(len(seq(100000)))
		r, res := e.runJSON([]string{"--max-output", "1000", "-c", "seq 1 100000; seq 1 100000 >&2"})
		if r.code != 0 {
			t.Fatalf("exit %d", r.code)
		}
		for name, c := range map[string]struct {
			text      string
			bytes     int64
			truncated bool
		}{"stdout": {res.Stdout, res.StdoutBytes, res.StdoutTruncated}, "stderr": {res.Stderr, res.StderrBytes, res.StderrTruncated}} {
			if c.bytes != total || !c.truncated {
				t.Errorf("%s: bytes %d, truncated %v; want %d, true", name, c.bytes, c.truncated, total)
			}
			checkHeadTail(t, name, c.text, total, 1000)
		}

		// The default with --json is 1 MiB per stream.
		_, res = e.runJSON([]string{"-c", "head -c 3000000 /dev/zero | tr '\\0' a"})
		if !res.StdoutTruncated || res.StdoutBytes != 3000000 {
			t.Errorf("3 MB with --json: truncated %v, bytes %d; want true, 3000000", res.StdoutTruncated, res.StdoutBytes)
		}
		if kept := strings.Count(res.Stdout, "a"); kept > 1<<20 || kept < 1<<19 {
			t.Errorf("3 MB with --json: kept %d bytes; want about 1 MiB", kept)
		}

		// Without --json the head streams, then the marker and the tail.
		r = e.run([]string{"run", "--max-output", "1000", "-c", "seq 1 100000"})
		checkHeadTail(t, "streamed stdout", r.stdout, total, 1000)
	})
}

func seq(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	return b.String()
}

// checkHeadTail checks text is a head of seq's output, the omission marker
// and a tail, with the counts adding up.
func checkHeadTail(t *testing.T, name, text string, total, limit int64) {
	t.Helper()
	m := omitted.FindStringSubmatchIndex(text)
	if m == nil {
		t.Errorf("%s = %.100q...; want a [forgebox: N bytes omitted] marker", name, text)
		return
	}
	head, tail := strings.TrimSuffix(text[:m[0]], "\n"), strings.TrimPrefix(text[m[1]:], "\n")
	n, _ := strconv.ParseInt(text[m[2]:m[3]], 10, 64)
	full := seq(100000)
	if !strings.HasPrefix(full, head) || !strings.HasPrefix(head, "1\n2\n3\n") {
		t.Errorf("%s: head %.60q is not the start of the output", name, head)
	}
	if !strings.HasSuffix(full, tail) || !strings.HasSuffix(tail, "99999\n100000\n") {
		t.Errorf("%s: tail ...%q is not the end of the output", name, tail[max(0, len(tail)-30):])
	}
	if kept := int64(len(head) + len(tail)); kept+n != total || kept > limit {
		t.Errorf("%s: kept %d + omitted %d = %d; want %d, kept at most %d", name, kept, n, kept+n, total, limit)
	}
}

// forgebox's own memory stays bounded however much the command prints.
func TestMemoryStaysBounded(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		const size = 2 << 30
		r := e.start([]string{"run", "--json", "-c", fmt.Sprintf("yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c %d", size)})
		res := r.wait(t, 120*time.Second)
		if res.code != 0 {
			t.Fatalf("exit %d\nstderr: %s", res.code, res.stderr)
		}
		out := decodeResult(t, res.stdout)
		if out.StdoutBytes != size || !out.StdoutTruncated {
			t.Errorf("stdout_bytes %d, truncated %v; want %d, true", out.StdoutBytes, out.StdoutTruncated, size)
		}
		ru := r.cmd.ProcessState.SysUsage().(*syscall.Rusage)
		if rss := ru.Maxrss * 1024; rss > 64<<20 {
			t.Errorf("forgebox's max RSS was %d MB while the command printed 2 GiB; want at most 64 MB", rss>>20)
		} else {
			t.Logf("max RSS %d MB", rss>>20)
		}
	})
}

// Without --json or a terminal, stdout and stderr stay apart and stdin is
// passed through; --no-stdin gives the command /dev/null.
func TestPipes(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		r := e.run([]string{"run", "-c", "echo out; echo err >&2"})
		if r.stdout != "out\n" || r.stderr != "err\n" {
			t.Errorf("stdout %q, stderr %q; want out and err, apart", r.stdout, r.stderr)
		}
		big := strings.Repeat("0123456789abcdef", 1<<20)
		r = e.run([]string{"run", "-c", "wc -c"}, withStdin(big))
		if strings.TrimSpace(r.stdout) != strconv.Itoa(len(big)) {
			t.Errorf("wc -c of 16 MiB on stdin = %q; want %d", r.stdout, len(big))
		}
		r = e.run([]string{"run", "--no-stdin", "-c", "cat; readlink /proc/self/fd/0"}, withStdin("hello\n"))
		if r.stdout != "/dev/null\n" {
			t.Errorf("--no-stdin: stdout %q; want only /dev/null", r.stdout)
		}
	})
}

// Small limits with writes of every size: the capture once spun forever
// when a write larger than the tail (100 bytes of 200) arrived after a
// smaller one had started the tail, and a third write followed.
func TestSmallMaxOutputWithStaggeredWrites(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		r := e.start([]string{"run", "--json", "--max-output", "200", "-c",
			"for n in 120 150 30 500 7 99 101 225; do printf '%0*d' $n 0; sleep 0.05; done"})
		res := r.wait(t, 20*time.Second)
		if res.code != 0 {
			t.Fatalf("exit %d; stderr %s", res.code, res.stderr)
		}
		out := decodeResult(t, res.stdout)
		if want := int64(120) + 150 + 30 + 500 + 7 + 99 + 101 + 225; out.StdoutBytes != want || !out.StdoutTruncated {
			t.Errorf("stdout_bytes %d, truncated %v; want %d, true", out.StdoutBytes, out.StdoutTruncated, want)
		}
	})
}

// The JSON result names where the command really started and the resolved
// workspace, not the flags as given.
func TestJSONPathsResolved(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		sub := filepath.Join(e.ws, "sub")
		e.mkdir(sub)
		_, res := e.runJSON([]string{"--workspace", "sub", "--", "pwd"})
		if res.Workspace != sub || res.Cwd != sub || strings.TrimSpace(res.Stdout) != sub {
			t.Errorf("workspace %q, cwd %q, pwd %q; want all %q", res.Workspace, res.Cwd, strings.TrimSpace(res.Stdout), sub)
		}
	})
}

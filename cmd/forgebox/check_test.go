package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forgebox/forgebox/policy"
)

// cliEnv is a home, a workspace and the XDG directories of a test, all in
// a temporary directory; the process works in the workspace.
type cliEnv struct {
	root, ws, config, state string
}

func newCLIEnv(t *testing.T) cliEnv {
	t.Helper()
	root, _ := filepath.EvalSymlinks(t.TempDir())
	c := cliEnv{root: root, ws: filepath.Join(root, "ws"), config: filepath.Join(root, "config"), state: filepath.Join(root, "state")}
	if err := os.Mkdir(c.ws, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", filepath.Join(root, "home"))
	t.Setenv("XDG_CONFIG_HOME", c.config)
	t.Setenv("XDG_STATE_HOME", c.state)
	t.Setenv("FORGEBOX_SESSION", "")
	t.Chdir(c.ws)
	return c
}

func (c cliEnv) userConfig() string { return filepath.Join(c.config, "forgebox", "config.json") }

// cli runs forgebox ARGS with stdin and returns the status and output.
func cli(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	dir := t.TempDir()
	files := make([]*os.File, 3)
	for i, name := range []string{"stdin", "stdout", "stderr"} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		files[i] = f
	}
	files[0].WriteString(stdin)
	files[0].Seek(0, io.SeekStart)
	code := dispatch(args, files[0], files[1], files[2])
	out, _ := os.ReadFile(files[1].Name())
	errOut, _ := os.ReadFile(files[2].Name())
	return code, string(out), string(errOut)
}

// check's exit status is the verdict.
func TestCheckExitCodes(t *testing.T) {
	c := newCLIEnv(t)
	writeFile(t, c.userConfig(), `{"forgebox": {"rules": {"allow": [{"command": "touch marker"}]}}}`)
	tests := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"check", "-c", "touch marker"}, 0, "allow: risk"},
		{[]string{"check", "-c", "git tag -d --x"}, 1, "approvals offered: once, session, always"},
		{[]string{"check", "--", "git", "tag", "-d", "--x"}, 1, "ask: risk 3, R1"},
		{[]string{"check", "-c", "sudo git tag -d"}, 1, "approvals offered: once\n"},
		{[]string{"check", "-c", "echo x > /dev/sda"}, 2, "deny: risk 10, R4"},
		// The run's sandbox decides what only reaches out.
		{[]string{"check", "-c", "frobnicate --x"}, 0, "contained by the sandbox"},
		{[]string{"check", "--net", "host", "-c", "frobnicate --x"}, 1, "not contained: --net host"},
		{[]string{"check", "--rw", "/srv", "-c", "frobnicate --x"}, 1, "not contained: --rw /srv"},
		{[]string{"check", "--best-effort", "-c", "frobnicate --x"}, 1, "not contained: --best-effort"},
		{[]string{"check", "--net", "bogus", "-c", "x"}, 125, ""},
		{[]string{"check", "-c", ":(){ :|:& };:"}, 2, "fork bomb"},
		{[]string{"check", "--json", "-c", "echo x > /dev/sda"}, 2, `"action":"deny"`},
		{[]string{"check"}, 125, ""},
		{[]string{"check", "--bogus"}, 125, ""},
		{[]string{"check", "-c", "x", "--", "y"}, 125, ""},
		{[]string{"check", "--batch", "-c", "x"}, 125, ""},
		{[]string{"check", "--session", "a/b", "-c", "x"}, 125, ""},
		{[]string{"check", "--policy", "missing.json", "-c", "x"}, 125, ""},
		{[]string{"check", "--help"}, 0, "Exit status: 0 allow, 1 ask, 2 deny"},
	}
	for _, tt := range tests {
		code, out, errOut := cli(t, "", tt.args...)
		if code != tt.code || !strings.Contains(out, tt.out) {
			t.Errorf("forgebox %q = %d\n%s%s\nwant %d and %q", tt.args, code, out, errOut, tt.code, tt.out)
		}
		if code == 125 && !strings.HasPrefix(errOut, "forgebox: ") {
			t.Errorf("forgebox %q: stderr %q; want a forgebox: message", tt.args, errOut)
		}
	}
	// The sub-commands are listed, indented by depth.
	_, out, _ := cli(t, "", "check", "-c", `git tag -d; bash -c "git tag -d --y"`)
	if !strings.Contains(out, "\n  allow") || !strings.Contains(out, "\n    ask   risk 3, R1, caution: git tag -d --y") {
		t.Errorf("check of a nested line printed:\n%s", out)
	}
}

// A malformed configuration is an error naming the file, line and column.
func TestCheckMalformedConfig(t *testing.T) {
	c := newCLIEnv(t)
	writeFile(t, c.userConfig(), "{\n  \"forgebox\": {\n    \"rules\": {\"allow\": [{\"pattern\": \"x\", \"bogus\": 1}]}}}\n")
	code, _, errOut := cli(t, "", "check", "-c", "git tag -d")
	if code != 125 || !strings.Contains(errOut, c.userConfig()+":3:") {
		t.Errorf("check with a malformed config = %d, %q; want 125 and %s:3:COL", code, errOut, c.userConfig())
	}
}

func TestReadBatchLine(t *testing.T) {
	long := strings.Repeat("a", policy.MaxLineBytes+10)
	atLimit := strings.Repeat("b", policy.MaxLineBytes)
	// A "\r" right at the cut must not bring a long line back under the
	// limit.
	crAtCut := strings.Repeat("c", policy.MaxLineBytes) + "\r" + "rest"
	in := "one\ntwo\r\n\n" + long + "\n" + atLimit + "\n" + crAtCut + "\nlast"
	r := bufio.NewReaderSize(strings.NewReader(in), 4096)
	want := []int{3, 3, 0, policy.MaxLineBytes + 1, policy.MaxLineBytes, policy.MaxLineBytes + 1, 4}
	var buf []byte
	for i, n := range want {
		var more bool
		buf, more, _ = readBatchLine(r, buf[:0])
		if !more || len(buf) != n {
			t.Fatalf("line %d: %d bytes, more %v; want %d", i, len(buf), more, n)
		}
	}
	if _, more, err := readBatchLine(r, buf[:0]); more || err != io.EOF {
		t.Errorf("after the last line: more %v, %v; want EOF", more, err)
	}
}

// --batch answers every line, bad ones included, one JSON object a line,
// and answers a line before the next one is written.
func TestCheckBatch(t *testing.T) {
	newCLIEnv(t)
	lines := []string{"git tag -d --x", "echo x > /dev/sda", "\xff\xfe", strings.Repeat("x", 100<<10), "", "sudo git tag -d"}
	wantAction := []string{"ask", "deny", "ask", "ask", "ask", "ask"}
	code, out, errOut := cli(t, strings.Join(lines, "\n")+"\n", "check", "--batch")
	got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || len(got) != len(lines) {
		t.Fatalf("check --batch = %d, %d lines; want 0 and %d\n%.500s\n%s", code, len(got), len(lines), out, errOut)
	}
	for i, l := range got {
		var d struct {
			Action string `json:"action"`
		}
		if err := json.Unmarshal([]byte(l), &d); err != nil || d.Action != wantAction[i] {
			t.Errorf("line %d: %.200s (%v); want action %s", i, l, err, wantAction[i])
		}
	}

	// Interactive: write a line, read its answer, with the input still open.
	inR, inW, _ := os.Pipe()
	outR, outW, _ := os.Pipe()
	errF, _ := os.Create(filepath.Join(t.TempDir(), "stderr"))
	done := make(chan int)
	go func() { done <- dispatch([]string{"check", "--batch"}, inR, outW, errF) }()
	answers := bufio.NewReader(outR)
	for i := range 3 {
		inW.WriteString("git tag -d --x\n")
		got := make(chan string)
		go func() {
			l, _ := answers.ReadString('\n')
			got <- l
		}()
		select {
		case l := <-got:
			if !strings.Contains(l, `"action":"ask"`) {
				t.Errorf("answer %d: %q", i, l)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no answer to line %d while the input stays open", i)
		}
	}
	inW.Close()
	if code := <-done; code != 0 {
		t.Errorf("check --batch at EOF = %d; want 0", code)
	}
	outW.Close()
}

func TestBatchLine(t *testing.T) {
	for in, want := range map[string]string{
		`ls -la`:          `ls -la`,
		`"cat <<E\nx\nE"`: "cat <<E\nx\nE",
		`"./my tool" --x`: `"./my tool" --x`,
		`"a" "b"`:         `"a" "b"`,
		`"unterminated`:   `"unterminated`,
		`"rm -rf \u007e"`: `rm -rf ~`,
		`"`:               `"`,
		`"bad escape \q"`: `"bad escape \q"`,
	} {
		if got := batchLine([]byte(in)); got != want {
			t.Errorf("batchLine(%q) = %q, want %q", in, got, want)
		}
	}
}

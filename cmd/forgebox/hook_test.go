package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/forgebox/forgebox/agent"
	"github.com/forgebox/forgebox/shellquote"
)

// hookEnv is a cliEnv for the hook: Claude Code's project directory unset,
// a configuration with rules at $ROOT/policy.json and a broken one at
// $ROOT/bad.json. The home is outside the temporary directories, where the
// judge takes it for a home (in one, rm -rf ~ cleans a temporary directory).
func hookEnv(t *testing.T) cliEnv {
	t.Helper()
	c := newCLIEnv(t)
	t.Setenv("HOME", "/nonexistent/forgebox-test-home")
	t.Setenv("CLAUDE_PROJECT_DIR", "")
	writeFile(t, filepath.Join(c.root, "policy.json"), `{"forgebox": {"rules": {
		"allow": [{"command": "git tag -d --x"}],
		"deny": [{"pattern": "curl *", "reason": "no downloads in this project"}]}}}`)
	writeFile(t, filepath.Join(c.root, "bad.json"), "{\"forgebox\": {\"rules\": {\"alow\": []}}}\n")
	return c
}

// hookOutput is the part of an answer the tests look into.
type hookOutput struct {
	SystemMessage string `json:"systemMessage"`
	Specific      struct {
		HookEventName string         `json:"hookEventName"`
		Decision      string         `json:"permissionDecision"`
		Reason        string         `json:"permissionDecisionReason"`
		UpdatedInput  map[string]any `json:"updatedInput"`
	} `json:"hookSpecificOutput"`
}

// runHook runs forgebox hook claude ARGS on the input and decodes its
// answer, checking that it is one line of JSON (or nothing).
func runHook(t *testing.T, input string, args ...string) (int, string, *hookOutput, string) {
	t.Helper()
	code, out, errOut := cli(t, input, append([]string{"hook", "claude"}, args...)...)
	if out == "" {
		return code, out, nil, errOut
	}
	if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
		t.Errorf("hook claude %q printed more than one line:\n%s", args, out)
	}
	var o hookOutput
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		t.Fatalf("hook claude %q printed %q: %v", args, out, err)
	}
	if o.Specific.HookEventName != "PreToolUse" {
		t.Errorf("hook claude %q: hookEventName %q, want PreToolUse", args, o.Specific.HookEventName)
	}
	return code, out, &o, errOut
}

func testExecutable(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe, err = filepath.Abs(exe)
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// TestHookGolden answers the inputs in testdata/hook/NAME.in.json and
// compares the answers, indented, with NAME.out.json; go test -update
// rewrites them. $WS and $ROOT stand for the test's workspace and
// temporary directory, $FORGEBOX for the running binary.
func TestHookGolden(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		code     int
		decision string // "" for no answer
		wrapped  bool   // the answer has an updatedInput
	}{
		{"allow-readonly", nil, 0, "allow", false},
		{"deny-rm-home", nil, 0, "deny", false},
		{"ask-force-push", nil, 0, "ask", false},
		{"non-bash", nil, 0, "", false},
		{"malformed-json", nil, 0, "ask", false},
		{"missing-command", nil, 0, "ask", false},
		{"command-not-string", nil, 0, "ask", false},
		{"invalid-utf8", nil, 0, "ask", false},
		{"exact-keys", nil, 0, "deny", false},
		{"other-event", nil, exitHookOtherEvent, "", false},
		{"bad-config", []string{"--policy", "$ROOT/bad.json"}, 0, "ask", false},
		{"deny-rule", []string{"--policy", "$ROOT/policy.json"}, 0, "deny", false},
		{"wrap-allow", []string{"--wrap"}, 0, "allow", true},
		{"wrap-undo", []string{"--wrap"}, 0, "allow", true}, // rm -rf src: undo can put it back, and the reason says so
		{"wrap-quotes", []string{"--wrap"}, 0, "", true},
		{"wrap-deny", []string{"--wrap"}, 0, "deny", false},
		{"wrap-ask", []string{"--wrap", "--", "--no-undo"}, 0, "ask", true}, // with undo, git reset --hard runs unasked (policy/verdict.go)
		{"wrap-ask-bypass", []string{"--wrap", "--", "--no-undo"}, 0, "ask", true},
		{"wrap-nul", []string{"--wrap"}, 0, "deny", false},
		{"wrap-run-flags", []string{"--wrap", "--", "--net", "host", "--memory", "4G"}, 0, "ask", true}, // npm test under --net host: not contained,
		{"wrap-malformed", []string{"--wrap"}, 0, "deny", false},
		{"wrap-policy", []string{"--wrap", "--policy", "$ROOT/policy.json"}, 0, "allow", true},
	}
	// The testdata, before hookEnv moves into the workspace.
	dir, err := filepath.Abs(filepath.Join("testdata", "hook"))
	if err != nil {
		t.Fatal(err)
	}
	c := hookEnv(t)
	exe := testExecutable(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join(dir, tt.name+".in.json"))
			if err != nil {
				t.Fatal(err)
			}
			input := strings.NewReplacer("$WS", c.ws, "$ROOT", c.root).Replace(string(in))
			args := slices.Clone(tt.args)
			for i := range args {
				args[i] = strings.ReplaceAll(args[i], "$ROOT", c.root)
			}
			code, out, o, errOut := runHook(t, input, args...)
			if code != tt.code {
				t.Errorf("hook claude %q = %d, want %d\nstdout: %s\nstderr: %s", tt.args, code, tt.code, out, errOut)
			}
			switch {
			case o == nil && (tt.decision != "" || tt.wrapped):
				t.Errorf("hook claude %q printed no answer; want %q", tt.args, tt.decision)
			case o != nil && tt.decision == "" && !tt.wrapped:
				t.Errorf("hook claude %q answered %s; want no answer", tt.args, out)
			case o != nil && tt.decision != "" && o.Specific.Decision != tt.decision:
				t.Errorf("hook claude %q: permissionDecision %q, want %q", tt.args, o.Specific.Decision, tt.decision)
			case o != nil && (o.Specific.UpdatedInput != nil) != tt.wrapped:
				t.Errorf("hook claude %q: updatedInput %v; want one: %v", tt.args, o.Specific.UpdatedInput, tt.wrapped)
			}
			var got bytes.Buffer
			if out != "" {
				if err := json.Indent(&got, []byte(out), "", "  "); err != nil {
					t.Fatal(err)
				}
			}
			norm := strings.NewReplacer(shellquote.Quote(exe), "$FORGEBOX", exe, "$FORGEBOX", c.ws, "$WS", c.root, "$ROOT").Replace(got.String())
			hookGolden(t, filepath.Join(dir, tt.name+".out.json"), []byte(norm))
		})
	}
}

// hookGolden compares got with the golden file path (go test -update
// rewrites it).
func hookGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run Hook -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -run Hook -update rewrites it):\n%s", path, got)
	}
}

// hookInput is a PreToolUse input for the Bash tool.
func hookInput(t *testing.T, cwd, session, mode, command string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"session_id": session, "cwd": cwd, "permission_mode": mode, "hook_event_name": "PreToolUse",
		"tool_name": "Bash", "tool_input": map[string]any{"command": command, "description": "d", "timeout": 5000},
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Misuse blocks the command (exit 2) and says why on stderr, for Claude.
func TestHookUsage(t *testing.T) {
	c := hookEnv(t)
	input := hookInput(t, c.ws, "s1", "default", "ls")
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"hook"}, exitHookBlock, "no agent"},
		{[]string{"hook", "cursor"}, exitHookBlock, `unknown agent "cursor"`},
		{[]string{"hook", "claude", "--bogus"}, exitHookBlock, "flag provided but not defined"},
		{[]string{"hook", "claude", "ls"}, exitHookBlock, `unexpected argument "ls"`},
		{[]string{"hook", "claude", "--", "--net", "host"}, exitHookBlock, "need --wrap"},
		{[]string{"hook", "claude", "--wrap", "--", "-c", "ls"}, exitHookBlock, "-c is the command Claude runs"},
		{[]string{"hook", "claude", "--wrap", "--", "--policy", "x.json"}, exitHookBlock, "give --policy to forgebox hook claude"},
		{[]string{"hook", "claude", "--wrap", "--", "--yes"}, exitHookBlock, "--yes is not for the hook"},
		{[]string{"hook", "claude", "--wrap", "--", "--no-policy"}, exitHookBlock, "--no-policy is not for the hook"},
		{[]string{"hook", "claude", "--wrap", "--", "--net", "everywhere"}, exitHookBlock, "the flags for forgebox run"},
		{[]string{"hook", "claude", "--wrap", "--", "--memory", "2G", "ls"}, exitHookBlock, `unexpected argument "ls"`},
		{[]string{"hook", "claude", "--session", "a/b"}, 0, ""}, // judged: the bad ID is a configuration error, asked about
	}
	for _, tt := range tests {
		code, out, errOut := cli(t, input, tt.args...)
		if code != tt.code || !strings.Contains(errOut, tt.msg) {
			t.Errorf("forgebox %q = %d, stderr %q; want %d and %q\nstdout: %s", tt.args, code, errOut, tt.code, tt.msg, out)
		}
		if code == exitHookBlock && out != "" {
			t.Errorf("forgebox %q printed %q on stdout; want nothing", tt.args, out)
		}
	}
	for _, args := range [][]string{{"hook", "--help"}, {"hook", "claude", "--help"}} {
		if code, out, _ := cli(t, "", args...); code != 0 || !strings.Contains(out, "forgebox hook claude [--wrap]") {
			t.Errorf("forgebox %q = %d\n%s", args, code, out)
		}
	}
}

// The hook judges with the approvals of Claude Code's session, and hands
// the session on to the wrapped run.
func TestHookSession(t *testing.T) {
	c := hookEnv(t)
	const session = "3f0c6a52-7a4e-4c1e-9a8e-1b2c3d4e5f60"
	if code, _, errOut := cli(t, "", "policy", "approve", "--session", session, "-c", "git tag -d --x"); code != 0 {
		t.Fatalf("policy approve = %d: %s", code, errOut)
	}
	tests := []struct {
		session string
		args    []string
		want    string
	}{
		{session, nil, "allow"},
		{"another-session", nil, "ask"},
		{"", nil, "ask"},
		{"not a valid/ID", nil, "ask"}, // ignored: judged without a session
		{"another-session", []string{"--session", session}, "allow"},
	}
	for _, tt := range tests {
		_, out, o, errOut := runHook(t, hookInput(t, c.ws, tt.session, "default", "git tag -d --x"), tt.args...)
		if o == nil || o.Specific.Decision != tt.want {
			t.Errorf("hook claude %q for session %q: %s%s; want %s", tt.args, tt.session, out, errOut, tt.want)
		}
	}
	_, out, o, _ := runHook(t, hookInput(t, c.ws, session, "default", "git tag -d --x"), "--wrap")
	if o == nil || !strings.Contains(o.Specific.UpdatedInput["command"].(string), " run --session "+session+" ") {
		t.Errorf("hook claude --wrap did not hand the session on: %s", out)
	}
	// FORGEBOX_SESSION applies when Claude Code's session ID cannot be used.
	t.Setenv("FORGEBOX_SESSION", session)
	if _, out, o, _ := runHook(t, hookInput(t, c.ws, "not a valid/ID", "default", "git tag -d --x")); o == nil || o.Specific.Decision != "allow" {
		t.Errorf("hook claude with FORGEBOX_SESSION: %s; want allow", out)
	}
}

// The workspace is Claude Code's project directory when the command runs
// inside it, else the hook's cwd.
func TestHookWorkspace(t *testing.T) {
	c := hookEnv(t)
	sub := filepath.Join(c.ws, "sub")
	other := filepath.Join(c.root, "other")
	for _, d := range []string{sub, other} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		project, cwd string
		args         []string
		want         string
	}{
		{"", sub, nil, sub},
		{c.ws, sub, nil, c.ws},
		{other, sub, nil, sub},
		{"relative/dir", sub, nil, sub},
		{c.ws, sub, []string{"--workspace", other}, other},
	}
	for _, tt := range tests {
		t.Setenv("CLAUDE_PROJECT_DIR", tt.project)
		_, out, o, errOut := runHook(t, hookInput(t, tt.cwd, "s1", "default", "ls"), append([]string{"--wrap"}, tt.args...)...)
		if o == nil || !strings.Contains(o.Specific.UpdatedInput["command"].(string), " --workspace "+shellquote.Quote(tt.want)+" ") {
			t.Errorf("CLAUDE_PROJECT_DIR=%q cwd %q %q: %s%s; want --workspace %s", tt.project, tt.cwd, tt.args, out, errOut, tt.want)
		}
	}
}

// Input over 1 MiB is not read whole: it is asked about (denied with
// --wrap), never judged by its first part.
func TestHookLargeInput(t *testing.T) {
	c := hookEnv(t)
	input := hookInput(t, c.ws, "s1", "default", "ls "+strings.Repeat("a", agent.MaxClaudeInput))
	for args, want := range map[string]string{"": "ask", "--wrap": "deny"} {
		_, out, o, _ := runHook(t, input, strings.Fields(args)...)
		if o == nil || o.Specific.Decision != want || !strings.Contains(o.Specific.Reason, "larger than") {
			t.Errorf("hook claude %s on %d bytes: %.300s; want %s", args, len(input), out, want)
		}
	}
}

// TestHookWrapRoundTrip runs the rewritten command with a shell and a fake
// forgebox that records its arguments: whatever the command holds, forgebox
// run must receive it unchanged as the value of -c.
func TestHookWrapRoundTrip(t *testing.T) {
	c := hookEnv(t)
	const session = "3f0c6a52-7a4e-4c1e-9a8e-1b2c3d4e5f60"
	commands := []string{
		`ls`,
		``,
		`echo "it's" 'a "quoted" word'`,
		"printf '%s\\n' \"$HOME\" `id -u` $(id -g)",
		"cat <<'EOF'\nline 'one'\n\"two\" $three `four`\nEOF",
		`'`, `''`, `'\''`, `"`, `\`, `echo trailing\`,
		"a\tb\rc\n", "\n\n", " leading and trailing spaces ",
		`echo !x !! ^a^b ~ * ? [a] {a,b} # comment`,
		"echo é 日本 \U0001F600 \u200b",
		`-c`, `--help`, `-- --`,
		"echo $'\\x27' \"${HOME:-x}\" \\$",
	}
	dir := filepath.Join(t.TempDir(), `it's a "fake" $dir`)
	fake := filepath.Join(dir, "forgebox")
	writeFile(t, fake, "#!/bin/sh\nfor a; do printf '%s\\0' \"$a\"; done > \"$FAKE_OUT\"\n")
	if err := os.Chmod(fake, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := shellquote.Quote(testExecutable(t)) + " run "
	var shells []string
	for _, sh := range []string{"bash", "sh", "zsh"} {
		if p, err := exec.LookPath(sh); err == nil {
			shells = append(shells, p)
		}
	}
	if len(shells) == 0 || !strings.HasSuffix(shells[0], "/bash") {
		t.Skipf("no bash to run the rewritten commands with (found %q)", shells)
	}
	outFile := filepath.Join(t.TempDir(), "args")
	for _, cmd := range commands {
		_, out, o, errOut := runHook(t, hookInput(t, c.ws, session, "default", cmd), "--wrap", "--", "--net", "host")
		if o == nil || o.Specific.UpdatedInput == nil {
			t.Errorf("hook claude --wrap on %q: %s%s; want a rewritten command", cmd, out, errOut)
			continue
		}
		wrapped, _ := o.Specific.UpdatedInput["command"].(string)
		if !strings.HasPrefix(wrapped, exe) {
			t.Errorf("hook claude --wrap on %q: %q does not start with %q", cmd, wrapped, exe)
			continue
		}
		for _, sh := range shells {
			line := shellquote.Quote(fake) + " run " + strings.TrimPrefix(wrapped, exe)
			run := exec.Command(sh, "-c", line)
			run.Env = append(os.Environ(), "FAKE_OUT="+outFile)
			if b, err := run.CombinedOutput(); err != nil {
				t.Errorf("%s -c %q: %v\n%s", sh, line, err, b)
				continue
			}
			got, err := os.ReadFile(outFile)
			if err != nil {
				t.Fatal(err)
			}
			argv := strings.Split(strings.TrimSuffix(string(got), "\x00"), "\x00")
			want := []string{"run", "--session", session, "--workspace", c.ws}
			if o.Specific.Decision == "ask" {
				want = append(want, "--yes")
			}
			want = append(want, "--net", "host", "-c", cmd)
			if !slices.Equal(argv, want) {
				t.Errorf("%s ran the fake forgebox with %q; want %q", filepath.Base(sh), argv, want)
				continue
			}
			// And forgebox run reads it so: the line is -c's value.
			var f runFlags
			fs := f.flagSet()
			f.judgeFlags(fs)
			f.historyFlags(fs)
			if err := fs.Parse(argv[1:]); err != nil || f.command != cmd || fs.NArg() != 0 {
				t.Errorf("forgebox run %q: -c %q, args %q, %v; want -c %q", argv[1:], f.command, fs.Args(), err, cmd)
			}
		}
	}
}

// With --wrap, Claude Code started in "/" or in the home directory is
// told up front that forgebox run refuses that workspace, and what to do;
// it was allowed, and every rewritten command then failed with 125.
// Without --wrap the hook only judges, and the workspace is not its to
// refuse.
func TestHookWrapRefusedWorkspace(t *testing.T) {
	c := hookEnv(t)
	home := filepath.Join(c.root, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	for _, tt := range []struct {
		cwd  string
		args []string
		want string
	}{
		{"/", []string{"--wrap"}, "refusing workspace /:"},
		{home, []string{"--wrap"}, "refusing workspace " + home + ":"},
		{c.ws, []string{"--wrap", "--workspace", "/"}, "refusing workspace /:"},
		{c.ws, []string{"--wrap", "--", "--rw", home}, home},
	} {
		_, out, o, errOut := runHook(t, hookInput(t, tt.cwd, "s1", "default", "ls"), tt.args...)
		if o == nil || o.Specific.Decision != "deny" || o.Specific.UpdatedInput != nil || !strings.Contains(o.Specific.Reason, tt.want) ||
			!strings.Contains(o.Specific.Reason, "Start Claude Code in a project directory") {
			t.Errorf("hook claude %q in %s: %s%s; want a denial saying %q and what to do", tt.args, tt.cwd, out, errOut, tt.want)
		}
	}
	if _, out, o, _ := runHook(t, hookInput(t, "/", "s1", "default", "ls")); o == nil || o.Specific.Decision == "deny" {
		t.Errorf("hook claude without --wrap in /: %s; want the judge's answer", out)
	}
}

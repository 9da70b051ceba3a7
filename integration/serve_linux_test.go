package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpClient is a go-sdk client connected to forgebox serve, run as the
// mode's user in the workspace.
type mcpClient struct {
	t   *testing.T
	cs  *mcp.ClientSession
	srv *os.Process
}

// serveMCP starts forgebox serve with these flags. answer, when set, is
// the person's answer to an approval asked through the client
// (elicitation); nil means a client that cannot ask.
func (e *env) serveMCP(answer func(msg string) string, flags ...string) *mcpClient {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := e.command(ctx, forgebox, append([]string{"serve"}, flags...)...)
	cmd.Stderr = &strings.Builder{}
	opts := &mcp.ClientOptions{}
	if answer != nil {
		opts.ElicitationHandler = func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			a := answer(req.Params.Message)
			if a == "" {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": a}}, nil
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "forgebox-test", Version: "1"}, opts)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
	if err != nil {
		cancel()
		e.t.Fatalf("connect to forgebox serve: %v\nstderr: %s", err, cmd.Stderr)
	}
	e.t.Cleanup(func() {
		cs.Close()
		cancel()
	})
	return &mcpClient{t: e.t, cs: cs, srv: cmd.Process}
}

// call calls a tool and returns its result, its text and its structured
// content decoded into out (when out is not nil).
func (c *mcpClient) call(name string, args map[string]any, out any) (*mcp.CallToolResult, string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.t.Fatalf("call %s %v: %v", name, args, err)
	}
	var text strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	if out != nil {
		reflect.ValueOf(out).Elem().SetZero()
	}
	data := res.StructuredContent
	if data == nil && res.Meta != nil {
		// A command's data is in _meta, its output only in the text.
		if m, ok := res.Meta["forgebox/result"].(map[string]any); ok {
			d := maps.Clone(m)
			d["stdout"], d["stderr"] = streamText(text.String(), "stdout"), streamText(text.String(), "stderr")
			if name == "shell_exec" {
				// A session's output follows the summary line.
				_, out, _ := strings.Cut(text.String(), "\n")
				if i := strings.Index(out, "\nforgebox"); i >= 0 {
					out = out[:i]
				}
				d["output"] = out
			}
			data = d
		}
	}
	if out != nil && data != nil {
		b, _ := json.Marshal(data)
		if err := json.Unmarshal(b, out); err != nil {
			c.t.Fatalf("%s: structured content %s: %v", name, b, err)
		}
	}
	return res, text.String()
}

// streamText is what a command result's text shows of a stream: the
// section after "--- stdout (N bytes) ---", up to the next one.
func streamText(text, name string) string {
	i := strings.Index(text, "\n--- "+name+" (")
	if i < 0 {
		return ""
	}
	body := text[i+1:]
	body = body[strings.IndexByte(body, '\n')+1:]
	if j := strings.Index(body, "\n--- stderr ("); name == "stdout" && j >= 0 {
		body = body[:j]
	}
	return body
}

// commandOutput is the part of run_shell_command's structured result the
// tests read.
type commandOutput struct {
	Ran      bool   `json:"ran"`
	ExitCode int    `json:"exit_code"`
	TimedOut bool   `json:"timed_out"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	Blocked  *struct {
		Layer, Message, Hint string
	} `json:"blocked"`
	Approval *struct {
		Scopes []string `json:"scopes"`
		How    string   `json:"how"`
	} `json:"approval_required"`
	Decision *struct {
		Action string `json:"action"`
	} `json:"decision"`
	HistoryKey string `json:"history_key"`
}

// The server lists its tools, runs commands through the sandbox, and
// reports what it ran.
func TestServeRunsCommands(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		// The judge allows everything here: what stops the commands below
		// is the sandbox.
		e.write(filepath.Join(e.configHome(), "forgebox", "config.json"), `{"forgebox": {"rules": {"allow": [{"pattern": "*"}]}}}`)
		c := e.serveMCP(nil)
		tools, err := c.cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range tools.Tools {
			names = append(names, tl.Name)
			if tl.Description == "" || tl.InputSchema == nil {
				t.Errorf("tool %s has no description or input schema", tl.Name)
			}
			// Clients add properties of their own (Gemini CLI's
			// wait_for_previous), and strict validators refuse a
			// property typed ["null", T].
			b, _ := json.Marshal(tl.InputSchema)
			if strings.Contains(string(b), `"additionalProperties":false`) || strings.Contains(string(b), `"null"`) {
				t.Errorf("tool %s: input schema %s forbids unknown properties or has a nullable type", tl.Name, b)
			}
		}
		var extra commandOutput
		if res, text := c.call("run_shell_command", map[string]any{"command": "echo extra", "wait_for_previous": true}, &extra); res.IsError || extra.Stdout != "extra\n" {
			t.Errorf("run_shell_command with a property of the client's own: %s", text)
		}
		for _, want := range []string{"run_shell_command", "check_command", "git"} {
			if !slices.Contains(names, want) {
				t.Errorf("tools %v lack %s", names, want)
			}
		}
		var out commandOutput
		res, text := c.call("run_shell_command", map[string]any{"command": "echo hello; echo oops >&2; exit 3"}, &out)
		if res.IsError || !out.Ran || out.ExitCode != 3 || out.Stdout != "hello\n" || out.Stderr != "oops\n" {
			t.Errorf("result %+v, isError %v; want exit 3, hello, oops", out, res.IsError)
		}
		if !strings.HasPrefix(text, "exit 3 in ") || !strings.Contains(text, "hello") {
			t.Errorf("text %q; want a summary line then the output", text)
		}
		// A write outside the workspace fails, and the result says which
		// layer stopped it and where the workspace is; the host is unchanged.
		victim := "/usr/forgebox-serve-" + marker()
		_, _ = c.call("run_shell_command", map[string]any{"command": "touch " + victim}, &out)
		if _, err := os.Stat(victim); err == nil {
			os.Remove(victim)
			t.Fatalf("the write outside the workspace reached the host")
		}
		if out.ExitCode == 0 || out.Blocked == nil || out.Blocked.Layer != "filesystem" || !strings.Contains(out.Blocked.Message, victim) || !strings.Contains(out.Blocked.Hint, e.ws) {
			t.Errorf("write outside the workspace: %+v; want a failure blamed on the filesystem view naming the path and the workspace", out)
		}
		// A connection the network cannot reach is the network's doing,
		// seen by the sandbox, whatever the program prints (here it
		// claims a read-only file system).
		e.write(filepath.Join(e.ws, "net.sh"), "echo > /dev/tcp/192.0.2.1/443; echo 'Read-only file system' >&2; exit 1\n")
		_, _ = c.call("run_shell_command", map[string]any{"command": "bash net.sh"}, &out)
		if out.Blocked == nil || out.Blocked.Layer != "network" || !strings.Contains(out.Blocked.Message, "192.0.2.1:443") {
			t.Errorf("a connection to 192.0.2.1:443: %+v; want it blamed on the network, with the address", out)
		}
		// A refused system call is seccomp's, and a program that prints
		// "Permission denied" by itself is blamed on nothing.
		_, _ = c.call("run_shell_command", map[string]any{"command": "unshare -U true"}, &out)
		if out.Blocked == nil || out.Blocked.Layer != "seccomp" || !strings.Contains(out.Blocked.Message, "unshare") {
			t.Errorf("unshare: %+v; want it blamed on seccomp, naming the call", out)
		}
		_, _ = c.call("run_shell_command", map[string]any{"command": "echo 'Permission denied' >&2; exit 1"}, &out)
		if out.Blocked != nil {
			t.Errorf("a program printing Permission denied: blocked %+v; want no layer blamed", out.Blocked)
		}
		// The directory must lie inside the workspace.
		res, text = c.call("run_shell_command", map[string]any{"command": "pwd", "directory": "/etc"}, nil)
		if !res.IsError || !strings.Contains(text, "outside the workspace") {
			t.Errorf("directory /etc: isError %v, %q; want refused", res.IsError, text)
		}
		sub := filepath.Join(e.ws, "sub")
		os.Mkdir(sub, 0o777)
		os.Chmod(sub, 0o777)
		if _, _ = c.call("run_shell_command", map[string]any{"command": "pwd", "directory": "sub"}, &out); out.Stdout != sub+"\n" {
			t.Errorf("directory sub: stdout %q, want %s", out.Stdout, sub)
		}
		// The timeout kills the command.
		begin := time.Now()
		if c.call("run_shell_command", map[string]any{"command": "sleep 30", "timeout_ms": 500}, &out); !out.TimedOut || time.Since(begin) > 15*time.Second {
			t.Errorf("timeout_ms 500: %+v after %v; want timed out quickly", out, time.Since(begin))
		}
		// Bad input is a tool error, not a crash.
		for _, bad := range []map[string]any{{"command": ""}, {"command": "echo \x00"}, {"command": "true", "directory": "no/such/dir"}} {
			if res, _ := c.call("run_shell_command", bad, nil); !res.IsError {
				t.Errorf("%q: not an error", bad)
			}
		}
		if res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_shell_command", Arguments: map[string]any{"command": 42}}); err == nil && !res.IsError {
			t.Errorf("a number as the command was accepted")
		}
	})
}

// The judge applies to the server's commands exactly as to forgebox run:
// a denied command starts nothing; one that needs approval starts only
// once a person approved it through the client, never on the model's say.
func TestServeJudgesCommands(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e = judgedEnv(t, e)
		c := e.serveMCP(nil)
		var out commandOutput
		res, text := c.call("run_shell_command", map[string]any{"command": denyLine}, &out)
		if !res.IsError || out.Ran || e.ran() || out.Blocked == nil || out.Blocked.Layer != "policy rule" || !strings.HasPrefix(text, "DENIED") {
			t.Errorf("denied line: %+v, %q; want refused by a policy rule, nothing run", out, text)
		}
		res, text = c.call("run_shell_command", map[string]any{"command": askLine}, &out)
		if !res.IsError || out.Ran || e.ran() || out.Approval == nil || !strings.Contains(out.Approval.How, "forgebox approve ") {
			t.Errorf("ask line without elicitation: %+v, %q; want approval_required with how to approve, nothing run", out, text)
		}
		var v struct{ Action string }
		if c.call("check_command", map[string]any{"command": askLine}, &v); v.Action != "ask" {
			t.Errorf("check_command: %+v; want ask", v)
		}

		var asked []string
		answer := "no"
		c = e.serveMCP(func(msg string) string { asked = append(asked, msg); return answer })
		if _, text := c.call("run_shell_command", map[string]any{"command": askLine, "description": "make a marker"}, &out); out.Ran || e.ran() {
			t.Errorf("declined: %+v; want nothing run", out)
		} else if len(asked) != 1 {
			t.Logf("declined: %s", text)
		}
		if len(asked) != 1 || !strings.Contains(asked[0], "git tag -d") || !strings.Contains(asked[0], "make a marker") {
			t.Errorf("the person was asked %q; want the command and its description", asked)
		}
		answer = "once"
		if c.call("run_shell_command", map[string]any{"command": askLine}, &out); !out.Ran || !e.ran() {
			t.Errorf("approved once: %+v; want it run", out)
		}
		if c.call("run_shell_command", map[string]any{"command": askLine}, &out); len(asked) != 3 {
			t.Errorf("once means once: asked %d times, want 3", len(asked))
		}
		e.ran()
		answer = "session"
		c.call("run_shell_command", map[string]any{"command": askLine}, &out)
		answer = "no"
		if c.call("run_shell_command", map[string]any{"command": askLine}, &out); !out.Ran || !e.ran() || len(asked) != 4 {
			t.Errorf("approved for the session: %+v, asked %d times; want it run without asking again", out, len(asked))
		}
		// The denied line is never put to the person.
		if c.call("run_shell_command", map[string]any{"command": denyLine}, &out); out.Ran || e.ran() || len(asked) != 4 {
			t.Errorf("denied line with elicitation: %+v, asked %d; want refused without asking", out, len(asked))
		}
	})
}

// git runs non-interactively, and its risky forms are judged like the
// command line.
func TestServeGit(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e = judgedEnv(t, e)
		c := e.serveMCP(nil)
		var out commandOutput
		c.call("git", map[string]any{"subcommand": "init", "args": []string{"-q", "-b", "main"}}, &out)
		if !out.Ran || out.ExitCode != 0 {
			t.Fatalf("git init: %+v", out)
		}
		os.WriteFile(filepath.Join(e.ws, "a.txt"), []byte("a\n"), 0o666)
		c.call("git", map[string]any{"subcommand": "status", "args": []string{"--short"}}, &out)
		if !strings.Contains(out.Stdout, "a.txt") {
			t.Errorf("git status: %+v", out)
		}
		// No editor: a commit without -m fails at once instead of hanging.
		begin := time.Now()
		c.call("git", map[string]any{"subcommand": "add", "args": []string{"a.txt"}}, &out)
		c.call("git", map[string]any{"subcommand": "commit"}, &out)
		if out.ExitCode == 0 || time.Since(begin) > 20*time.Second {
			t.Errorf("git commit without -m: %+v after %v; want a quick failure", out, time.Since(begin))
		}
		for _, bad := range []map[string]any{
			{"subcommand": "config", "args": []string{"core.hooksPath", "/tmp"}},
			{"subcommand": "fetch", "args": []string{"--upload-pack=touch /tmp/x", "origin"}},
			{"subcommand": "status; rm -rf /"},
		} {
			if res, text := c.call("git", bad, nil); !res.IsError {
				t.Errorf("git %v: %q; want refused", bad, text)
			}
		}
		// A force push is judged like the command line: the default
		// sandbox has no network, so it cannot reach the remote and runs
		// (and fails); a server that reaches out asks.
		if c.call("git", map[string]any{"subcommand": "push", "args": []string{"--force", "origin", "main"}}, &out); !out.Ran || out.ExitCode == 0 {
			t.Errorf("git push --force under the default sandbox: %+v; want it run (and fail: no remote)", out)
		}
		reaching := e.serveMCP(nil, "--net", "host")
		if res, _ := reaching.call("git", map[string]any{"subcommand": "push", "args": []string{"--force", "origin", "main"}}, &out); !res.IsError || out.Ran {
			t.Errorf("git push --force with --net host: %+v; want awaiting approval", out)
		}
	})
}

// Killing the server (SIGKILL: no cleanup of its own) kills what it runs.
func TestServeDeathKillsCommands(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.write(filepath.Join(e.configHome(), "forgebox", "config.json"), `{"forgebox": {"rules": {"allow": [{"pattern": "*"}]}}}`)
		c := e.serveMCP(nil)
		m := marker()
		go c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_shell_command",
			Arguments: map[string]any{"command": "sleep " + m}})
		if !waitFor(20*time.Second, func() bool { return len(processesWith(m)) > 0 }) {
			t.Fatal("the command did not start")
		}
		// A shell session's processes, in the foreground and in the
		// background, go too.
		var st struct{ Session string }
		c.call("shell_start", map[string]any{}, &st)
		bg, fg := marker(), marker()
		c.call("shell_exec", map[string]any{"session": st.Session, "command": "sleep " + bg + " &"}, nil)
		c.call("shell_send", map[string]any{"session": st.Session, "input": "sleep " + fg + "{Enter}"}, nil)
		if !waitFor(20*time.Second, func() bool { return len(processesWith(bg)) > 0 && len(processesWith(fg)) > 0 }) {
			t.Fatal("the session's commands did not start")
		}
		c.srv.Kill()
		for _, mk := range []string{m, bg, fg} {
			if !waitFor(20*time.Second, func() bool { return len(processesWith(mk)) == 0 }) {
				noProcesses(t, mk) // kills them, and fails
			}
		}
	})
}

// shellOut is the part of shell_exec's result the tests read.
type shellOut struct {
	Ran        bool                    `json:"ran"`
	ExitCode   int                     `json:"exit_code"`
	Output     string                  `json:"output"`
	TimedOut   bool                    `json:"timed_out"`
	HistoryKey string                  `json:"history_key"`
	Blocked    *struct{ Layer string } `json:"blocked"`
	Approval   *struct{ How string }   `json:"approval_required"`
}

// readUntil reads a session until its screen shows want.
func (c *mcpClient) readUntil(id, want string) string {
	c.t.Helper()
	var last string
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); {
		var r struct {
			Output string `json:"output"`
			Screen struct {
				Text string `json:"text"`
			} `json:"screen"`
		}
		c.call("shell_read", map[string]any{"session": id, "wait_ms": 300}, &r)
		last = r.Screen.Text
		if strings.Contains(last, want) {
			return last
		}
	}
	c.t.Fatalf("session %s never showed %q; the screen:\n%s", id, want, last)
	return ""
}

// waitPrompt reads a session until its shell is back at its prompt.
func (c *mcpClient) waitPrompt(id string) {
	c.t.Helper()
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); {
		var r struct {
			AtPrompt bool `json:"at_prompt"`
		}
		if c.call("shell_read", map[string]any{"session": id, "wait_ms": 200}, &r); r.AtPrompt {
			return
		}
	}
	c.t.Fatalf("session %s never came back to its prompt", id)
}

// A shell session is a sandboxed bash that keeps its state, judges each
// command, drives interactive programs, records its commands with the
// session's id, and takes its processes with it when closed.
func TestServeSessions(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e = judgedEnv(t, e)
		// The judge lets this one write outside the workspace through: the
		// session's sandbox must stop it.
		victim := "/usr/fb-" + marker()
		escape := "touch " + victim + "; echo status=$?"
		e.write(filepath.Join(e.configHome(), "forgebox", "config.json"),
			fmt.Sprintf(`{"forgebox": {"rules": {"allow": [{"command": %q}]}}}`, "touch "+victim))
		c := e.serveMCP(nil)
		var st struct{ Session, Cwd string }
		if res, text := c.call("shell_start", map[string]any{}, &st); res.IsError || st.Session == "" {
			t.Fatalf("shell_start: %s", text)
		}
		id := st.Session
		os.Mkdir(filepath.Join(e.ws, "sub"), 0o777)
		os.Chmod(filepath.Join(e.ws, "sub"), 0o777)
		var out shellOut
		c.call("shell_exec", map[string]any{"session": id, "command": "cd sub && export X=41"}, &out)
		if c.call("shell_exec", map[string]any{"session": id, "command": "pwd; echo $((X+1))"}, &out); out.Output != filepath.Join(e.ws, "sub")+"\n42\n" {
			t.Errorf("state did not persist: %+v", out)
		}
		if c.call("shell_exec", map[string]any{"session": id, "command": escape}, &out); !out.Ran || !strings.Contains(out.Output, "status=1") {
			t.Errorf("write outside the workspace: %+v", out)
		}
		if _, err := os.Stat(victim); err == nil {
			os.Remove(victim)
			t.Errorf("the session wrote %s on the host", victim)
		}
		res, _ := c.call("shell_exec", map[string]any{"session": id, "command": denyLine}, &out)
		if !res.IsError || out.Ran || e.ran() || out.Blocked == nil {
			t.Errorf("denied line in a session: %+v", out)
		}
		res, _ = c.call("shell_exec", map[string]any{"session": id, "command": "cd .. && " + askLine}, &out)
		if !res.IsError || out.Ran || e.ran() || out.Approval == nil {
			t.Errorf("ask line in a session: %+v", out)
		}

		// Typed at the prompt, a line is a command, judged like shell_exec;
		// keys and partial lines are refused there.
		for _, in := range []string{denyLine + "{Enter}", "touch M", "touch M{Left}{Enter}", "touch M{Enter}touch N{Enter}"} {
			if res, text := c.call("shell_send", map[string]any{"session": id, "input": in}, nil); !res.IsError {
				t.Errorf("shell_send %q at the prompt: %q; want refused", in, text)
			}
		}
		time.Sleep(300 * time.Millisecond)
		if e.ran() {
			t.Errorf("a line refused at the prompt ran")
		}

		// Typed ahead while a program runs and left unread by it, a line
		// never reaches the shell as a command nobody judged.
		c.call("shell_send", map[string]any{"session": id, "input": "sleep 1{Enter}"}, nil)
		if res, text := c.call("shell_send", map[string]any{"session": id, "input": "touch " + e.marker() + "{Enter}"}, nil); res.IsError {
			t.Fatalf("typing while sleep runs: %s", text)
		}
		time.Sleep(2 * time.Second)
		if c.call("shell_exec", map[string]any{"session": id, "command": "echo after"}, &out); out.Output != "after\n" || e.ran() {
			t.Errorf("type-ahead: %+v, ran %v; want the line dropped", out, e.ran())
		}

		// Interactive programs, through shell_send and shell_read.
		if _, err := exec.LookPath("python3"); err == nil {
			c.call("shell_send", map[string]any{"session": id, "input": "python3 -q{Enter}"}, nil)
			c.readUntil(id, ">>>")
			c.call("shell_send", map[string]any{"session": id, "input": "6*7{Enter}"}, nil)
			c.readUntil(id, "42")
			if res, _ := c.call("shell_exec", map[string]any{"session": id, "command": "echo no"}, nil); !res.IsError {
				t.Errorf("shell_exec while python holds the terminal was accepted")
			}
			c.call("shell_send", map[string]any{"session": id, "input": "{Ctrl-D}"}, nil)
			c.waitPrompt(id)
		}
		if _, err := exec.LookPath("vim"); err == nil {
			c.call("shell_send", map[string]any{"session": id, "input": "vim -u NONE -N notes.txt{Enter}"}, nil)
			c.readUntil(id, "\n~") // vim's empty lines: the typed command shows first
			if res, text := c.call("shell_send", map[string]any{"session": id, "input": "itext here{Esc}:wq{Enter}"}, nil); res.IsError {
				t.Errorf("typing in vim: %s", text)
			}
			c.waitPrompt(id)
			if b, _ := os.ReadFile(filepath.Join(e.ws, "sub", "notes.txt")); string(b) != "text here\n" {
				t.Errorf("vim wrote %q", b)
			}
		}
		if _, err := exec.LookPath("less"); err == nil {
			c.call("shell_exec", map[string]any{"session": id, "command": "seq 1 500 > nums"}, nil)
			c.call("shell_send", map[string]any{"session": id, "input": "less nums{Enter}"}, nil)
			c.readUntil(id, "20")
			c.call("shell_send", map[string]any{"session": id, "input": "q"}, nil)
			c.waitPrompt(id)
		}
		m := marker()
		c.call("shell_send", map[string]any{"session": id, "input": "sleep " + m + "{Enter}"}, nil)
		if !waitFor(10*time.Second, func() bool { return len(processesWith(m)) > 0 }) {
			t.Fatal("sleep did not start")
		}
		c.call("shell_send", map[string]any{"session": id, "input": "{Ctrl-C}"}, nil)
		if !waitFor(10*time.Second, func() bool { return len(processesWith(m)) == 0 }) {
			t.Errorf("Ctrl-C did not stop sleep")
		}
		if c.call("shell_exec", map[string]any{"session": id, "command": "echo back"}, &out); out.Output != "back\n" {
			t.Errorf("after Ctrl-C: %+v", out)
		}

		// The commands are in the history, with the session's id.
		r := e.run([]string{"history", "--json", "--limit", "100"})
		if !strings.Contains(r.stdout, `"pty_session_id":"`+id+`"`) || !strings.Contains(r.stdout, `pwd; echo $((X+1))`) {
			t.Errorf("history lacks the session's commands:\n%s", r.stdout)
		}

		// Closing the session kills what it started, in the background too.
		m = marker()
		c.call("shell_exec", map[string]any{"session": id, "command": "sleep " + m + " &"}, nil)
		if !waitFor(10*time.Second, func() bool { return len(processesWith(m)) > 0 }) {
			t.Fatal("the background sleep did not start")
		}
		c.call("shell_close", map[string]any{"session": id}, nil)
		noProcesses(t, m)
		if res, _ := c.call("shell_exec", map[string]any{"session": id, "command": "true"}, nil); !res.IsError {
			t.Error("a closed session ran a command")
		}
	})
}

// The file tools stay in the workspace and keep its protected paths.
func TestServeFiles(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e = judgedEnv(t, e)
		os.MkdirAll(filepath.Join(e.ws, ".git", "hooks"), 0o777)
		exec.Command("chmod", "-R", "a+rwX", e.ws).Run()
		c := e.serveMCP(nil)
		if res, text := c.call("write_file", map[string]any{"path": "dir/a.txt", "content": "hello\n"}, nil); res.IsError {
			t.Fatalf("write_file: %s", text)
		}
		var rd struct {
			Content string `json:"content"`
		}
		if c.call("read_file", map[string]any{"path": "dir/a.txt"}, &rd); rd.Content != "hello\n" {
			t.Errorf("read_file: %q", rd.Content)
		}
		c.call("copy_item", map[string]any{"source": "dir/a.txt", "destination": "dir/b.txt"}, nil)
		c.call("move_item", map[string]any{"source": "dir/b.txt", "destination": "c.txt"}, nil)
		var l struct {
			Entries []struct {
				Name string `json:"name"`
			} `json:"entries"`
		}
		c.call("list_directory", map[string]any{"path": "."}, &l)
		names := fmt.Sprint(l.Entries)
		if !strings.Contains(names, "c.txt") || !strings.Contains(names, "dir") {
			t.Errorf("list_directory: %s", names)
		}
		if res, text := c.call("delete_item", map[string]any{"path": "c.txt"}, nil); res.IsError {
			t.Errorf("delete_item c.txt: %s", text)
		}
		if _, err := os.Stat(filepath.Join(e.ws, "c.txt")); err == nil {
			t.Error("c.txt was not deleted")
		}
		for _, bad := range []struct {
			tool string
			args map[string]any
		}{
			{"write_file", map[string]any{"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch /tmp/pwned\n"}},
			{"write_file", map[string]any{"path": ".envrc", "content": "x"}},
			{"write_file", map[string]any{"path": "../escape.txt", "content": "x"}},
			{"read_file", map[string]any{"path": "/etc/passwd"}},
			{"move_item", map[string]any{"source": "dir/a.txt", "destination": ".git/hooks/post-checkout"}},
			{"delete_item", map[string]any{"path": ".git/hooks", "recursive": true}},
		} {
			if res, text := c.call(bad.tool, bad.args, nil); !res.IsError {
				t.Errorf("%s %v: %q; want refused", bad.tool, bad.args, text)
			}
		}
		for _, p := range []string{".git/hooks/pre-commit", ".git/hooks/post-checkout", ".envrc", "../escape.txt"} {
			if _, err := os.Lstat(filepath.Join(e.ws, p)); err == nil {
				t.Errorf("%s exists after a refused action", p)
			}
		}
	})
}

// An answer approves only the question the server asked, once: an answer
// the server never asked for, or one replayed, runs nothing.
func TestServeApprovalCannotBeForged(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e = judgedEnv(t, e)
		yes := mcp.InputResponseMap{"approval": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "once"}}}
		call := func(cs *mcp.ClientSession, state string, responses mcp.InputResponseMap) *mcp.CallToolResult {
			t.Helper()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_shell_command",
				Arguments: map[string]any{"command": askLine}, RequestState: state, InputResponses: responses})
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			return res
		}
		// A client that cannot ask, sending an answer anyway.
		c := e.serveMCP(nil)
		if res := call(c.cs, "0123456789abcdef0123456789abcdef", yes); !res.IsError || e.ran() {
			t.Errorf("forged answer: isError %v, ran %v; want refused, nothing run", res.IsError, e.ran())
		}
		// A client that can ask, answering by hand (no automatic retry).
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		cmd := e.command(ctx, forgebox, "serve")
		client := mcp.NewClient(&mcp.Implementation{Name: "forgebox-test", Version: "1"}, &mcp.ClientOptions{
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "decline"}, nil
			},
			MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		})
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		asked := call(cs, "", nil)
		if asked.RequestState == "" || asked.InputRequests == nil || e.ran() {
			t.Fatalf("first call: %+v; want a question and nothing run", asked)
		}
		if res := call(cs, asked.RequestState, yes); res.IsError || !e.ran() {
			t.Fatalf("the person's answer: isError %v; want the command run", res.IsError)
		}
		if res := call(cs, asked.RequestState, yes); res.InputRequests == nil || e.ran() {
			t.Errorf("replayed answer: %+v, ran %v; want asked again, nothing run", res, e.ran())
		}
	})
}

package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mcpInspector is the official MCP Inspector (2.x), which scripts/setup-agents
// installs with the Node 22 it needs: an MCP client forgebox did not write.
type mcpInspector struct {
	node   string // Node 22's node
	script string // the Inspector's launcher
}

// inspector finds the Inspector and its Node; FORGEBOX_REQUIRE_INSPECTOR=1
// (set by .ci/run) makes a missing one a failure.
func inspector(t *testing.T) mcpInspector {
	t.Helper()
	dir := os.Getenv("FORGEBOX_CI_DIR")
	if dir == "" {
		dir = "/opt/forgebox-ci"
	}
	in := mcpInspector{
		node:   filepath.Join(dir, "node22", "node_modules", ".bin", "node"),
		script: filepath.Join(dir, "inspector2", "node_modules", ".bin", "mcp-inspector"),
	}
	for _, p := range []string{in.node, in.script} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("FORGEBOX_REQUIRE_INSPECTOR") != "" {
				t.Fatalf("the MCP Inspector is missing (%v): run scripts/setup-agents", err)
			}
			t.Skipf("the MCP Inspector is not installed (%s): run scripts/setup-agents", p)
		}
	}
	return in
}

// inspect runs one Inspector CLI call against forgebox serve, as the mode's
// user in the workspace, and decodes what it printed.
func (e *env) inspect(t *testing.T, in mcpInspector, method string, args ...string) map[string]any {
	t.Helper()
	cli := append([]string{in.script, "--cli", forgebox, "serve", "--method", method}, args...)
	r := e.runProgram(in.node, cli...)
	var out map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("inspector %s %q: exit %d, %v\nstdout: %s\nstderr: %s", method, args, r.code, err, r.stdout, r.stderr)
	}
	return out
}

// A scripted session with the MCP Inspector: the tools it lists, a command
// it runs, a decision, and a denial that leaves the host unchanged.
func TestInspectorSession(t *testing.T) {
	bin := inspector(t)
	forEachMode(t, func(t *testing.T, e *env) {
		e = judgedEnv(t, e)
		list := e.inspect(t, bin, "tools/list")
		// --strict: the Inspector's schema portability check exits 6 on a
		// tool schema that some client would refuse.
		if r := e.runProgram(bin.node, bin.script, "--cli", forgebox, "serve", "--method", "tools/list", "--strict"); r.code != 0 {
			t.Errorf("inspector tools/list --strict: exit %d\n%s", r.code, r.stderr)
		}
		b, _ := json.Marshal(list["tools"])
		for _, want := range []string{"run_shell_command", "check_command", "git"} {
			if !strings.Contains(string(b), `"name":"`+want+`"`) {
				t.Errorf("tools/list lacks %s: %s", want, b)
			}
		}
		res := e.inspect(t, bin, "tools/call", "--tool-name", "run_shell_command", "--tool-arg", "command=echo from the inspector")
		// A command's output is in the text, once; its data in _meta.
		meta, _ := res["_meta"].(map[string]any)
		data, _ := meta["forgebox/result"].(map[string]any)
		content, _ := res["content"].([]any)
		text := ""
		if len(content) == 1 {
			text, _ = content[0].(map[string]any)["text"].(string)
		}
		if !strings.Contains(text, "--- stdout (19 bytes) ---\nfrom the inspector\n") || data["exit_code"] != 0.0 || res["isError"] == true || res["structuredContent"] != nil {
			t.Errorf("run_shell_command: %v", res)
		}
		for _, want := range []string{"write_file", "read_file", "shell_start", "shell_exec", "shell_send", "shell_read"} {
			if !strings.Contains(string(b), `"name":"`+want+`"`) {
				t.Errorf("tools/list lacks %s", want)
			}
		}
		e.inspect(t, bin, "tools/call", "--tool-name", "write_file", "--tool-arg", "path=notes/inspected.txt", "--tool-arg", "content=written by the inspector")
		res = e.inspect(t, bin, "tools/call", "--tool-name", "read_file", "--tool-arg", "path=notes/inspected.txt")
		if sc, _ := res["structuredContent"].(map[string]any); sc["content"] != "written by the inspector" {
			t.Errorf("read_file after write_file: %v", res)
		}
		res = e.inspect(t, bin, "tools/call", "--tool-name", "write_file", "--tool-arg", "path=.git/hooks/pre-commit", "--tool-arg", "content=x")
		if res["isError"] != true {
			t.Errorf("write_file to a hook: %v", res)
		}
		res = e.inspect(t, bin, "tools/call", "--tool-name", "check_command", "--tool-arg", "command="+denyLine)
		if sc, _ := res["structuredContent"].(map[string]any); sc["action"] != "deny" {
			t.Errorf("check_command: %v", res)
		}
		res = e.inspect(t, bin, "tools/call", "--tool-name", "run_shell_command", "--tool-arg", "command="+denyLine)
		if res["isError"] != true || e.ran() {
			t.Errorf("denied line: %v (ran: %v)", res, e.ran())
		}
	})
}

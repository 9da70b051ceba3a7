package agent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/forgebox/forgebox/files"
	"github.com/forgebox/forgebox/policy"
	"github.com/forgebox/forgebox/session"
	"github.com/forgebox/forgebox/undo"
)

// allowAll is a backend that allows every command and runs none.
type allowAll struct{}

func (allowAll) Run(context.Context, RunRequest) (RunResult, error) {
	return RunResult{Warnings: []string{}}, nil
}
func (allowAll) Check(context.Context, Target) (*policy.Decision, error) {
	return &policy.Decision{Action: policy.Allow}, nil
}
func (allowAll) Approve(context.Context, Target, policy.Scope) error { return nil }
func (allowAll) FileRequest(context.Context, Target, string) (string, error) {
	return "", errors.New("no requests here")
}
func (allowAll) TakeAnswer(context.Context, Target) (string, bool, error) { return "", false, nil }

// connect serves every tool (files and sessions included) on a workspace
// and returns a client session on it.
func connect(t *testing.T) (*mcp.ClientSession, string) {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := Config{Workspace: ws, Backend: allowAll{}, Sessions: session.NewManager(1, 0),
		SessionArgv: func(string) []string { return []string{"false"} }, Undo: undo.StoreFor(t.TempDir())}
	if runtime.GOOS == "linux" {
		f, err := files.New(files.Options{Root: ws, Protected: []string{".git/hooks", ".git/config", ".envrc"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		c.Files = f
	}
	srv, err := NewServer(c)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); c.Sessions.CloseAll() })
	return cs, ws
}

// Every tool has a title and annotations that say whether it changes
// anything; every property of every input and output, at every depth, is
// snake_case and described.
func TestToolSchemas(t *testing.T) {
	cs, _ := connect(t)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "linux" && len(res.Tools) < 18 {
		t.Fatalf("%d tools listed, want every tool (18 or more)", len(res.Tools))
	}
	for _, tool := range res.Tools {
		t.Run(tool.Name, func(t *testing.T) {
			if tool.Title == "" || tool.Annotations != nil && tool.Annotations.Title != tool.Title {
				t.Errorf("%s has no title, or two", tool.Name)
			}
			a := tool.Annotations
			switch {
			case a == nil:
				t.Errorf("%s has no annotations", tool.Name)
			case a.OpenWorldHint == nil:
				t.Errorf("%s does not say whether it is open-world", tool.Name)
			case !a.ReadOnlyHint && a.DestructiveHint == nil:
				t.Errorf("%s changes things but does not say whether destructively", tool.Name)
			}
			output := any(tool.OutputSchema)
			if tool.OutputSchema == nil {
				// A command's result is text for the model, with its data
				// in _meta, described by the tool's _meta.
				output = tool.Meta[ResultSchemaMeta]
			}
			if output == nil && tool.Name != "read_output" {
				t.Errorf("%s has no output schema", tool.Name)
			}
			for which, s := range map[string]any{"input": tool.InputSchema, "output": output} {
				if s != nil {
					walkSchema(t, tool.Name+" "+which, wire(t, s))
				}
			}
		})
	}
}

// wire is a schema as a client receives it.
func wire(t *testing.T, s any) map[string]any {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func walkSchema(t *testing.T, at string, s map[string]any) {
	t.Helper()
	props, _ := s["properties"].(map[string]any)
	for name, p := range props {
		ps, _ := p.(map[string]any)
		if !snakeCase(name) {
			t.Errorf("%s: property %q is not snake_case", at, name)
		}
		if d, _ := ps["description"].(string); strings.TrimSpace(d) == "" {
			t.Errorf("%s: property %q has no description", at, name)
		}
		walkSchema(t, at+"."+name, ps)
	}
	if items, ok := s["items"].(map[string]any); ok {
		walkSchema(t, at+"[]", items)
	}
}

// snakeCase reports whether a name is lower-case words joined by single
// underscores.
func snakeCase(name string) bool {
	if name == "" || name[0] == '_' || name[len(name)-1] == '_' || strings.Contains(name, "__") || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	return strings.Trim(name, "abcdefghijklmnopqrstuvwxyz0123456789_") == ""
}

func TestSnakeCase(t *testing.T) {
	for name, want := range map[string]bool{"exit_code": true, "a": true, "utf8": true, "ExitCode": false, "exitCode": false,
		"ID": false, "_x": false, "x_": false, "a__b": false, "9a": false, "a-b": false, "": false} {
		if got := snakeCase(name); got != want {
			t.Errorf("snakeCase(%q) = %v, want %v", name, got, want)
		}
	}
}

// A wrong argument is a tool error (isError) that names the argument, what
// was wrong and what is accepted, in words, not Go's.
func TestArgumentErrors(t *testing.T) {
	cs, _ := connect(t)
	tests := []struct {
		tool string
		args any
		want []string // parts of the message
	}{
		{"run_shell_command", map[string]any{"command": "ls", "timeout_ms": -5}, []string{"timeout_ms is -5, out of range", "from 0 to 86400000", "milliseconds"}},
		{"run_shell_command", map[string]any{"command": "ls", "timeout_ms": 1e15}, []string{"timeout_ms", "out of range", "from 0 to 86400000"}},
		{"run_shell_command", map[string]any{"command": "ls", "timeout_ms": 1.5}, []string{"timeout_ms is 1.5, not a whole number"}},
		{"run_shell_command", map[string]any{"command": "ls", "timeout_ms": 1e20}, []string{"timeout_ms", "out of range", "from 0 to 86400000"}},
		{"run_shell_command", map[string]any{"command": "ls", "timeout_ms": json.RawMessage("1e400")}, []string{"timeout_ms is 1e400, out of range"}},
		{"run_shell_command", map[string]any{"command": "ls", "timeout_ms": "100"}, []string{"timeout_ms is a string: give a whole number"}},
		{"run_shell_command", map[string]any{"command": nil}, []string{"the argument command is missing: give a string (the command line"}},
		{"run_shell_command", map[string]any{}, []string{"the argument command is missing"}},
		{"run_shell_command", []any{"ls"}, []string{"must be a JSON object", "command", "timeout_ms"}},
		{"check_command", map[string]any{"command": 5}, []string{"the argument command is the number 5: give a string"}},
		{"git", map[string]any{"subcommand": "status", "args": "-s"}, []string{"the argument args is a string: give a list of strings"}},
		{"git", map[string]any{"subcommand": "status", "args": []any{"-s", 1}}, []string{"args[1] is the number 1: give a string"}},
		{"shell_exec", map[string]any{"session": "x", "command": "ls", "timeout_ms": -1}, []string{"timeout_ms is -1, out of range"}},
		{"shell_read", map[string]any{"session": "x", "wait_ms": 60000}, []string{"wait_ms is 60000, out of range", "from 0 to 30000"}},
	}
	if runtime.GOOS == "linux" {
		tests = append(tests, []struct {
			tool string
			args any
			want []string
		}{
			{"read_file", map[string]any{"path": nil}, []string{"the argument path is missing: give a string"}},
			{"read_file", map[string]any{"path": true}, []string{"path is true: give a string"}},
			{"read_file", map[string]any{"path": "a", "offset": json.RawMessage("2e0"), "limit": json.RawMessage("1e400")}, []string{"limit is 1e400, out of range: give a whole number"}},
			{"edit_file", map[string]any{"path": "a", "old_string": "x"}, []string{"the argument new_string is missing"}},
			{"multi_edit_file", map[string]any{"path": "a", "edits": []any{map[string]any{"old_string": "x"}}}, []string{"edits[0].new_string is missing"}},
			{"multi_edit_file", map[string]any{"path": "a", "edits": []any{"x"}}, []string{"edits[0] is a string: give an object with new_string, old_string, replace_all"}},
			{"delete_item", map[string]any{"path": "a", "recursive": "yes"}, []string{"recursive is a string: give true or false"}},
		}...)
	}
	for _, tt := range tests {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
		if err != nil {
			t.Errorf("%s(%v): a protocol error, not a tool error: %v", tt.tool, tt.args, err)
			continue
		}
		text := resultText(res)
		if !res.IsError {
			t.Errorf("%s(%v) is not an error: %s", tt.tool, tt.args, text)
		}
		for _, w := range tt.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s(%v) = %q, want %q in it", tt.tool, tt.args, text, w)
			}
		}
		for _, bad := range []string{"reflect", "invalid", "Go", "unmarshal", "json:"} {
			if strings.Contains(text, bad) {
				t.Errorf("%s(%v) = %q: speaks of %q", tt.tool, tt.args, text, bad)
			}
		}
	}
}

// A null for an optional argument counts as absent, a whole number may be
// written in any form JSON allows, and an argument spelled in another case
// is not taken for the real one.
func TestArgumentNullAndCase(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the file tools are Linux-only")
	}
	cs, ws := connect(t)
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\n"), 0o644)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_directory", Arguments: map[string]any{"path": nil}})
	if err != nil || res.IsError || !strings.Contains(resultText(res), "a.txt") {
		t.Errorf("list_directory(path: null) = %v, %s", err, resultText(res))
	}
	// A whole number written as JSON allows (1e0) is the number.
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "a.txt", "offset": json.RawMessage("1e0")}})
	if err != nil || res.IsError || !strings.HasSuffix(resultText(res), "\nne\n") {
		t.Errorf("read_file(offset: 1e0) = %v, %q", err, resultText(res))
	}
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"PATH": "a.txt"}})
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "the argument path is missing") {
		t.Errorf("read_file(PATH: a.txt) = %v, %s", err, resultText(res))
	}
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// edit_file changes a file through the server and says where; a match that
// is not unique is an error with the count and the lines. list_directory
// gives modes in octal, as chmod takes them.
func TestEditFileAndModes(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the file tools are Linux-only")
	}
	cs, ws := connect(t)
	p := filepath.Join(ws, "run.sh")
	os.WriteFile(p, []byte("#!/bin/sh\necho a\necho a\n"), 0o755)
	os.Chmod(p, 0o755)
	call := func(tool string, args map[string]any) (*mcp.CallToolResult, map[string]any) {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		var out map[string]any
		if res.StructuredContent != nil {
			out = wire(t, res.StructuredContent)
		}
		return res, out
	}
	res, _ := call("edit_file", map[string]any{"path": "run.sh", "old_string": "echo a", "new_string": "echo b"})
	if text := resultText(res); !res.IsError || !strings.Contains(text, "occurs 2 times (at lines 2, 3)") {
		t.Errorf("edit_file(ambiguous) = %s", text)
	}
	res, out := call("edit_file", map[string]any{"path": "run.sh", "old_string": "echo a\necho a", "new_string": "echo b"})
	if res.IsError || out["replacements"] != 1.0 || out["path"] != "run.sh" || readText(t, p) != "#!/bin/sh\necho b\n" {
		t.Errorf("edit_file = %s, %v; file %q", resultText(res), out, readText(t, p))
	}
	res, out = call("multi_edit_file", map[string]any{"path": "run.sh", "edits": []any{
		map[string]any{"old_string": "b", "new_string": "c"}, map[string]any{"old_string": "absent", "new_string": "d"}}})
	if !res.IsError || readText(t, p) != "#!/bin/sh\necho b\n" {
		t.Errorf("multi_edit_file with a failing edit = %s, %v; file %q", resultText(res), out, readText(t, p))
	}
	res, _ = call("edit_file", map[string]any{"path": ".git/hooks/pre-commit", "old_string": "a", "new_string": "b"})
	if !res.IsError || !strings.Contains(resultText(res), "protected") {
		t.Errorf("edit_file(hook) = %s", resultText(res))
	}
	res, out = call("list_directory", map[string]any{})
	entries, _ := out["entries"].([]any)
	if len(entries) != 1 || entries[0].(map[string]any)["mode"] != "0755" || entries[0].(map[string]any)["type"] != "file" {
		t.Errorf("list_directory = %s, %v", resultText(res), out)
	}
}

func readText(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

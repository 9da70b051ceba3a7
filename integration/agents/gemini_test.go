//go:build linux && agents

package agents

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// geminiEnv is the environment Gemini CLI runs with: an API key for the
// stand-in, which is its model API.
func geminiEnv(s *standin) []string {
	return []string{"GEMINI_API_KEY=standin", "GOOGLE_GEMINI_BASE_URL=" + s.url, "GEMINI_CLI_NO_RELAUNCH=true"}
}

// geminiSettings writes the user settings Gemini CLI needs: API-key auth,
// the workspace trusted (Gemini CLI loads no MCP server in an untrusted
// folder), and its own unsandboxed shell and file-writing tools excluded
// so that the model has forgebox's only. They are excluded by class name:
// Gemini CLI matches an excluded tool name against MCP tools' unqualified
// names too, so excluding run_shell_command would hide forgebox's as well.
func geminiSettings(t *testing.T, sc *scratch) {
	t.Helper()
	settings := map[string]any{
		"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}, "folderTrust": map[string]any{"enabled": true}},
		"tools":    map[string]any{"exclude": []string{"ShellTool", "WriteFileTool", "EditTool"}},
		"general":  map[string]any{"disableAutoUpdate": true},
		"privacy":  map[string]any{"usageStatisticsEnabled": false},
	}
	b, _ := json.MarshalIndent(settings, "", "  ")
	sc.write(filepath.Join(sc.home, ".gemini", "settings.json"), string(b))
	trusted, _ := json.Marshal(map[string]string{sc.ws: "TRUST_FOLDER"})
	sc.write(filepath.Join(sc.home, ".gemini", "trustedFolders.json"), string(trusted))
}

// Gemini CLI starts forgebox serve from `gemini mcp add` and calls its
// run_shell_command: output, a denial, a command the person refuses and
// then approves at a terminal (forgebox approve), a large output.
func TestGeminiCLIMCP(t *testing.T) {
	gemini := client(t, "gemini-cli", "gemini")
	forEachMode(t, func(t *testing.T, sc *scratch) {
		geminiSettings(t, sc)
		s := newStandin(t, geminiAPI{}, shellScript(sc)...)
		ctx := context.Background()
		if r := sc.run(ctx, gemini, geminiEnv(s), "mcp", "add", "--trust", "forgebox", forgebox, "serve", "--workspace", sc.ws, "--no-undo"); r.code != 0 {
			t.Fatalf("gemini mcp add: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(sc.ws, ".gemini", "settings.json")); err != nil {
			t.Fatalf("gemini mcp add wrote no project settings: %v", err)
		}
		// yolo: in gemini -p, the default approval mode drops every tool
		// that would need a confirmation, and with it (by the unqualified
		// name) forgebox's run_shell_command and write_file. Gemini's own
		// shell and file writers are excluded above; forgebox judges.
		r := sc.run(ctx, gemini, geminiEnv(s), "-p", "run the commands", "--output-format", "json", "--approval-mode", "yolo")
		t.Logf("gemini -p took %v", r.took)
		if r.code != 0 {
			t.Errorf("gemini -p: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		checkShellResults(t, s.toolResults())
		sc.resetByPerson()
		for _, own := range []string{"run_shell_command", "write_file", "replace"} {
			if offered := s.offered(); slices.Contains(offered, own) {
				t.Errorf("Gemini CLI offers its own unsandboxed %s beside forgebox's tools: %v", own, offered)
			}
		}
	})
}

// What docs/agents/gemini-cli.md tells people, checked: in an untrusted
// folder, or with the server not trusted (and gemini -p's default approval
// mode), the model gets no forgebox tool at all; and excluding Gemini's
// run_shell_command by name hides forgebox's too.
func TestGeminiCLIConfigurationFacts(t *testing.T) {
	gemini := client(t, "gemini-cli", "gemini")
	m := modes(t)[0]
	cases := []struct {
		name      string
		untrusted bool     // no trustedFolders.json
		add       []string // gemini mcp add's flags
		exclude   []string // tools.exclude, when set
		yolo      bool
		want      func(offered []string) bool
		wantText  string
		// says: what gemini prints when it asks the model nothing
		says string
	}{
		{name: "untrusted folder", untrusted: true, add: []string{"--trust"}, yolo: true,
			want: noForgebox, wantText: "no forgebox tool", says: "not running in a trusted directory"},
		{name: "server not trusted", add: nil,
			want: noForgebox, wantText: "no forgebox tool"},
		{name: "excluded by name", add: []string{"--trust"}, exclude: []string{"run_shell_command"}, yolo: true,
			want: func(o []string) bool {
				return !slices.Contains(o, "mcp_forgebox_run_shell_command") && slices.Contains(o, "mcp_forgebox_git")
			}, wantText: "forgebox's git but not its run_shell_command"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc := newScratch(t, m)
			geminiSettings(t, sc)
			if c.untrusted {
				os.Remove(filepath.Join(sc.home, ".gemini", "trustedFolders.json"))
			}
			if c.exclude != nil {
				p := filepath.Join(sc.home, ".gemini", "settings.json")
				b, _ := os.ReadFile(p)
				var settings map[string]any
				if err := json.Unmarshal(b, &settings); err != nil {
					t.Fatal(err)
				}
				settings["tools"] = map[string]any{"exclude": c.exclude}
				b, _ = json.Marshal(settings)
				sc.write(p, string(b))
			}
			s := newStandin(t, geminiAPI{}, shell("echo hello"))
			ctx := context.Background()
			add := append(append([]string{"mcp", "add"}, c.add...), "forgebox", forgebox, "serve", "--workspace", sc.ws)
			if r := sc.run(ctx, gemini, geminiEnv(s), add...); r.code != 0 {
				t.Fatalf("gemini mcp add: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			args := []string{"-p", "run the commands", "--output-format", "json"}
			if c.yolo {
				args = append(args, "--approval-mode", "yolo")
			}
			r := sc.run(ctx, gemini, geminiEnv(s), args...)
			offered := s.offered()
			if !c.want(offered) {
				t.Errorf("the model was offered %v; want %s", offered, c.wantText)
			}
			// The check above must not pass because Gemini CLI failed
			// before it offered the model anything, unless it says why.
			if len(offered) == 0 && (c.says == "" || !strings.Contains(r.stdout+r.stderr, c.says)) {
				t.Errorf("gemini -p offered the model no tools: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

func noForgebox(offered []string) bool {
	return !slices.ContainsFunc(offered, func(name string) bool { return strings.Contains(name, "forgebox") })
}

// `gemini mcp add NAME -- COMMAND ARGS` (the form other clients take) is
// refused: the command must follow the name directly.
func TestGeminiCLIMCPAddDashDash(t *testing.T) {
	gemini := client(t, "gemini-cli", "gemini")
	sc := newScratch(t, modes(t)[0])
	r := sc.run(context.Background(), gemini, nil, "mcp", "add", "forgebox", "--", forgebox, "serve", "--workspace", sc.ws)
	if r.code == 0 {
		b, _ := os.ReadFile(filepath.Join(sc.ws, ".gemini", "settings.json"))
		t.Errorf("gemini mcp add NAME -- COMMAND succeeded; docs/agents/gemini-cli.md says it fails. settings: %s", b)
	}
}

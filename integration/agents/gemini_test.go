//go:build linux && agents

package agents

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
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
// run_shell_command: output, a denial, an approval.
func TestGeminiCLIMCP(t *testing.T) {
	gemini := client(t, "gemini-cli", "gemini")
	forEachMode(t, func(t *testing.T, sc *scratch) {
		geminiSettings(t, sc)
		s := newStandin(t, geminiAPI{}, shellScript...)
		ctx := context.Background()
		if r := sc.run(ctx, gemini, geminiEnv(s), "mcp", "add", "--trust", "forgebox", forgebox, "serve", "--workspace", sc.ws); r.code != 0 {
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
		for _, own := range []string{"run_shell_command", "write_file", "replace"} {
			if offered := s.offered(); slices.Contains(offered, own) {
				t.Errorf("Gemini CLI offers its own unsandboxed %s beside forgebox's tools: %v", own, offered)
			}
		}
		sc.unchanged()
	})
}

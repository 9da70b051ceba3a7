//go:build linux && agents

package agents

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// codexConfig writes Codex's config.toml: the stand-in as its model
// provider (Responses API) and forgebox serve as an MCP server.
func codexConfig(t *testing.T, sc *scratch, s *standin) {
	t.Helper()
	sc.write(filepath.Join(sc.home, ".codex", "config.toml"), fmt.Sprintf(`model = "gpt-5.5"
model_provider = "standin"
approval_policy = "never"
sandbox_mode = "read-only"

[model_providers.standin]
name = "stand-in"
base_url = "%s/v1"
wire_api = "responses"
env_key = "STANDIN_API_KEY"

[mcp_servers.forgebox]
command = %q
args = ["serve", "--workspace", %q, "--no-undo"]
# forgebox judges every command itself; Codex's own approval of each MCP
# call would ask a person (and codex exec, with no one to ask, refuses).
default_tools_approval_mode = "approve"

[projects.%q]
trust_level = "trusted"

# Codex's own shell tools (exec_command, write_stdin) would let the model
# run commands outside forgebox.
[features]
shell_tool = false
unified_exec = false
`, s.url, forgebox, sc.ws, sc.ws))
}

func codexEnv() []string {
	return []string{"STANDIN_API_KEY=standin"}
}

// Codex starts forgebox serve from config.toml's [mcp_servers] and calls
// its run_shell_command: output, a denial, a command the person refuses and
// then approves at a terminal (forgebox approve), a large output.
func TestCodexMCP(t *testing.T) {
	codex := client(t, "codex", "codex")
	forEachMode(t, func(t *testing.T, sc *scratch) {
		s := newStandin(t, responsesAPI{}, shellScript(sc)...)
		codexConfig(t, sc, s)
		r := sc.run(context.Background(), codex, codexEnv(), "exec", "--skip-git-repo-check", "--json", "run the commands")
		t.Logf("codex exec took %v", r.took)
		if r.code != 0 {
			t.Errorf("codex exec: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		checkShellResults(t, s.toolResults())
		sc.resetByPerson()
		if offered := s.offered(); slices.Contains(offered, "exec_command") {
			t.Errorf("Codex offers its own exec_command beside forgebox's tools: %v", offered)
		}
	})
}

// `codex mcp list` only echoes config.toml, as docs/agents/codex.md says: it
// lists a server whose command does not exist as enabled, without an error.
func TestCodexMCPListEchoes(t *testing.T) {
	codex := client(t, "codex", "codex")
	sc := newScratch(t, modes(t)[0])
	missing := filepath.Join(sc.dir, "no-such-forgebox")
	sc.write(filepath.Join(sc.home, ".codex", "config.toml"), fmt.Sprintf("[mcp_servers.forgebox]\ncommand = %q\nargs = [\"serve\"]\n", missing))
	r := sc.run(context.Background(), codex, nil, "mcp", "list")
	if r.code != 0 || !strings.Contains(r.stdout, missing) || !strings.Contains(r.stdout, "enabled") {
		t.Errorf("codex mcp list with a missing server command: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

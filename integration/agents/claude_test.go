//go:build linux && agents

package agents

import (
	"context"
	"regexp"
	"strings"
	"testing"
)

// claudeEnv is the environment Claude Code runs with: its model API is the
// stand-in, and it sends nothing anywhere else.
func claudeEnv(s *standin) []string {
	return []string{
		"ANTHROPIC_BASE_URL=" + s.url, "ANTHROPIC_API_KEY=sk-ant-standin",
		"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	}
}

// Claude Code starts forgebox serve from `claude mcp add` and calls its
// run_shell_command: output, a denial, an approval. Claude Code defers MCP
// tools behind its ToolSearch; the stand-in model searches first, as a
// model would.
func TestClaudeCodeMCP(t *testing.T) {
	claude := client(t, "claude-code", "claude")
	forEachMode(t, func(t *testing.T, sc *scratch) {
		s := newStandin(t, anthropic{}, shellScript...)
		ctx := context.Background()
		if r := sc.run(ctx, claude, claudeEnv(s), "mcp", "add", "forgebox", "--", forgebox, "serve", "--workspace", sc.ws); r.code != 0 {
			t.Fatalf("claude mcp add: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		r := sc.run(ctx, claude, claudeEnv(s), "-p", "run the commands", "--output-format", "json", "--allowedTools", "mcp__forgebox")
		t.Logf("claude -p took %v", r.took)
		if r.code != 0 {
			t.Errorf("claude -p: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		checkShellResults(t, s.toolResults())
		sc.unchanged()
	})
}

// shellScript is what the stand-in model asks of forgebox's
// run_shell_command through every client: a command that runs, one the
// policy denies, one that needs a person's approval (it would discard
// the workspace's uncommitted change), and one with a large output (to
// see how much of it the client forwards).
var shellScript = []step{shell("echo hello"), shell(denyLine), shell("git reset --hard"), shell("seq 1 100000")}

// checkShellResults checks the tool results of shellScript as the client
// forwarded them to its model: the output, the denial, the approval asked
// for (with the code a person answers with forgebox approve), and the
// large output: once (never in the text and in structured data both),
// head and tail within forgebox's budget, with the read_output call that
// reads the rest.
func checkShellResults(t *testing.T, got []string) {
	t.Helper()
	if len(got) != len(shellScript) {
		t.Errorf("the model saw %d tool results; want %d", len(got), len(shellScript))
		return
	}
	if !strings.Contains(got[0], `hello`) {
		t.Errorf("echo hello: the model saw %s", got[0])
	}
	if !strings.Contains(got[1], "DENIED") {
		t.Errorf("denied line: the model saw %s", got[1])
	}
	if !regexp.MustCompile(`forgebox approve [A-Z0-9]{4}-[A-Z0-9]{4}`).MatchString(got[2]) {
		t.Errorf("git reset --hard: the model saw %s; want the code a person answers with forgebox approve", got[2])
	}
	if n := len(got[3]); n > 40000 || strings.Count(got[3], "99999") != 1 || !strings.Contains(got[3], "read_output") {
		t.Errorf("seq 1 100000: the model saw %d bytes with 99999 %d times; want at most 40,000, the tail once, and read_output named:\n%.600s", n, strings.Count(got[3], "99999"), got[3])
	}
	t.Logf("seq 1 100000: the model saw %d bytes", len(got[3]))
}

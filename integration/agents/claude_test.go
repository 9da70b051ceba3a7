//go:build linux && agents

package agents

import (
	"context"
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
// run_shell_command: output, a denial, a command the person refuses and
// then approves at a terminal (forgebox approve), a large output. Claude
// Code defers MCP tools behind its ToolSearch; the stand-in model searches
// first, as a model would.
func TestClaudeCodeMCP(t *testing.T) {
	claude := client(t, "claude-code", "claude")
	forEachMode(t, func(t *testing.T, sc *scratch) {
		s := newStandin(t, anthropic{}, shellScript(sc)...)
		ctx := context.Background()
		if r := sc.run(ctx, claude, claudeEnv(s), "mcp", "add", "forgebox", "--", forgebox, "serve", "--workspace", sc.ws, "--no-undo"); r.code != 0 {
			t.Fatalf("claude mcp add: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		r := sc.run(ctx, claude, claudeEnv(s), "-p", "run the commands", "--output-format", "json", "--allowedTools", "mcp__forgebox")
		t.Logf("claude -p took %v", r.took)
		if r.code != 0 {
			t.Errorf("claude -p: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		checkShellResults(t, s.toolResults())
		sc.resetByPerson()
	})
}

// shellScript is what the stand-in model asks of forgebox's
// run_shell_command through every client: a command that runs, one the
// policy denies, one that needs a person's approval (it would discard the
// workspace's uncommitted change) and gets a code; the person answers
// that code no at a terminal, and the same call is refused; it gets a
// new code, the person answers once, and the same call runs; last, one
// with a large output (to see how much of it the client forwards).
func shellScript(sc *scratch) []step {
	reset := shell("git reset --hard")
	afterNo, afterYes := reset, reset
	afterNo.Before, afterYes.Before = sc.person("n"), sc.person("o")
	return []step{shell("echo hello"), shell(denyLine), reset, afterNo, reset, afterYes, shell("seq 1 100000")}
}

// checkShellResults checks the tool results of shellScript as the client
// forwarded them to its model: the output, the denial, the approval asked
// for (with the code a person answers with forgebox approve), the retry
// after the person said no refused, a new code, the retry after the
// person said once run by their approval, and the large output: once
// (never in the text and in structured data both), head and tail within
// forgebox's budget, with the read_output call that reads the rest.
func checkShellResults(t *testing.T, got []string) {
	t.Helper()
	if len(got) != 7 {
		t.Errorf("the model saw %d tool results; want 7", len(got))
		return
	}
	if !strings.Contains(got[0], `hello`) {
		t.Errorf("echo hello: the model saw %s", got[0])
	}
	if !strings.Contains(got[1], "DENIED") {
		t.Errorf("denied line: the model saw %s", got[1])
	}
	first, second := approveCode.FindStringSubmatch(got[2]), approveCode.FindStringSubmatch(got[4])
	if first == nil {
		t.Errorf("git reset --hard: the model saw %s; want the code a person answers with forgebox approve", got[2])
	}
	if !strings.Contains(got[3], "the person refused this command") || strings.Contains(got[3], "approved by") {
		t.Errorf("git reset --hard after the person said no: the model saw %s; want it refused", got[3])
	}
	if second == nil || first != nil && second[1] == first[1] {
		t.Errorf("git reset --hard after the refusal: the model saw %s; want a new code (the first was %v)", got[4], first)
	}
	if !strings.Contains(got[5], "exit 0 in") || !strings.Contains(got[5], "approved by the person, with forgebox approve") {
		t.Errorf("git reset --hard after the person approved it: the model saw %s; want it run (exit 0), approved by the person with forgebox approve", got[5])
	}
	if n := len(got[6]); n > 40000 || strings.Count(got[6], "99999") != 1 || !strings.Contains(got[6], "read_output") {
		t.Errorf("seq 1 100000: the model saw %d bytes with 99999 %d times; want at most 40,000, the tail once, and read_output named:\n%.600s", n, strings.Count(got[6], "99999"), got[6])
	}
	t.Logf("seq 1 100000: the model saw %d bytes", len(got[6]))
}

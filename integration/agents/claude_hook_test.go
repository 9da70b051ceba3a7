//go:build linux && agents

package agents

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// claudeHookSettings writes Claude Code's user settings with forgebox hook
// claude (and flags) as the PreToolUse hook of its Bash tool.
func claudeHookSettings(t *testing.T, sc *scratch, flags ...string) {
	t.Helper()
	command := strings.Join(append([]string{forgebox, "hook", "claude"}, flags...), " ")
	settings := map[string]any{"hooks": map[string]any{"PreToolUse": []any{map[string]any{
		"matcher": "Bash",
		"hooks":   []any{map[string]any{"type": "command", "command": command}},
	}}}}
	b, _ := json.MarshalIndent(settings, "", "  ")
	sc.write(filepath.Join(sc.home, ".claude", "settings.json"), string(b))
}

func bash(line string) step {
	return step{Tool: "Bash", Args: map[string]any{"command": line, "description": "a step of the test"}}
}

// escapeScript writes a script into the workspace that writes to a
// directory outside it, and returns the command that runs it. forgebox
// cannot see what the script will do: inside its sandbox (hook --wrap)
// the script runs unasked and the sandbox stops the write; run by Claude
// Code itself (the hook without --wrap) nothing contains it, and it is
// asked about.
func escapeScript(sc *scratch) (line, target string) {
	outside := filepath.Join(sc.dir, "outside")
	sc.mkdir(outside)
	target = filepath.Join(outside, "escaped")
	sc.write(filepath.Join(sc.ws, "escape.sh"), "echo escaped > "+target+"\n")
	return "sh escape.sh; echo status $?", target
}

// Claude Code asks forgebox hook claude about each Bash command: an allowed
// one runs, a denied one is refused with forgebox's reasons for the model,
// and one that needs approval does not run in claude -p, where no one can
// be asked: git reset --hard, and a workspace script, which Claude Code
// would run outside any sandbox.
func TestClaudeCodeHook(t *testing.T) {
	claude := client(t, "claude-code", "claude")
	forEachMode(t, func(t *testing.T, sc *scratch) {
		claudeHookSettings(t, sc)
		escape, target := escapeScript(sc)
		s := newStandin(t, anthropic{}, bash("echo hello"), bash(denyLine), bash("git reset --hard"), bash(escape))
		r := sc.run(context.Background(), claude, claudeEnv(s), "-p", "run the commands", "--output-format", "json")
		t.Logf("claude -p took %v", r.took)
		if r.code != 0 {
			t.Errorf("claude -p: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		got := s.toolResults()
		if len(got) == 4 {
			if !strings.Contains(got[0], "hello") || strings.Contains(got[0], `"is_error":true`) {
				t.Errorf("echo hello: the model saw %s", got[0])
			}
			if !strings.Contains(got[1], "/dev/sda") || !strings.Contains(got[1], `"is_error":true`) {
				t.Errorf("denied line: the model saw %s", got[1])
			}
			if !strings.Contains(got[2], `"is_error":true`) {
				t.Errorf("git reset --hard: the model saw %s", got[2])
			}
			t.Logf("git reset --hard: the model saw %s", got[2])
			if !strings.Contains(got[3], `"is_error":true`) || !strings.Contains(got[3], "not contained") {
				t.Errorf("the workspace script: the model saw %s", got[3])
			}
			t.Logf("the workspace script: the model saw %s", got[3])
		}
		// Without --wrap the hook only judges, and nothing would contain
		// the script: it is asked about, and claude -p does not run it.
		if _, err := os.Stat(target); err == nil {
			t.Error("the workspace script ran unsandboxed without being asked about")
		}
		sc.unchanged()
	})
}

// With --wrap, the hook rewrites an allowed command to run in forgebox's
// sandbox: it runs, but cannot write outside the workspace, which the same
// command run by Claude Code's own Bash could.
func TestClaudeCodeHookWrap(t *testing.T) {
	claude := client(t, "claude-code", "claude")
	forEachMode(t, func(t *testing.T, sc *scratch) {
		claudeHookSettings(t, sc, "--wrap")
		escape, target := escapeScript(sc)
		s := newStandin(t, anthropic{}, bash("echo hello"), bash(escape), bash(denyLine))
		r := sc.run(context.Background(), claude, claudeEnv(s), "-p", "run the commands", "--output-format", "json")
		t.Logf("claude -p took %v", r.took)
		if r.code != 0 {
			t.Errorf("claude -p: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		got := s.toolResults()
		if len(got) == 3 {
			if !strings.Contains(got[0], "hello") {
				t.Errorf("echo hello: the model saw %s", got[0])
			}
			if strings.Contains(got[1], "status 0") || !strings.Contains(got[1], "Read-only file system") {
				t.Errorf("a write outside the workspace: the model saw %s", got[1])
			}
			if !strings.Contains(got[2], "/dev/sda") || !strings.Contains(got[2], `"is_error":true`) {
				t.Errorf("denied line: the model saw %s", got[2])
			}
		}
		if _, err := os.Stat(target); err == nil {
			t.Error("the wrapped command wrote outside the workspace")
		}
		sc.unchanged()
	})
}

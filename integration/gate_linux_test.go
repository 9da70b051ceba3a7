package integration

import (
	"path/filepath"
	"strings"
	"testing"
)

// One decision, one answer on every surface: a user's ask rule with risk
// 9 puts the command at R4, which is never approvable. forgebox check
// says deny, forgebox run refuses it even with --yes, and an MCP session
// refuses it even when the person answers "once" (it ran there before).
func TestAskAtR4IsRefusedEverywhere(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		judgedEnv(t, e)
		line := "touch M"
		e.write(filepath.Join(e.configHome(), "forgebox", "config.json"),
			`{"forgebox": {"rules": {"ask": [{"pattern": "touch M", "risk": 9}]}}}`)
		if r := e.run([]string{"check", "-c", line}); !strings.Contains(r.stdout+r.stderr, "deny") {
			t.Errorf("forgebox check: exit %d, %q; want a denial", r.code, r.stdout+r.stderr)
		}
		if r := e.run([]string{"run", "--yes", "-c", line}); r.code == 0 || e.ran() {
			t.Errorf("forgebox run --yes: exit %d, ran %v; want a refusal", r.code, e.ran())
		}
		c := e.serveMCP(func(string) string { return "once" })
		var st struct{ Session string }
		if res, text := c.call("shell_start", map[string]any{}, &st); res.IsError || st.Session == "" {
			t.Fatalf("shell_start: %s", text)
		}
		var out shellOut
		c.call("shell_exec", map[string]any{"session": st.Session, "command": line}, &out)
		if out.Ran || e.ran() {
			t.Errorf("shell_exec with the answer once: %+v; want it refused, nothing run", out)
		}
		c.call("run_shell_command", map[string]any{"command": line}, &out)
		if out.Ran || e.ran() {
			t.Errorf("run_shell_command with the answer once: %+v; want it refused, nothing run", out)
		}
	})
}

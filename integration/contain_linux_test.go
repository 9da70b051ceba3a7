package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// containedLine is a program forgebox does not know, which leaves the
// marker: under the default sandbox it can change only the workspace.
const containedLine = "touch M; frobnicate-y --x 2>/dev/null; true"

// The verdict depends on what the run's sandbox lets the command reach: a
// program forgebox does not know runs unasked when the sandbox contains
// it (no network, only the workspace writable), and is asked about when
// the run reaches out (--net host, a --rw path outside the workspace) or
// nothing contains it (the Claude Code hook without --wrap). The reasons
// say which applied. What destroys work in the workspace asks either way.
func TestContainmentDecides(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e = judgedEnv(t, e)
		outside := filepath.Join(e.dir, "outside")
		e.mkdir(outside)
		if c := e.run([]string{"check", "-c", containedLine}); c.code != 0 {
			t.Errorf("check under the default sandbox: exit %d; want 0 (allow), as the run", c.code)
		}
		// Contained: it runs, and the reason says why.
		r := e.run([]string{"run", "--json", "-c", containedLine})
		p := decodePolicy(t, r)
		if !e.ran() || r.code != 0 || !strings.Contains(strings.Join(p.Decision.Reasons, " "), "contained by the sandbox") {
			t.Errorf("contained unknown program: exit %d, %+v; want it run, the reason naming the containment", r.code, p.Decision)
		}
		// Reaching out: asked, and the reason names what reaches out.
		for _, flags := range [][]string{{"--net", "host"}, {"--rw", outside}} {
			r := e.run(append(append([]string{"run", "--json"}, flags...), "-c", containedLine))
			p := decodePolicy(t, r)
			if e.ran() || p.Error == nil || p.Error.Code != "approval_required" || !strings.Contains(strings.Join(p.Decision.Reasons, " "), "not contained: "+strings.Join(flags, " ")) {
				t.Errorf("run %v: exit %d, %+v %+v; want approval_required naming %v", flags, r.code, p.Error, p.Decision, flags)
			}
			// check with the same flags says what that run does.
			if c := e.run(append(append([]string{"check"}, flags...), "-c", containedLine)); c.code != 1 {
				t.Errorf("check %v: exit %d; want 1 (ask), as the run", flags, c.code)
			}
		}
		// What destroys uncommitted work asks without undo, contained or
		// not; with undo (the default) a contained run takes it, and the
		// reason says how to take it back.
		r = e.run([]string{"run", "--json", "--no-undo", "-c", "touch M; git reset --hard 2>/dev/null; true"})
		if p := decodePolicy(t, r); e.ran() || p.Error == nil || p.Error.Code != "approval_required" {
			t.Errorf("git reset --hard under the default sandbox with --no-undo: %+v; want asked", p.Error)
		}
		r = e.run([]string{"run", "--json", "-c", "touch M; git reset --hard 2>/dev/null; true"})
		if p := decodePolicy(t, r); !e.ran() || p.Error != nil || !strings.Contains(strings.Join(p.Decision.Reasons, " "), "forgebox undo can put it back") {
			t.Errorf("git reset --hard under the default sandbox, with undo: %+v %+v; want it run, the reason naming undo", p.Error, p.Decision)
		}
		// The hook: without --wrap Claude Code runs the command itself.
		in, _ := json.Marshal(map[string]any{"session_id": "contain", "cwd": e.ws, "permission_mode": "default",
			"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": map[string]any{"command": containedLine}})
		for _, tc := range []struct {
			args []string
			want string
		}{{[]string{"hook", "claude"}, "ask"}, {[]string{"hook", "claude", "--wrap"}, "allow"}} {
			r := e.run(tc.args, withStdin(string(in)))
			var hook struct {
				Specific struct {
					Decision string `json:"permissionDecision"`
					Reason   string `json:"permissionDecisionReason"`
				} `json:"hookSpecificOutput"`
			}
			json.Unmarshal([]byte(r.stdout), &hook)
			if hook.Specific.Decision != tc.want {
				t.Errorf("%v: %q; want %s", tc.args, r.stdout, tc.want)
			}
			if tc.want == "ask" && !strings.Contains(hook.Specific.Reason, "not contained") {
				t.Errorf("%v: reason %q; want it to say the command is not contained", tc.args, hook.Specific.Reason)
			}
		}
		// The MCP server judges with its own sandbox's settings.
		var out struct {
			Ran      bool            `json:"ran"`
			Approval json.RawMessage `json:"approval_required"`
		}
		e.serveMCP(nil).call("run_shell_command", map[string]any{"command": containedLine}, &out)
		if !out.Ran || !e.ran() {
			t.Errorf("serve (default sandbox): %+v; want it run", out)
		}
		e.serveMCP(nil, "--net", "host").call("run_shell_command", map[string]any{"command": containedLine}, &out)
		if out.Ran || e.ran() || out.Approval == nil {
			t.Errorf("serve --net host: %+v; want approval_required", out)
		}
		os.Remove(e.marker())
	})
}

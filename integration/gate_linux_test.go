package integration

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
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

// gateCase is one decision: a configuration and a line that leaves the
// marker M when it runs.
type gateCase struct {
	name, config, line string
}

// gateCases are decisions of every kind: allowed, asked at each level
// (by the thresholds and by a user's ask rule with every risk), denied by
// a rule with every risk, and allowed by a rule.
func gateCases() []gateCase {
	cases := []gateCase{
		{"allowed", "", "touch M"},
		{"unknown program", "", "frobnicate-x 2>/dev/null; touch M"},
		{"allow rule", `{"allow": [{"pattern": "frobnicate-x *"}]}`, "frobnicate-x 2>/dev/null; touch M"},
	}
	for risk := 0; risk <= 10; risk++ {
		cases = append(cases, gateCase{fmt.Sprintf("ask rule risk %d", risk),
			fmt.Sprintf(`{"ask": [{"pattern": "touch M", "risk": %d}]}`, risk), "touch M"})
	}
	for _, risk := range []int{0, 3, 10} {
		cases = append(cases, gateCase{fmt.Sprintf("deny rule risk %d", risk),
			fmt.Sprintf(`{"deny": [{"pattern": "touch M", "risk": %d}]}`, risk), "touch M"})
	}
	return cases
}

// Every surface gives the same answer for the same decision: forgebox
// check (the reference), forgebox run with and without --yes, forgebox
// policy approve, the Claude Code hook, and the MCP tools with and without
// a person to ask. What check says is allowed runs everywhere; what it
// says asks runs only with an approval, offering the scopes it names;
// what it denies runs nowhere, whatever anyone answers.
func TestOneDecisionOneAnswerEverywhere(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		judgedEnv(t, e)
		config := filepath.Join(e.configHome(), "forgebox", "config.json")
		for i, tc := range gateCases() {
			rules := cmpOr(tc.config, "{}")
			e.write(config, `{"forgebox": {"rules": `+rules+`}}`)
			t.Run(tc.name, func(t *testing.T) {
				var check struct {
					Action string   `json:"action"`
					Level  string   `json:"level"`
					Scopes []string `json:"scopes"`
				}
				r := e.run([]string{"check", "--json", "-c", tc.line})
				if err := json.Unmarshal([]byte(r.stdout), &check); err != nil {
					t.Fatalf("check --json: %v: %q %q", err, r.stdout, r.stderr)
				}
				if check.Level == "R4" && check.Action != "deny" {
					t.Errorf("check: %s at R4; R4 is never approvable", check.Action)
				}
				wantCheck := map[string]int{"allow": 0, "ask": 1, "deny": 2}[check.Action]
				if r.code != wantCheck {
					t.Errorf("check exit %d for %s; want %d", r.code, check.Action, wantCheck)
				}
				e.ran()

				// forgebox run, nobody to ask.
				r = e.run([]string{"run", "--json", "-c", tc.line})
				p := decodePolicy(t, r)
				ran := e.ran()
				switch check.Action {
				case "allow":
					if !ran || r.code != 0 {
						t.Errorf("run: exit %d, ran %v; want it run", r.code, ran)
					}
				case "ask":
					if ran || p.Error == nil || p.Error.Code != "approval_required" || p.Approval == nil || !slices.Equal(p.Approval.Scopes, check.Scopes) {
						t.Errorf("run: exit %d, ran %v, %+v; want approval_required offering %q", r.code, ran, p.Error, check.Scopes)
					}
				case "deny":
					if ran || p.Error == nil || p.Error.Code != "denied" || p.Approval != nil {
						t.Errorf("run: exit %d, ran %v, %+v; want denied", r.code, ran, p.Error)
					}
				}

				// forgebox run --yes: approves an ask, never a denial.
				r = e.run([]string{"run", "--yes", "-c", tc.line})
				if ran := e.ran(); ran != (check.Action != "deny") {
					t.Errorf("run --yes: exit %d, ran %v; check said %s", r.code, ran, check.Action)
				}

				// forgebox policy approve --session: only an ask offering it.
				session := fmt.Sprintf("gate-%d", i)
				r = e.run([]string{"policy", "approve", "--session", session, "-c", tc.line})
				wantApprove := map[string]int{"allow": 0, "deny": 126}[check.Action]
				if check.Action == "ask" {
					wantApprove = 125
					if slices.Contains(check.Scopes, "session") {
						wantApprove = 0
					}
				}
				if r.code != wantApprove {
					t.Errorf("policy approve --session: exit %d %q; want %d (check: %s %q)", r.code, r.stderr, wantApprove, check.Action, check.Scopes)
				}

				// The Claude Code hook with --wrap runs the command in forgebox run:
				// it answers as check decided. (Without --wrap nothing contains
				// the command: TestContainmentDecides.)
				in, _ := json.Marshal(map[string]any{"session_id": "gate-hook", "cwd": e.ws, "permission_mode": "default",
					"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": map[string]any{"command": tc.line}})
				r = e.run([]string{"hook", "claude", "--wrap"}, withStdin(string(in)))
				var hook struct {
					Specific struct {
						Decision string `json:"permissionDecision"`
					} `json:"hookSpecificOutput"`
				}
				if err := json.Unmarshal([]byte(r.stdout), &hook); err != nil || hook.Specific.Decision != check.Action {
					t.Errorf("hook claude: %q (%v); want %s", r.stdout, err, check.Action)
				}
			})
		}

		// The MCP tools: one server per answer, each case in turn.
		for _, answer := range []string{"", "once", "no"} {
			var ask func(string) string
			if answer != "" {
				ask = func(string) string { return answer }
			}
			c := e.serveMCP(ask)
			var st struct{ Session string }
			if res, text := c.call("shell_start", map[string]any{}, &st); res.IsError || st.Session == "" {
				t.Fatalf("shell_start: %s", text)
			}
			for _, tc := range gateCases() {
				e.write(config, `{"forgebox": {"rules": `+cmpOr(tc.config, "{}")+`}}`)
				var check struct{ Action string }
				c.call("check_command", map[string]any{"command": tc.line}, &check)
				want := check.Action == "allow" || check.Action == "ask" && answer == "once"
				for _, tool := range []string{"run_shell_command", "shell_exec"} {
					args := map[string]any{"command": tc.line}
					if tool == "shell_exec" {
						args["session"] = st.Session
					}
					var out shellOut
					c.call(tool, args, &out)
					if ran := e.ran(); ran != want || out.Ran != want {
						t.Errorf("%s, answer %q, %s (check: %s): ran %v (result %v); want %v", tool, answer, tc.name, check.Action, ran, out.Ran, want)
					}
					if !want && check.Action == "ask" && answer == "" && out.Approval == nil {
						t.Errorf("%s without a person to ask, %s: no approval_required in %+v", tool, tc.name, out)
					}
				}
			}
		}
	})
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

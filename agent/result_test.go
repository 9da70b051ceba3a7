package agent

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/forgebox/forgebox/policy"
	"github.com/forgebox/forgebox/sandbox"
)

func TestFromResultIsValidJSON(t *testing.T) {
	r := &sandbox.Result{ExitCode: 3, Duration: 1500 * time.Microsecond,
		Stdout: sandbox.Captured{Head: []byte{0, 0xff, 0xc3, 'x', '"', '\\', '\n'}, Total: 7}}
	b, err := json.Marshal(FromResult(r))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("result is not valid JSON: %v\n%s", err, b)
	}
	for _, k := range []string{"exit_code", "signal", "timed_out", "duration_ms", "stdout", "stderr", "stdout_bytes",
		"stderr_bytes", "stdout_truncated", "stderr_truncated", "enforced", "warnings", "quarantined", "refusals", "attribution"} {
		if _, ok := m[k]; !ok {
			t.Errorf("result lacks %q: %s", k, b)
		}
	}
	if m["signal"] != nil || m["duration_ms"] != 1.5 || !strings.Contains(string(b), `"stdout_base64"`) {
		t.Errorf("result %s: want signal null, duration_ms 1.5 and stdout_base64", b)
	}
}

// The judge's fields are snake_case, absent on an unjudged run, and carry
// the decision and the ways to approve it when the run was refused.
func TestDecisionAndApproval(t *testing.T) {
	b, err := json.Marshal(Failed(Error{Code: "denied", Message: "m"}, 126))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"decision"`) || strings.Contains(string(b), `"approval"`) {
		t.Errorf("unjudged result %s: want no decision or approval", b)
	}
	out := Failed(Error{Code: "approval_required", Message: "m"}, 126)
	out.Decision = &policy.Decision{Action: policy.Ask, Risk: 3, Level: policy.R1, Scopes: []policy.Scope{policy.Once, policy.Session}}
	out.Approval = &Approval{Scopes: out.Decision.Scopes, Rules: []policy.Rule{{Command: "frobnicate --x"}}}
	b, err = json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Decision struct {
			Action string   `json:"action"`
			Level  string   `json:"level"`
			Scopes []string `json:"scopes"`
		} `json:"decision"`
		Approval struct {
			Scopes []string         `json:"scopes"`
			Rules  []map[string]any `json:"rules"`
		} `json:"approval"`
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Decision.Action != "ask" || m.Decision.Level != "R1" || strings.Join(m.Approval.Scopes, ",") != "once,session" ||
		len(m.Approval.Rules) != 1 || m.Approval.Rules[0]["command"] != "frobnicate --x" || m.Error.Code != "approval_required" {
		t.Errorf("refused result %s", b)
	}
}

// history_key is always present: null when the run was not recorded, the
// run's key when it was.
func TestHistoryKey(t *testing.T) {
	for _, tt := range []struct {
		name string
		out  RunResult
		want string
	}{
		{"not recorded", FromResult(&sandbox.Result{}), `"history_key":null`},
		{"refused, not recorded", Failed(Error{Code: "denied"}, 126), `"history_key":null`},
		{"recorded", func() RunResult { r := FromResult(&sandbox.Result{}); id := "1-2-3"; r.HistoryKey = &id; return r }(), `"history_key":"1-2-3"`},
	} {
		b, err := json.Marshal(tt.out)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), tt.want) {
			t.Errorf("%s: result %s lacks %s", tt.name, b, tt.want)
		}
	}
}

// The refusals keep the shape the MCP side reads: snake_case objects, the
// fields a layer does not use left out, and [] rather than null.
func TestFromResultRefusals(t *testing.T) {
	r := &sandbox.Result{Attribution: true, Refusals: []sandbox.Refusal{
		{Layer: sandbox.LayerNetwork, Op: "connect", Target: "192.0.2.1:443", Count: 2},
		{Layer: sandbox.LayerSeccomp, Op: "mount", Rule: "mount", Errno: "EPERM", Count: 1},
	}, RefusalsOmitted: 3}
	b, err := json.Marshal(FromResult(r))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"refusals":[{"layer":"network","op":"connect","target":"192.0.2.1:443","count":2},{"layer":"seccomp","op":"mount","rule":"mount","errno":"EPERM","count":1}]`,
		`"refusals_omitted":3`, `"attribution":true`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("FromResult JSON lacks %s:\n%s", want, b)
		}
	}
	b, _ = json.Marshal(FromResult(&sandbox.Result{}))
	if !strings.Contains(string(b), `"refusals":[]`) || !strings.Contains(string(b), `"attribution":false`) || strings.Contains(string(b), "refusals_omitted") {
		t.Errorf("a run without refusals: %s; want refusals [], attribution false, no refusals_omitted", b)
	}
}

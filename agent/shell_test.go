package agent

import (
	"strings"
	"testing"

	"github.com/forgebox/forgebox/sandbox"
)

// A command that failed after the allowlist refused a host is blamed on
// the network layer, with the host named, whatever the command printed;
// one that succeeded is not blamed at all.
func TestDiagnoseRefusedConnection(t *testing.T) {
	s := &server{c: Config{Workspace: "/ws"}}
	res := RunResult{ExitCode: 56, Stderr: "curl: (56) CONNECT tunnel failed, response 403\nPermission denied",
		Connections: []sandbox.Connection{
			{Host: "ok.test", Port: 443, Decision: "allowed"},
			{Host: "evil.test", Port: 443, Decision: "denied", Code: "not-allowed", Reason: "evil.test is not in the network allowlist",
				Advice: "to allow it, run with --net allow=evil.test"},
		}}
	b := s.diagnose(res, 0)
	if b == nil || b.Layer != "network" || !strings.Contains(b.Message, "evil.test") || !strings.Contains(b.Hint, "--net allow=evil.test") {
		t.Errorf("diagnose = %+v", b)
	}
	res.ExitCode = 0
	if b := s.diagnose(res, 0); b != nil {
		t.Errorf("a successful command was blamed: %+v", b)
	}
	// A host the person denied is not worth asking for.
	res.ExitCode, res.Connections[1].Code = 56, "deny-rule"
	if b := s.diagnose(res, 0); b == nil || strings.Contains(b.Hint, "ask the person") || !strings.Contains(b.Hint, "denied") {
		t.Errorf("diagnose(deny rule) = %+v", b)
	}
	res.ExitCode, res.Connections = 56, res.Connections[:1]
	if b := s.diagnose(res, 0); b != nil && b.Layer == "network" {
		t.Errorf("blamed the network without a refusal: %+v", b)
	}
}

package policy

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestParseConfigExample(t *testing.T) {
	const issue = `{"forgebox": {"rules": {"allow": [{"pattern": "git status", "scope": "always"}, {"pattern": "npm run *", "scope": "session"}],
                          "deny":  [{"pattern": "sudo *", "reason": "Elevated privileges"}, {"pattern": "curl * | sh", "reason": "Remote code execution"}],
                          "ask":   [{"pattern": "git push *", "risk": 5}]},
                "riskThresholds": {"autoApprove": 2, "sessionApprove": 5, "alwaysAsk": 7, "block": 8}}}`
	p, err := ParseConfig("config.json", []byte(issue))
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	if len(p.Allow) != 2 || len(p.Deny) != 2 || len(p.Ask) != 1 {
		t.Fatalf("rules = %d allow, %d deny, %d ask; want 2, 2, 1", len(p.Allow), len(p.Deny), len(p.Ask))
	}
	if p.Allow[0].Scope != Always || p.Allow[1].Scope != Session {
		t.Errorf("scopes = %v, %v; want always, session", p.Allow[0].Scope, p.Allow[1].Scope)
	}
	if p.Allow[0].Source != "config.json" {
		t.Errorf("source = %q", p.Allow[0].Source)
	}
}

func TestParseConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		line, col  int
		want       string
	}{
		{"syntax", "{\n  \"forgebox\": {\n    \"rules\": [,]\n  }\n}", 3, 15, "invalid JSON"},
		{"unknown key", "{\"forgebox\": {\n  \"rulez\": {}\n}}", 2, 3, `unknown key "rulez"`},
		{"unknown rule key", "{\"forgebox\": {\"rules\": {\"allow\": [\n {\"patern\": \"x\"}]}}}", 0, 0, `unknown`},
		{"type", "{\"forgebox\": {\"mode\": 3}}", 1, 23, "want string"},
		{"mode", "{\"forgebox\": {\"mode\": \"open\"}}", 1, 23, "unknown mode"},
		{"thresholds", "{\"forgebox\": {\"riskThresholds\": {\"autoApprove\": 6}}}", 1, 33, "riskThresholds must satisfy"},
		{"bad regex", "{\"forgebox\": {\"rules\": {\"deny\": [{\"pattern\": \"re:(\"}]}}}", 1, 34, "deny rule 1"},
		{"both", "{\"forgebox\": {\"rules\": {\"deny\": [{\"pattern\": \"a\", \"command\": \"b\"}]}}}", 1, 34, "not both"},
		{"scope", "{\"forgebox\": {\"rules\": {\"allow\": [{\"pattern\": \"a\", \"scope\": \"forever\"}]}}}", 0, 0, "unknown scope"},
		{"deny scope", "{\"forgebox\": {\"rules\": {\"deny\": [{\"pattern\": \"a\", \"scope\": \"session\"}]}}}", 1, 34, "allow rules only"},
		{"allow risk", "{\"forgebox\": {\"rules\": {\"allow\": [{\"pattern\": \"a\", \"risk\": 1}]}}}", 1, 35, "ask and deny rules only"},
		{"allow span", "{\"forgebox\": {\"rules\": {\"allow\": [{\"pattern\": \"curl * | sh\"}]}}}", 1, 35, "cannot hold"},
		{"match", "{\"forgebox\": {\"rules\": {\"allow\": [{\"pattern\": \"git status\"},\n {\"pattern\": \"npm run *\", \"match\": [\"npm test\"]}]}}}", 2, 2, `allow rule 2 ("npm run *"): the example "npm test" in match does not match`},
		{"not match", "{\"forgebox\": {\"rules\": {\"deny\": [{\"pattern\": \"git push *\", \"not_match\": [\"git push\"]}]}}}", 1, 34, "in not_match matches"},
		{"trailing", "{} {}", 1, 5, "after the configuration"},
		{"empty", "  \n", 0, 0, "empty"},
		{"truncated", "{\"forgebox\": {", 1, 15, "ends inside"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig("p.json", []byte(tc.data))
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("ParseConfig(%q) = %v, want a ConfigError", tc.data, err)
			}
			if !strings.Contains(ce.Msg, tc.want) || ce.File != "p.json" {
				t.Errorf("ParseConfig(%q) = %v, want it to mention %q", tc.data, err, tc.want)
			}
			if tc.line != 0 && (ce.Line != tc.line || ce.Column != tc.col) {
				t.Errorf("ParseConfig(%q) at %d:%d, want %d:%d (%v)", tc.data, ce.Line, ce.Column, tc.line, tc.col, err)
			}
		})
	}
}

func TestAddRemoveRule(t *testing.T) {
	data, err := AddRule("c.json", nil, "allow", Rule{Command: "npm run build", Scope: Always, Added: "2026-11-23"})
	if err != nil {
		t.Fatalf("AddRule(new) = %v", err)
	}
	data, err = AddRule("c.json", data, "allow", Rule{Command: "npm run build", Scope: Always})
	if err != nil {
		t.Fatalf("AddRule(again) = %v", err)
	}
	data, err = AddRule("c.json", data, "deny", Rule{Pattern: "sudo *", Reason: "no root"})
	if err != nil {
		t.Fatalf("AddRule(deny) = %v", err)
	}
	p, err := ParseConfig("c.json", data)
	if err != nil {
		t.Fatalf("ParseConfig(edited) = %v\n%s", err, data)
	}
	if len(p.Allow) != 1 || p.Allow[0].Command != "npm run build" || p.Allow[0].Scope != Always || len(p.Deny) != 1 {
		t.Fatalf("edited policy = %+v\n%s", p, data)
	}
	out, removed, err := RemoveRules("c.json", data, func(kind string, r Rule) bool { return kind == "allow" && r.Command == "npm run build" })
	if err != nil || len(removed) != 1 {
		t.Fatalf("RemoveRules = %v, %v", removed, err)
	}
	p, err = ParseConfig("c.json", out)
	if err != nil || len(p.Allow) != 0 || len(p.Deny) != 1 {
		t.Fatalf("after RemoveRules: %+v, %v\n%s", p, err, out)
	}
	if _, err := AddRule("c.json", []byte("{bad"), "allow", Rule{Command: "x"}); err == nil {
		t.Errorf("AddRule on a malformed file succeeded; it must refuse")
	}
}

func TestHistorySettings(t *testing.T) {
	p, err := ParseConfig("c.json", []byte(`{"forgebox": {"history": {"enabled": false, "keepDays": 30, "keepRows": 1000}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.History.Enabled == nil || *p.History.Enabled || p.History.KeepDays != 30 || p.History.KeepRows != 1000 {
		t.Errorf("History = %+v", p.History)
	}
	ws, err := ParseConfig("ws.json", []byte(`{"forgebox": {"history": {"enabled": false}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if tight, _ := Default().Tighten(ws); tight.History.Enabled != nil {
		t.Errorf("a workspace configuration turned the history off")
	}
	if _, err := ParseConfig("c.json", []byte(`{"forgebox": {"history": {"keepDays": -1}}}`)); err == nil {
		t.Errorf("a negative keepDays loaded")
	}
	if _, err := ParseConfig("c.json", []byte(`{"forgebox": {"history": {"enable": true}}}`)); err == nil {
		t.Errorf("an unknown history key loaded")
	}
}

func TestNetworkSettings(t *testing.T) {
	// Absolute on the system the test runs on (Windows, under Wine, too).
	hosts := filepath.Join(os.TempDir(), "forgebox-hosts")
	user, err := ParseConfig("c.json", []byte(`{"forgebox": {"network": {"allow": ["registry.npmjs.org", "*.github.com:443"],
		"deny": ["gist.github.com"], "allowPrivate": ["10.0.0.0/8", "192.168.1.5"], "hosts": `+strconv.Quote(hosts)+`}}}`))
	if err != nil {
		t.Fatal(err)
	}
	n := user.Network
	if len(n.Allow) != 2 || len(n.Deny) != 1 || n.Hosts != hosts {
		t.Errorf("Network = %+v", n)
	}
	if p, err := n.Prefixes(); err != nil || len(p) != 2 || p[1].Bits() != 32 {
		t.Errorf("Prefixes = %v, %v", p, err)
	}
	// A workspace may add deny patterns; what it would allow is ignored.
	ws, err := ParseConfig("ws.json", []byte(`{"forgebox": {"network": {"allow": ["evil.test"], "deny": ["api.github.com"],
		"allowPrivate": ["127.0.0.0/8"], "hosts": `+strconv.Quote(filepath.Join(os.TempDir(), "ws-hosts"))+`}}}`))
	if err != nil {
		t.Fatal(err)
	}
	tight, warnings := user.Tighten(ws)
	if got := tight.Network; !slices.Equal(got.Allow, n.Allow) || !slices.Equal(got.Deny, []string{"gist.github.com", "api.github.com"}) ||
		!slices.Equal(got.AllowPrivate, n.AllowPrivate) || got.Hosts != n.Hosts {
		t.Errorf("tightened Network = %+v", got)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "network allow") {
		t.Errorf("warnings = %q", warnings)
	}
	if len(user.Network.Deny) != 1 {
		t.Errorf("Tighten changed the user's policy: %+v", user.Network)
	}
	for _, bad := range []string{
		`{"forgebox": {"network": {"allowPrivate": ["10.0.0.0/40"]}}}`,
		`{"forgebox": {"network": {"allowPrivate": ["localhost"]}}}`,
		`{"forgebox": {"network": {"hosts": "relative/hosts"}}}`,
		`{"forgebox": {"network": {"allow": "example.com"}}}`,
		`{"forgebox": {"network": {"alow": ["example.com"]}}}`,
	} {
		_, err := ParseConfig("c.json", []byte(bad))
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Line == 0 {
			t.Errorf("%s: %v, want a located ConfigError", bad, err)
		}
	}
}

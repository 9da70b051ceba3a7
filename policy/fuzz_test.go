package policy

import (
	"encoding/json"
	"testing"
	"time"
)

// FuzzDecide checks that no line panics, takes long, or yields a decision
// that contradicts its parts. The seed corpus is the agent mix plus
// testdata/fuzz/FuzzDecide.
func FuzzDecide(f *testing.F) {
	for _, l := range agentMix(f) {
		f.Add(l)
	}
	e := New(nil)
	ctx := &Context{Workspace: "/home/u/proj", Cwd: "/home/u/proj", Home: "/home/u"}
	f.Fuzz(func(t *testing.T, line string) {
		start := time.Now()
		d := e.DecideLine(ctx, line)
		// Generous for an instrumented binary on a loaded machine; the
		// benchmark holds the real figure.
		if took := time.Since(start); took > 250*time.Millisecond {
			t.Fatalf("Decide(%d bytes) took %v", len(line), took)
		}
		worst := Allow
		for _, j := range d.Commands {
			worst = max(worst, j.Action)
		}
		if d.Action < worst {
			t.Fatalf("Decide(%q) = %v, but a part says %v", line, d.Action, worst)
		}
		if d.Action == Allow && d.Risk > DefaultThresholds.AutoApprove {
			t.Fatalf("Decide(%q) = allow at risk %d", line, d.Risk)
		}
		if _, err := json.Marshal(d); err != nil {
			t.Fatalf("Decide(%q) does not marshal: %v", line, err)
		}
		a := e.DecideArgv(ctx, []string{"sh", "-c", line})
		if a.Action < d.Action && d.Action == Deny {
			t.Fatalf("sh -c %q = %v, but the line itself is %v", line, a.Action, d.Action)
		}
	})
}

// FuzzParseConfig checks that no configuration panics, and that one that
// loads can be edited and still loads.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"forgebox": {"rules": {"allow": [{"pattern": "git status"}], "deny": [{"pattern": "sudo *"}]}}}`))
	f.Add([]byte(`{"forgebox": {"riskThresholds": {"autoApprove": 1}}}`))
	f.Add([]byte(`{"forgebox": {"rules": {"ask": [{"pattern": "re:^git (push|pull)", "risk": 4, "match": ["git push"]}]}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := ParseConfig("f.json", data); err != nil {
			return
		}
		out, err := AddRule("f.json", data, "allow", Rule{Command: "frob x", Scope: Always})
		if err != nil {
			t.Fatalf("AddRule on a valid file: %v\n%s", err, data)
		}
		if _, err := ParseConfig("f.json", out); err != nil {
			t.Fatalf("an edited file does not load: %v\n%s", err, out)
		}
	})
}

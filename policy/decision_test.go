package policy

import (
	"encoding/json"
	"testing"
)

// A decision forgebox prints (run --json, check --json) reads back as the
// same decision: the MCP server reads forgebox run's.
func TestDecisionRoundTrip(t *testing.T) {
	e := New(Default())
	for _, line := range []string{"ls -la", "git push --force origin main", "rm -rf ~", "frobnicate --x"} {
		d := e.DecideLine(&Context{Workspace: "/w", Cwd: "/w", Home: "/home/u"}, line)
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		var back Decision
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, b)
		}
		again, _ := json.Marshal(&back)
		if string(again) != string(b) {
			t.Errorf("%s: round trip changed the decision:\n%s\n%s", line, b, again)
		}
	}
	var a Action
	if err := json.Unmarshal([]byte(`"maybe"`), &a); err == nil {
		t.Error("an unknown action was accepted")
	}
}

// A home directory inside /tmp is still the home: deleting it is not
// deleting scratch files.
func TestHomeInsideTemp(t *testing.T) {
	e := New(Default())
	ctx := &Context{Workspace: "/tmp/ws", Cwd: "/tmp/ws", Home: "/tmp/home", TempDirs: []string{"/tmp"}}
	for _, line := range []string{"rm -rf ~", "rm -rf /tmp/home", "rm -rf ~/.ssh"} {
		if d := e.DecideLine(ctx, line); d.Action == Allow {
			t.Errorf("%s with HOME=/tmp/home: allowed (%v)", line, d.Reasons)
		}
	}
	if d := e.DecideLine(ctx, "rm -rf /tmp/scratch"); d.Action != Allow {
		t.Errorf("rm -rf /tmp/scratch: %v %v; want allowed (scratch)", d.Action, d.Reasons)
	}
}

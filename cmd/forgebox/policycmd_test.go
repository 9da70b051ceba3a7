package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgebox/forgebox/runner"
)

// approve records what a later judgement honours; revoke takes it back.
func TestPolicyApproveAndRevoke(t *testing.T) {
	c := newCLIEnv(t)
	steps := []struct {
		args []string
		code int
		out  string // in stdout or stderr
	}{
		{[]string{"check", "--session", "s1", "-c", "git tag -d --x"}, 1, ""},
		{[]string{"policy", "approve", "--session", "s1", "-c", "git tag -d --x"}, 0, "approved for session s1"},
		{[]string{"check", "--session", "s1", "-c", "git tag -d --x"}, 0, `allow "git tag -d --x" (session)`},
		{[]string{"check", "--session", "s2", "-c", "git tag -d --x"}, 1, ""},
		{[]string{"check", "-c", "git tag -d --x"}, 1, ""},
		{[]string{"policy", "list", "--session", "s1"}, 0, `command "git tag -d --x" (session; approved`},
		{[]string{"policy", "revoke", "--session", "s1", "git tag -d --x"}, 0, "revoked in session s1"},
		{[]string{"check", "--session", "s1", "-c", "git tag -d --x"}, 1, ""},
		{[]string{"policy", "revoke", "--session", "s1", "--all"}, 1, "no approval to remove"},

		{[]string{"policy", "approve", "--always", "--", "git", "tag", "-d", "--y"}, 0, "approved for good in " + c.userConfig()},
		{[]string{"check", "--", "git", "tag", "-d", "--y"}, 0, ""},
		{[]string{"policy", "revoke", "git tag -d --y"}, 0, "revoked in " + c.userConfig()},
		{[]string{"check", "--", "git", "tag", "-d", "--y"}, 1, ""},

		// R3 is asked every time; a denial is never approved.
		{[]string{"policy", "approve", "--session", "s1", "-c", "sudo git tag -d"}, 125, "cannot be approved for a session"},
		{[]string{"policy", "approve", "--always", "-c", "sudo git tag -d"}, 125, "cannot be approved for good"},
		{[]string{"policy", "approve", "--session", "s1", "-c", "echo x > /dev/sda"}, 126, "is denied"},
		{[]string{"policy", "approve", "-c", "git tag -d"}, 125, "give --session ID"},
		{[]string{"policy", "approve", "--session", "s1", "--always", "-c", "git tag -d"}, 125, "not both"},
		{[]string{"policy", "revoke"}, 125, "give --all or one PATTERN"},
		{[]string{"policy", "revoke", "--all", "x"}, 125, "give --all or one PATTERN"},
		{[]string{"policy", "bogus"}, 125, "unknown subcommand"},
	}
	for _, s := range steps {
		code, out, errOut := cli(t, "", s.args...)
		if code != s.code || !strings.Contains(out+errOut, s.out) {
			t.Fatalf("forgebox %q = %d\nstdout: %s\nstderr: %s\nwant %d and %q", s.args, code, out, errOut, s.code, s.out)
		}
	}
	// FORGEBOX_SESSION names the session too.
	t.Setenv("FORGEBOX_SESSION", "env-session")
	if code, out, errOut := cli(t, "", "policy", "approve", "-c", "git tag -d --z"); code != 0 || !strings.Contains(out, "env-session") {
		t.Errorf("approve with FORGEBOX_SESSION = %d %s %s", code, out, errOut)
	}
	if code, _, _ := cli(t, "", "check", "-c", "git tag -d --z"); code != 0 {
		t.Errorf("check with FORGEBOX_SESSION after approve = %d; want 0", code)
	}
	t.Setenv("FORGEBOX_SESSION", "bad id")
	if code, _, errOut := cli(t, "", "check", "-c", "git tag -d"); code != 125 || !strings.Contains(errOut, "invalid session ID") {
		t.Errorf("check with a bad FORGEBOX_SESSION = %d %q; want 125", code, errOut)
	}
}

// Approvals are neither read from nor written to the workspace: the
// command could write them there.
func TestApprovalsNotInWorkspace(t *testing.T) {
	c := newCLIEnv(t)
	t.Setenv("XDG_STATE_HOME", filepath.Join(c.ws, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(c.ws, "config"))
	code, _, errOut := cli(t, "", "policy", "approve", "--session", "s1", "-c", "git tag -d")
	if code != 125 || !strings.Contains(errOut, "inside the workspace") {
		t.Errorf("approve --session with the store in the workspace = %d %q; want 125", code, errOut)
	}
	code, _, errOut = cli(t, "", "policy", "approve", "--always", "-c", "git tag -d")
	if code != 125 || !strings.Contains(errOut, "inside the workspace") {
		t.Errorf("approve --always with the config in the workspace = %d %q; want 125", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(c.ws, "config")); err == nil {
		t.Errorf("approve wrote into the workspace")
	}
	// A store planted there is not read.
	writeFile(t, runner.NewSessionStore(filepath.Join(c.ws, "state", "forgebox", "sessions"), "s1").Path(),
		`{"session": "s1", "rules": [{"command": "git", "tag", "-d"}]}`)
	code, _, errOut = cli(t, "", "check", "--session", "s1", "-c", "git tag -d")
	if code != 1 || !strings.Contains(errOut, "forgebox: warning: ") {
		t.Errorf("check with a planted store = %d %q; want 1 (ask) and a warning", code, errOut)
	}
	if code, _, _ := cli(t, "", "policy", "revoke", "--session", "s1", "--all"); code != 125 {
		t.Errorf("revoke in a store in the workspace = %d; want 125", code)
	}
}

func TestPolicyList(t *testing.T) {
	c := newCLIEnv(t)
	writeFile(t, c.userConfig(), `{"forgebox": {"rules": {"allow": [{"pattern": "git status"}], "deny": [{"pattern": "sudo *", "reason": "Elevated privileges"}]},
		"riskThresholds": {"autoApprove": 1, "sessionApprove": 4, "alwaysAsk": 6, "block": 7}}}`)
	writeFile(t, filepath.Join(c.ws, ".forgebox", "config.json"), `{"forgebox": {"rules": {"allow": [{"pattern": "rm *"}], "ask": [{"pattern": "git push *"}]}}}`)
	code, out, errOut := cli(t, "", "policy", "list", "--json")
	if code != 0 {
		t.Fatalf("policy list --json = %d %s", code, errOut)
	}
	var l struct {
		Files      []struct{ Path, Role string }
		Mode       string
		Thresholds struct {
			AutoApprove int `json:"auto_approve"`
			Block       int `json:"block"`
		}
		Allow, Deny, Tighter []map[string]any
		Session              any
		Warnings             []string
	}
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatalf("policy list --json: %v\n%s", err, out)
	}
	if len(l.Files) != 2 || l.Files[0].Role != "user" || l.Files[1].Role != "workspace" || l.Mode != "normal" ||
		l.Thresholds.AutoApprove != 1 || l.Thresholds.Block != 7 || len(l.Allow) != 1 || l.Allow[0]["source"] != c.userConfig() ||
		len(l.Deny) != 1 || len(l.Tighter) != 1 || l.Session != nil || len(l.Warnings) != 1 || !strings.Contains(l.Warnings[0], `"rm *"`) {
		t.Errorf("policy list --json = %+v", l)
	}
	code, out, _ = cli(t, "", "policy", "list")
	for _, want := range []string{"(yours)", "tightens only", `"sudo *" (Elevated privileges; from `, "session: none", "warning: "} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("policy list printed:\n%s\nwant %q in it", out, want)
		}
	}
}

func TestPolicyExplain(t *testing.T) {
	newCLIEnv(t)
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"-c", `git tag -d; sudo bash -c "git tag -d --y"`}, []string{"verdict: ask", "3 commands", "looked through to the program bash",
			"nested 1 level deep", "asked every time", "approve it once: add --yes"}},
		// One argument without -- is a line, as in forgebox policy explain 'LINE'.
		{[]string{"echo x > /dev/sda"}, []string{"verdict: deny", "builtin", "nothing makes forgebox run it"}},
		{[]string{"--", "git", "tag", "-d", "a b"}, []string{"command: git tag -d 'a b'", "--session ID -- git tag -d 'a b'", "--always -- git tag -d 'a b'"}},
	}
	for _, tt := range tests {
		code, out, errOut := cli(t, "", append([]string{"policy", "explain"}, tt.args...)...)
		for _, w := range tt.want {
			if code != 0 || !strings.Contains(out, w) {
				t.Errorf("policy explain %q = %d\n%s%s\nwant %q in it", tt.args, code, out, errOut, w)
			}
		}
	}
}

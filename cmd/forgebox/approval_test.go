package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/forgebox/forgebox/policy"
)

func TestValidSessionID(t *testing.T) {
	good := []string{"a", "s1", "build-42", "user@host:1234", "0f8fad5b-d9cb-469f-a165-70867728950e", "a.b_c", strings.Repeat("x", 128)}
	for _, id := range good {
		if err := validSessionID(id); err != nil {
			t.Errorf("validSessionID(%q) = %v; want nil", id, err)
		}
	}
	bad := []string{"", strings.Repeat("x", 129), "a/b", "../x", "a b", "a\n", "$(id)", "é", "a\x00"}
	for _, id := range bad {
		if err := validSessionID(id); err == nil || !strings.Contains(err.Error(), "invalid session ID") {
			t.Errorf("validSessionID(%q) = %v; want a refusal", id, err)
		}
	}
}

func TestSessionStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "forgebox", "sessions")
	s := newSessionStore(dir, "s1")
	if base := filepath.Base(s.path); len(base) != 32+len(".json") || filepath.Dir(s.path) != dir {
		t.Fatalf("store path %s; want 32 hex digits in %s", s.path, dir)
	}
	if other := newSessionStore(dir, "s2"); other.path == s.path {
		t.Fatalf("sessions s1 and s2 share the store %s", s.path)
	}
	if rules, err := s.load(); err != nil || rules != nil {
		t.Fatalf("load() of a missing store = %v, %v; want nothing", rules, err)
	}
	add := []policy.Rule{{Command: "frobnicate --x", Added: "2025-01-02"}, {Pattern: "npm run *", Added: "2025-01-02"}}
	if err := s.add(add); err != nil {
		t.Fatal(err)
	}
	if err := s.add(add[:1]); err != nil { // again: not twice
		t.Fatal(err)
	}
	rules, err := s.load()
	if err != nil || len(rules) != 2 || rules[0].Command != "frobnicate --x" || rules[1].Pattern != "npm run *" || rules[0].Source != "session" {
		t.Fatalf("load() = %+v, %v; want the two approvals once each", rules, err)
	}
	var f map[string]any
	b, _ := os.ReadFile(s.path)
	if err := json.Unmarshal(b, &f); err != nil || f["session"] != "s1" {
		t.Errorf("store content %s: want {\"session\": \"s1\", ...}", b)
	}
	if runtime.GOOS != "windows" {
		for p, want := range map[string]os.FileMode{s.path: 0o600, dir: 0o700, filepath.Dir(dir): 0o700} {
			if st, err := os.Stat(p); err != nil || st.Mode().Perm() != want {
				t.Errorf("mode of %s = %v, %v; want %v", p, st.Mode().Perm(), err, want)
			}
		}
	}
	removed, err := s.remove(func(r policy.Rule) bool { return r.Text() == "npm run *" })
	if err != nil || len(removed) != 1 {
		t.Fatalf("remove() = %v, %v; want one rule", removed, err)
	}
	if rules, _ := s.load(); len(rules) != 1 {
		t.Errorf("after remove: %v; want one rule left", rules)
	}
	if removed, err := s.remove(func(policy.Rule) bool { return false }); err != nil || removed != nil {
		t.Errorf("remove(nothing) = %v, %v", removed, err)
	}
	// A store whose content names another session is refused.
	writeFile(t, newSessionStore(dir, "s3").path, `{"session": "s4", "rules": []}`)
	if _, err := newSessionStore(dir, "s3").load(); err == nil || !strings.Contains(err.Error(), "belongs to session") {
		t.Errorf("load() of another session's store = %v; want a refusal", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "new", "file.json")
	if err := writeFileAtomic(p, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomic(p, []byte("two")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "two" {
		t.Errorf("content %q; want two", b)
	}
	// The rename fails (a directory is in the way): the temporary file
	// goes, the directory stays.
	blocked := filepath.Join(dir, "blocked")
	if err := os.MkdirAll(filepath.Join(blocked, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomic(blocked, []byte("x")); err == nil {
		t.Errorf("writeFileAtomic over a directory = nil; want an error")
	}
	for _, d := range []string{dir, filepath.Join(dir, "new")} {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".tmp") {
				t.Errorf("temporary file %s left behind", e.Name())
			}
		}
	}
}

func TestRecordAndRevokeAlways(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cfg", "forgebox", "config.json")
	rules := []policy.Rule{{Command: "frobnicate --x", Added: "2025-01-02"}}
	if err := recordAlways(p, rules); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	pol, err := policy.ParseConfig(p, b)
	if err != nil || len(pol.Allow) != 1 || pol.Allow[0].Command != "frobnicate --x" || pol.Allow[0].Added != "2025-01-02" || pol.Allow[0].Scope != policy.Always {
		t.Fatalf("config after recordAlways = %s (%v); want one allow rule", b, err)
	}
	// A rule the person wrote (no "added") is not an approval: revoke
	// leaves it.
	mine := `{"forgebox": {"rules": {"allow": [{"command": "frobnicate --x"}, {"command": "frobnicate --y", "added": "2025-01-03"}]}}}`
	writeFile(t, p, mine)
	removed, err := revokeAlways(p, func(policy.Rule) bool { return true })
	if err != nil || len(removed) != 1 || removed[0].Command != "frobnicate --y" {
		t.Fatalf("revokeAlways(all) = %v, %v; want only the approved rule", removed, err)
	}
	b, _ = os.ReadFile(p)
	if !strings.Contains(string(b), `"frobnicate --x"`) || strings.Contains(string(b), "frobnicate --y") {
		t.Errorf("config after revoke: %s", b)
	}
	if removed, err := revokeAlways(filepath.Join(t.TempDir(), "missing.json"), func(policy.Rule) bool { return true }); err != nil || removed != nil {
		t.Errorf("revokeAlways(missing file) = %v, %v", removed, err)
	}
	writeFile(t, p, "{oops")
	if err := recordAlways(p, rules); err == nil {
		t.Errorf("recordAlways into a malformed file = nil; want an error")
	}
}

func TestParseAnswer(t *testing.T) {
	all := []policy.Scope{policy.Once, policy.Session, policy.Always}
	once := []policy.Scope{policy.Once}
	tests := []struct {
		answer  string
		offered []policy.Scope
		scope   policy.Scope
		yes     bool
		err     bool
	}{
		{"", all, 0, false, false},
		{"n", all, 0, false, false},
		{" No ", all, 0, false, false},
		{"o", all, policy.Once, true, false},
		{"once", all, policy.Once, true, false},
		{"y", once, policy.Once, true, false},
		{"s", all, policy.Session, true, false},
		{"S\r", all, policy.Session, true, false},
		{"a", all, policy.Always, true, false},
		{"always", all, policy.Always, true, false},
		{"s", once, 0, false, true},
		{"a", once, 0, false, true},
		{"maybe", all, 0, false, true},
	}
	for _, tt := range tests {
		s, yes, err := parseAnswer(tt.answer, tt.offered)
		if s != tt.scope || yes != tt.yes || (err != nil) != tt.err {
			t.Errorf("parseAnswer(%q, %v) = %v, %v, %v; want %v, %v, error %v", tt.answer, tt.offered, s, yes, err, tt.scope, tt.yes, tt.err)
		}
	}
	if _, _, err := parseAnswer("s", once); !errors.Is(err, errNotOffered) {
		t.Errorf("parseAnswer(s) with once offered = %v; want errNotOffered", err)
	}
}

// oneByte hands out its bytes one read at a time, as a terminal does a
// line: readAnswer must not read past the line.
type oneByte struct{ r io.Reader }

func (o oneByte) Read(p []byte) (int, error) { return o.r.Read(p[:1]) }

func TestReadAnswer(t *testing.T) {
	r := strings.NewReader("s\nrest for the command")
	got, ok := readAnswer(oneByte{r})
	rest, _ := io.ReadAll(r)
	if got != "s" || !ok || string(rest) != "rest for the command" {
		t.Errorf("readAnswer = %q, %v, left %q; want s, true and the rest unread", got, ok, rest)
	}
	if got, ok := readAnswer(strings.NewReader("")); ok {
		t.Errorf("readAnswer(EOF) = %q, true; want false", got)
	}
	long := strings.Repeat("x", 10000) + "\n"
	if got, ok := readAnswer(strings.NewReader(long)); !ok || len(got) != maxAnswer {
		t.Errorf("readAnswer(long line) = %d bytes, %v; want %d", len(got), ok, maxAnswer)
	}
}

func TestAskPerson(t *testing.T) {
	d := &policy.Decision{Action: policy.Ask, Risk: 3, Level: policy.R1, Category: policy.Caution,
		Scopes:   []policy.Scope{policy.Once, policy.Session, policy.Always},
		Commands: []policy.Judgement{{Command: "frobnicate --x", Action: policy.Ask, Reasons: []string{"forgebox does not know what frobnicate does"}}}}
	offered := []policy.Scope{policy.Once, policy.Always}
	tests := []struct {
		input string
		scope policy.Scope
		yes   bool
	}{
		{"o\n", policy.Once, true},
		{"\n", 0, false},
		{"", 0, false},
		{"s\na\n", policy.Always, true}, // session is not offered: asked again
		{"x\nx\nx\no\n", 0, false},      // three wrong answers are a no
	}
	for _, tt := range tests {
		var out bytes.Buffer
		s, yes := askPerson(strings.NewReader(tt.input), &out, "frobnicate --x", d, offered, "a note")
		if s != tt.scope || yes != tt.yes {
			t.Errorf("askPerson(%q) = %v, %v; want %v, %v\n%s", tt.input, s, yes, tt.scope, tt.yes, out.String())
		}
		for _, want := range []string{"frobnicate --x", "risk 3, R1", "forgebox does not know what frobnicate does", "[o]nce, [a]lways, [N]o", "a note"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("askPerson(%q) printed %q; want %q in it", tt.input, out.String(), want)
			}
		}
	}
}

func TestApprovalHint(t *testing.T) {
	all := &policy.Decision{Action: policy.Ask, Scopes: []policy.Scope{policy.Once, policy.Session, policy.Always}}
	once := &policy.Decision{Action: policy.Ask, Scopes: []policy.Scope{policy.Once}}
	tests := []struct {
		d       *policy.Decision
		line    string
		argv    []string
		session string
		want    []string
		not     []string
	}{
		{all, "frobnicate 'a b'", nil, "s1", []string{"--yes", `forgebox policy approve --session s1 -c 'frobnicate '\''a b'\'''`, "--always -c"}, nil},
		{all, "", []string{"frobnicate", "a b"}, "", []string{"--session ID -- frobnicate 'a b'"}, nil},
		{once, "sudo x", nil, "s1", []string{"--yes", "asked every time"}, []string{"--session", "--always"}},
	}
	for _, tt := range tests {
		h := approvalHint(tt.d, tt.line, tt.argv, tt.session)
		for _, w := range tt.want {
			if !strings.Contains(h, w) {
				t.Errorf("approvalHint(%q, %q) = %q; want %q in it", tt.line, tt.argv, h, w)
			}
		}
		for _, w := range tt.not {
			if strings.Contains(h, w) {
				t.Errorf("approvalHint(%q, %q) = %q; want no %q", tt.line, tt.argv, h, w)
			}
		}
	}
}

// forgebox run decides before anything starts: a denial and an ask without
// a terminal end the run with 126 and a result that says why and how to
// approve.
func TestRunRefusals(t *testing.T) {
	c := newCLIEnv(t)
	tests := []struct {
		args  []string
		code  string
		hint  []string
		rules int
	}{
		{[]string{"run", "--json", "-c", "touch M; echo x > /dev/sda"}, "denied", []string{"whatever the rules"}, 0},
		{[]string{"run", "--json", "--yes", "-c", "echo x > /dev/sda"}, "denied", nil, 0},
		{[]string{"run", "--json", "--session", "s9", "-c", "frobnicate --x"}, "approval_required",
			[]string{"--yes", "forgebox policy approve --session s9 -c 'frobnicate --x'", "--always -c 'frobnicate --x'"}, 1},
		{[]string{"run", "--json", "--", "sudo", "frobnicate"}, "approval_required", []string{"--yes", "asked every time"}, 1},
	}
	for _, tt := range tests {
		code, out, errOut := cli(t, "", tt.args...)
		var r struct {
			ExitCode int `json:"exit_code"`
			Error    struct {
				Code, Message, Hint string
			} `json:"error"`
			Decision *struct {
				Action string `json:"action"`
			} `json:"decision"`
			Approval *struct {
				Scopes []string         `json:"scopes"`
				Rules  []map[string]any `json:"rules"`
			} `json:"approval"`
			Workspace string `json:"workspace"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("forgebox %q: stdout %q: %v", tt.args, out, err)
		}
		if code != 126 || r.ExitCode != 126 || r.Error.Code != tt.code || r.Decision == nil || r.Workspace != c.ws {
			t.Errorf("forgebox %q = %d, %+v; want 126 and %s with a decision", tt.args, code, r, tt.code)
		}
		if !strings.HasPrefix(errOut, "forgebox: ") {
			t.Errorf("forgebox %q: stderr %q", tt.args, errOut)
		}
		for _, h := range tt.hint {
			if !strings.Contains(r.Error.Hint, h) {
				t.Errorf("forgebox %q: hint %q; want %q in it", tt.args, r.Error.Hint, h)
			}
		}
		if tt.code == "approval_required" && (r.Approval == nil || len(r.Approval.Rules) != tt.rules || len(r.Approval.Scopes) == 0) {
			t.Errorf("forgebox %q: approval %+v", tt.args, r.Approval)
		}
	}
	if code, _, errOut := cli(t, "", "run", "--no-policy", "--yes", "--", "true"); code != 125 || !strings.Contains(errOut, "--no-policy") {
		t.Errorf("run --no-policy --yes = %d %q; want 125", code, errOut)
	}
	// Without --json the reason is on stderr, with the rule.
	if code, out, errOut := cli(t, "", "run", "-c", "echo x > /dev/sda"); code != 126 || out != "" || !strings.Contains(errOut, "forgebox: denied: ") || !strings.Contains(errOut, "rule: builtin") {
		t.Errorf("run of a denied line = %d, %q, %q", code, out, errOut)
	}
}

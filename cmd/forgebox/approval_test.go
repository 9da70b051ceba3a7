package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/forgebox/forgebox/policy"
)

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
		Commands: []policy.Judgement{{Command: "git tag -d --x", Action: policy.Ask, Reasons: []string{"forgebox does not know what git tag -d does"}}}}
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
		s, yes := askPerson(strings.NewReader(tt.input), &out, "git tag -d --x", d, offered, "a note")
		if s != tt.scope || yes != tt.yes {
			t.Errorf("askPerson(%q) = %v, %v; want %v, %v\n%s", tt.input, s, yes, tt.scope, tt.yes, out.String())
		}
		for _, want := range []string{"git tag -d --x", "risk 3, R1", "forgebox does not know what git tag -d does", "[o]nce, [a]lways, [N]o", "a note"} {
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
		{all, "git tag -d 'a b'", nil, "s1", []string{"--yes", `forgebox policy approve --session s1 -c 'git tag -d '\''a b'\'''`, "--always -c"}, nil},
		{all, "", []string{"git", "tag", "-d", "a b"}, "", []string{"--session ID -- git tag -d 'a b'"}, nil},
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
		{[]string{"run", "--json", "--session", "s9", "-c", "git tag -d --x"}, "approval_required",
			[]string{"--yes", "forgebox policy approve --session s9 -c 'git tag -d --x'", "--always -c 'git tag -d --x'"}, 1},
		{[]string{"run", "--json", "--", "sudo", "git", "tag", "-d"}, "approval_required", []string{"--yes", "asked every time"}, 1},
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

package integration

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The judge decides before anything starts. These scenarios run forgebox
// without --no-policy, each with its own XDG directories.

// askLine needs an approval (git tag -d deletes a tag in the workspace's
// repository, which the sandbox does not contain) and leaves a marker when
// it runs.
const askLine = "touch M; git tag -d fb-x 2>/dev/null; true"

// denyLine would leave the marker first, then write to a disk.
const denyLine = "touch M; echo x > /dev/sda"

// judgedEnv is a scenario in which forgebox run judges the commands.
func judgedEnv(t *testing.T, e *env) *env {
	t.Helper()
	e.judged = true
	return e
}

func (e *env) marker() string { return filepath.Join(e.ws, "M") }

// ran reports whether the line left its marker, and removes it.
func (e *env) ran() bool {
	e.t.Helper()
	_, err := os.Stat(e.marker())
	os.Remove(e.marker())
	return err == nil
}

// policyResult is the part of forgebox run --json the judge adds.
type policyResult struct {
	ExitCode int `json:"exit_code"`
	Error    *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Hint    string `json:"hint"`
	} `json:"error"`
	Decision *struct {
		Action  string   `json:"action"`
		Level   string   `json:"level"`
		Reasons []string `json:"reasons"`
		Rule    *struct {
			Kind   string `json:"kind"`
			Source string `json:"source"`
		} `json:"rule"`
	} `json:"decision"`
	Approval *struct {
		Scopes []string `json:"scopes"`
		Rules  []struct {
			Command string `json:"command"`
			Pattern string `json:"pattern"`
		} `json:"rules"`
	} `json:"approval"`
	Warnings []string `json:"warnings"`
}

func decodePolicy(t *testing.T, r result) policyResult {
	t.Helper()
	decodeResult(t, r.stdout) // exactly one object
	var p policyResult
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
		t.Fatalf("forgebox run --json: %v\n%s", err, r.stdout)
	}
	return p
}

// A denied line starts nothing: not even the harmless command before the
// dangerous one. --yes does not change that.
func TestPolicyDenyStartsNothing(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		judgedEnv(t, e)
		for _, args := range [][]string{{"run", "-c", denyLine}, {"run", "--yes", "-c", denyLine},
			{"run", "--yes", "-c", "touch M; mkfs.ext4 /dev/sda"}, {"run", "--yes", "-c", ":(){ :|:& };:"}} {
			r := e.run(args)
			if ran := e.ran(); r.code != 126 || ran {
				t.Errorf("forgebox %q: exit %d, marker left %v; want 126 and nothing run\nstderr: %s", args, r.code, ran, r.stderr)
			}
			forgeboxOnly(t, r.stderr)
			if !strings.Contains(r.stderr, "forgebox: denied: ") || !strings.Contains(r.stderr, "rule: builtin") {
				t.Errorf("forgebox %q: stderr %q; want the denial with its rule", args, r.stderr)
			}
		}
		r := e.run([]string{"run", "--json", "-c", denyLine})
		p := decodePolicy(t, r)
		if r.code != 126 || p.ExitCode != 126 || p.Error == nil || p.Error.Code != "denied" || p.Decision == nil || p.Decision.Action != "deny" || p.Decision.Level != "R4" {
			t.Errorf("run --json of a denied line: exit %d, %s", r.code, r.stdout)
		}
		if e.ran() {
			t.Errorf("run --json of a denied line left its marker")
		}
	})
}

// Without a terminal, a line that needs approval does not run: exit 126,
// approval_required and the exact ways to approve it. --yes approves it once.
func TestPolicyAskWithoutTerminal(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		judgedEnv(t, e)
		r := e.run([]string{"run", "--json", "-c", askLine})
		p := decodePolicy(t, r)
		if r.code != 126 || p.Error == nil || p.Error.Code != "approval_required" || e.ran() {
			t.Fatalf("run --json of a line that asks: exit %d, %s; want 126, approval_required, nothing run", r.code, r.stdout)
		}
		if p.Decision == nil || p.Decision.Action != "ask" || p.Approval == nil || strings.Join(p.Approval.Scopes, ",") != "once,session,always" {
			t.Errorf("decision %+v, approval %+v; want ask offering once, session, always", p.Decision, p.Approval)
		}
		found := false
		for _, rule := range p.Approval.Rules {
			found = found || strings.HasPrefix(rule.Command, "git tag -d fb-x")
		}
		if !found {
			t.Errorf("approval.rules = %+v; want the exact command git tag -d fb-x", p.Approval.Rules)
		}
		for _, w := range []string{"--yes", "forgebox policy approve --session ID -c '" + askLine + "'", "forgebox policy approve --always -c"} {
			if !strings.Contains(p.Error.Hint, w) {
				t.Errorf("hint %q; want %q in it", p.Error.Hint, w)
			}
		}
		if !strings.Contains(p.Error.Message, "git tag -d") || !strings.Contains(p.Error.Message, "deletes a tag") {
			t.Errorf("message %q; want the command and the reason", p.Error.Message)
		}

		r = e.run([]string{"run", "-c", askLine})
		if r.code != 126 || e.ran() || !strings.Contains(r.stderr, "approval required") {
			t.Errorf("run of a line that asks: exit %d, stderr %q; want 126 and approval required", r.code, r.stderr)
		}
		forgeboxOnly(t, r.stderr)

		r = e.run([]string{"run", "--yes", "--json", "-c", askLine})
		p = decodePolicy(t, r)
		if r.code != 0 || !e.ran() || p.Error != nil || p.Decision == nil || p.Decision.Action != "ask" {
			t.Errorf("run --yes: exit %d, %s; want the line to run, with its decision", r.code, r.stdout)
		}
		// --yes approves a line asked every time (R3) as well, once.
		r = e.run([]string{"run", "--yes", "--json", "-c", "sudo -n frobnicate 2>/dev/null; touch M"})
		p = decodePolicy(t, r)
		if !e.ran() || p.Decision == nil || p.Decision.Level != "R3" {
			t.Errorf("run --yes of an R3 line: exit %d, %s; want it to run", r.code, r.stdout)
		}
	})
}

// An approval for the session lets the line run in that session only.
func TestPolicySessionApproval(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		judgedEnv(t, e)
		r := e.run([]string{"policy", "approve", "--session", "task-1", "-c", askLine})
		if r.code != 0 {
			t.Fatalf("policy approve --session: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if r := e.run([]string{"run", "--session", "task-1", "-c", askLine}); r.code != 0 || !e.ran() {
			t.Errorf("run --session task-1 after approve: exit %d, stderr %q; want it to run", r.code, r.stderr)
		}
		if r := e.run([]string{"run", "--session", "task-2", "-c", askLine}); r.code != 126 || e.ran() {
			t.Errorf("run --session task-2: exit %d; want 126 (another session)", r.code)
		}
		e.extra = append(e.extra, "FORGEBOX_SESSION=task-1")
		if r := e.run([]string{"run", "-c", askLine}); r.code != 0 || !e.ran() {
			t.Errorf("run with FORGEBOX_SESSION=task-1: exit %d, stderr %q; want it to run", r.code, r.stderr)
		}
		stores, _ := filepath.Glob(filepath.Join(e.stateHome(), "forgebox", "sessions", "*.json"))
		if len(stores) != 1 {
			t.Fatalf("session stores %v; want one", stores)
		}
		if st, err := os.Stat(stores[0]); err != nil || st.Mode().Perm() != 0o600 || int(st.Sys().(*syscall.Stat_t).Uid) != e.m.uid {
			t.Errorf("session store %s: %v, %v; want mode 0600, owned by uid %d", stores[0], st.Mode(), err, e.m.uid)
		}
		if r := e.run([]string{"policy", "revoke", "--session", "task-1", "--all"}); r.code != 0 {
			t.Errorf("policy revoke --session: exit %d %s", r.code, r.stderr)
		}
		if r := e.run([]string{"run", "-c", askLine}); r.code != 126 || e.ran() {
			t.Errorf("run after revoke: exit %d; want 126", r.code)
		}
		// A line asked every time cannot be approved for a session.
		if r := e.run([]string{"policy", "approve", "--session", "task-1", "-c", "sudo frobnicate"}); r.code != 125 {
			t.Errorf("policy approve --session of an R3 line: exit %d; want 125", r.code)
		}
		if r := e.run([]string{"policy", "approve", "--session", "task-1", "-c", denyLine}); r.code != 126 {
			t.Errorf("policy approve of a denied line: exit %d; want 126", r.code)
		}
	})
}

// An approval for good is an allow rule in the user's configuration
// file; revoke removes it.
func TestPolicyAlwaysApproval(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		judgedEnv(t, e)
		cfg := filepath.Join(e.configHome(), "forgebox", "config.json")
		if r := e.run([]string{"policy", "approve", "--always", "-c", askLine}); r.code != 0 {
			t.Fatalf("policy approve --always: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		b, err := os.ReadFile(cfg)
		var doc struct {
			Forgebox struct {
				Rules struct {
					Allow []struct {
						Command string `json:"command"`
						Scope   string `json:"scope"`
						Added   string `json:"added"`
					} `json:"allow"`
				} `json:"rules"`
			} `json:"forgebox"`
		}
		if err != nil || json.Unmarshal(b, &doc) != nil {
			t.Fatalf("config after approve --always: %v\n%s", err, b)
		}
		found := false
		for _, a := range doc.Forgebox.Rules.Allow {
			if strings.HasPrefix(a.Command, "git tag -d fb-x") && a.Scope == "always" && a.Added == time.Now().Format(time.DateOnly) {
				found = true
			}
		}
		if !found {
			t.Errorf("config %s; want an allow rule for the exact command git tag -d fb-x, scope always, added today", b)
		}
		st, err := os.Stat(cfg)
		dir, _ := os.Stat(filepath.Dir(cfg))
		if err != nil || st.Mode().Perm() != 0o600 || dir.Mode().Perm() != 0o700 || int(st.Sys().(*syscall.Stat_t).Uid) != e.m.uid {
			t.Errorf("config %v, directory %v; want 0600 in 0700, owned by uid %d", st.Mode(), dir.Mode(), e.m.uid)
		}
		if r := e.run([]string{"run", "-c", askLine}); r.code != 0 || !e.ran() {
			t.Errorf("run after approve --always: exit %d, stderr %q; want it to run", r.code, r.stderr)
		}
		if r := e.run([]string{"policy", "revoke", "--all"}); r.code != 0 || !strings.Contains(r.stdout, "git tag -d fb-x") {
			t.Errorf("policy revoke --all: exit %d %q %q", r.code, r.stdout, r.stderr)
		}
		if b, _ := os.ReadFile(cfg); strings.Contains(string(b), "git tag -d fb-x") {
			t.Errorf("config after revoke still holds the approval:\n%s", b)
		}
		if r := e.run([]string{"run", "-c", askLine}); r.code != 126 || e.ran() {
			t.Errorf("run after revoke: exit %d; want 126", r.code)
		}
		if r := e.run([]string{"policy", "revoke", "--all"}); r.code != 1 {
			t.Errorf("policy revoke with nothing to revoke: exit %d; want 1", r.code)
		}
	})
}

// A configuration in the workspace can only tighten: its allow rules are
// ignored with a warning, its deny rules apply.
func TestPolicyWorkspaceConfigTightensOnly(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		judgedEnv(t, e)
		e.write(filepath.Join(e.ws, ".forgebox", "config.json"),
			`{"forgebox": {"rules": {"allow": [{"pattern": "frobnicate *"}, {"pattern": "touch *"}], "deny": [{"command": "touch denied", "reason": "the project says no"}]}}}`)
		r := e.run([]string{"run", "--json", "-c", askLine})
		p := decodePolicy(t, r)
		if r.code != 126 || p.Error == nil || p.Error.Code != "approval_required" || e.ran() {
			t.Errorf("workspace allow rule: exit %d, %s; want approval_required", r.code, r.stdout)
		}
		if !strings.Contains(r.stderr, "forgebox: warning: ") || !strings.Contains(strings.Join(p.Warnings, "\n"), "ignored") {
			t.Errorf("stderr %q, warnings %q; want a warning that the allow rule is ignored", r.stderr, p.Warnings)
		}
		r = e.run([]string{"run", "--json", "--yes", "-c", "touch denied"})
		p = decodePolicy(t, r)
		if r.code != 126 || p.Error == nil || p.Error.Code != "denied" || p.Decision.Rule == nil || p.Decision.Rule.Kind != "deny" {
			t.Errorf("workspace deny rule: exit %d, %s; want denied by the deny rule", r.code, r.stdout)
		}
		if _, err := os.Stat(filepath.Join(e.ws, "denied")); err == nil {
			t.Errorf("the denied command ran")
		}
	})
}

// A workspace configuration planted as a symbolic link, a FIFO or a link
// to a device is refused at once, never waited on nor ignored.
func TestPolicyWorkspaceConfigNoHang(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		judgedEnv(t, e)
		cfg := filepath.Join(e.ws, ".forgebox", "config.json")
		e.mkdir(filepath.Dir(cfg))
		for _, c := range []struct {
			name  string
			plant func() error
		}{
			{"symlink to /dev/zero", func() error { return os.Symlink("/dev/zero", cfg) }},
			{"symlink to a file", func() error {
				e.write(filepath.Join(e.outside, "c.json"), "{}")
				return os.Symlink(filepath.Join(e.outside, "c.json"), cfg)
			}},
			{"fifo", func() error { return syscall.Mkfifo(cfg, 0o644) }},
		} {
			os.Remove(cfg)
			if err := c.plant(); err != nil {
				t.Fatal(err)
			}
			e.chown(cfg)
			r := e.start([]string{"run", "--yes", "-c", askLine})
			res := r.wait(t, 20*time.Second)
			if res.code != 125 || !strings.Contains(res.stderr, cfg) || e.ran() {
				t.Errorf("%s as the workspace configuration: exit %d, stderr %q; want 125 naming it, nothing run", c.name, res.code, res.stderr)
			}
		}
	})
}

// A malformed configuration is an error naming the file, line and
// column: never ignored.
func TestPolicyMalformedConfig(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		judgedEnv(t, e)
		user := filepath.Join(e.configHome(), "forgebox", "config.json")
		e.write(user, "{\n  \"forgebox\": {\"rules\": {\"allow\": [{\"pattern\": \"touch *\",}]}}}\n")
		for _, args := range [][]string{{"run", "--yes", "-c", askLine}, {"check", "-c", "touch M"}, {"policy", "list"}} {
			r := e.run(args)
			if r.code != 125 || !strings.Contains(r.stderr, user+":2:") || e.ran() {
				t.Errorf("forgebox %q with a malformed config: exit %d, stderr %q; want 125 and %s:2:COL", args, r.code, r.stderr, user)
			}
		}
		r := e.run([]string{"run", "--json", "-c", askLine})
		if p := decodePolicy(t, r); r.code != 125 || p.Error == nil || p.Error.Code != "invalid" {
			t.Errorf("run --json with a malformed config: exit %d, %s", r.code, r.stdout)
		}
		os.Remove(user)
		ws := filepath.Join(e.ws, ".forgebox", "config.json")
		e.write(ws, `{"forgebox": {"mode": "lax"}}`)
		if r := e.run([]string{"run", "--yes", "-c", askLine}); r.code != 125 || !strings.Contains(r.stderr, ws+":1:") || e.ran() {
			t.Errorf("malformed workspace config: exit %d, stderr %q; want 125 and %s:1:COL", r.code, r.stderr, ws)
		}
		if r := e.run([]string{"run", "--policy", filepath.Join(e.dir, "missing.json"), "--yes", "-c", askLine}); r.code != 125 || e.ran() {
			t.Errorf("missing --policy file: exit %d; want 125", r.code)
		}
	})
}

// At a terminal, forgebox asks, and does what the answer says.
func TestPolicyPrompt(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		judgedEnv(t, e)
		for _, c := range []struct {
			name, answer string
			args         []string
			choices      string
			code         int
			ran          bool
		}{
			{"once", "o", nil, "[o]nce, [a]lways, [N]o", 0, true},
			{"no", "n", nil, "[o]nce, [a]lways, [N]o", 126, false},
			{"default", "", nil, "[o]nce, [a]lways, [N]o", 126, false},
			{"session", "s", []string{"--session", "pty-1"}, "[o]nce, [s]ession, [a]lways, [N]o", 0, true},
		} {
			t.Run(c.name, func(t *testing.T) {
				tm := openTerminal(t, 24, 80)
				args := append(append([]string{"run"}, c.args...), "-c", askLine)
				r := e.start(args, onTerminal(tm, true))
				tm.waitText(t, r, "Run it? ")
				if !strings.Contains(tm.text(), c.choices) || !strings.Contains(tm.text(), "git tag -d deletes a tag") {
					t.Errorf("the prompt shows %q; want %q and the reason", tm.text(), c.choices)
				}
				tm.master.Write([]byte(c.answer + "\n"))
				res := r.wait(t, 20*time.Second)
				if res.code != c.code || e.ran() != c.ran {
					t.Errorf("answer %q: exit %d; want %d, ran %v\nterminal: %q", c.answer, res.code, c.code, c.ran, tm.text())
				}
			})
		}
		// The session answer was recorded: the same line runs in that
		// session without a terminal.
		if r := e.run([]string{"run", "--session", "pty-1", "-c", askLine}); r.code != 0 || !e.ran() {
			t.Errorf("run --session pty-1 after answering s: exit %d, stderr %q", r.code, r.stderr)
		}
	})
}

// check judges without running: its exit status is the verdict, and
// --batch answers every line, however malformed.
func TestCheckPolicy(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		judgedEnv(t, e)
		e.write(filepath.Join(e.configHome(), "forgebox", "config.json"), `{"forgebox": {"rules": {"allow": [{"command": "touch M"}]}}}`)
		for _, c := range []struct {
			args []string
			code int
		}{
			{[]string{"check", "-c", "touch M"}, 0},
			{[]string{"check", "-c", askLine}, 1},
			{[]string{"check", "--", "git", "tag", "-d", "fb-x"}, 1},
			{[]string{"check", "-c", denyLine}, 2},
			{[]string{"check", "--json", "-c", denyLine}, 2},
			{[]string{"check", "--bogus"}, 125},
		} {
			if r := e.run(c.args); r.code != c.code || e.ran() {
				t.Errorf("forgebox %q: exit %d; want %d, and nothing run\n%s%s", c.args, r.code, c.code, r.stdout, r.stderr)
			}
		}
		if r := e.run([]string{"run", "-c", "touch M"}); r.code != 0 || !e.ran() {
			t.Errorf("run of a line a config rule allows: exit %d, stderr %q", r.code, r.stderr)
		}

		var in strings.Builder
		for i := range 1000 {
			switch i {
			case 10:
				in.WriteString("\xff\xfe\xfd bad utf-8\n")
			case 20:
				in.WriteString(strings.Repeat("y", 100<<10) + "\n")
			case 30:
				in.WriteString(denyLine + "\n")
			default:
				in.WriteString("git tag -d fb-x\n")
			}
		}
		r := e.run([]string{"check", "--batch"}, withStdin(in.String()))
		lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
		if r.code != 0 || len(lines) != 1000 {
			t.Fatalf("check --batch of 1000 lines: exit %d, %d lines\nstderr: %s", r.code, len(lines), r.stderr)
		}
		for i, l := range lines {
			var d struct {
				Action string `json:"action"`
			}
			want := "ask"
			if i == 30 {
				want = "deny"
			}
			if err := json.Unmarshal([]byte(l), &d); err != nil || d.Action != want {
				t.Errorf("line %d: %.200s (%v); want action %s", i, l, err, want)
			}
		}
		if e.ran() {
			t.Errorf("check ran a command")
		}
	})
}

// The other scenarios pass --no-policy: it skips the judge, and the
// sandbox still applies.
func TestPolicySkippedWithNoPolicy(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		judgedEnv(t, e)
		r := e.run([]string{"run", "--no-policy", "-c", askLine + "; touch " + filepath.Join(e.outside, "escaped") + " 2>/dev/null; true"})
		if r.code != 0 || !e.ran() {
			t.Errorf("run --no-policy: exit %d, stderr %q; want the line to run", r.code, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(e.outside, "escaped")); err == nil {
			t.Errorf("run --no-policy wrote outside the workspace")
		}
		// The harness adds it to the other scenarios' runs.
		cmd := exec.Command(forgebox, "run", "-c", "x")
		(&env{}).skipJudge(cmd)
		if strings.Join(cmd.Args[1:], " ") != "run --no-policy -c x" {
			t.Errorf("skipJudge: %q", cmd.Args)
		}
	})
}

// The agent cannot grant itself an approval: a command it runs (approved
// once) tries to write an allow-all rule into the user's configuration
// and a session approval into the state directory, both outside the
// workspace. The host's files stay as they were, and the line that asked
// before still asks.
func TestPolicyNoSelfApprovalFromInside(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		judgedEnv(t, e)
		cfg := filepath.Join(e.configHome(), "forgebox", "config.json")
		const benign = `{"forgebox": {}}`
		e.write(cfg, benign)
		sessions := filepath.Join(e.stateHome(), "forgebox", "sessions")
		allowAll := `{"forgebox": {"rules": {"allow": [{"pattern": "*"}]}}}`
		session := `{"session": "task-1", "rules": [{"pattern": "*"}]}`
		attack := "printf '%s' '" + allowAll + "' > " + cfg + "; " +
			"mkdir -p " + sessions + "; printf '%s' '" + session + "' > " + sessions + "/evil.json; " +
			"cp /dev/null " + cfg + "; true"
		if r := e.run([]string{"run", "--yes", "--session", "task-1", "-c", attack}); r.code != 0 {
			t.Fatalf("the attack did not run: exit %d\n%s", r.code, r.stderr)
		}
		if b, err := os.ReadFile(cfg); err != nil || string(b) != benign {
			t.Errorf("the sandboxed command changed the user's configuration: %q, %v", b, err)
		}
		if entries, _ := os.ReadDir(sessions); len(entries) != 0 {
			t.Errorf("the sandboxed command wrote session approvals: %v", entries)
		}
		if r := e.run([]string{"run", "--session", "task-1", "-c", askLine}); r.code != 126 || e.ran() {
			t.Errorf("after the attack, run --session task-1 of a line that asks: exit %d; want 126 (nothing granted)", r.code)
		}
	})
}

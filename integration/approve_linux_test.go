package integration

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// r3Line is asked about every time (R3: only once is offered) and leaves
// the marker when it runs.
const r3Line = "touch M; git reset --hard 2>/dev/null; true"

// approvalOut is the part of a command's result an approval by code
// needs.
type approvalOut struct {
	Ran        bool   `json:"ran"`
	ApprovedBy string `json:"approved_by"`
	Approval   *struct {
		Request string   `json:"request"`
		Scopes  []string `json:"scopes"`
		How     string   `json:"how"`
	} `json:"approval_required"`
	Blocked *struct {
		Message string `json:"message"`
	} `json:"blocked"`
}

// answerAtTerminal runs forgebox approve CODE on a terminal and types
// the answer, as the person does.
func (e *env) answerAtTerminal(t *testing.T, code, answer string) string {
	t.Helper()
	tm := openTerminal(t, 24, 100)
	r := e.start([]string{"approve", code}, onTerminal(tm, true))
	tm.waitText(t, r, "Run it?")
	tm.master.Write([]byte(answer + "\n"))
	if res := r.wait(t, 20*time.Second); res.code != 0 {
		t.Fatalf("forgebox approve %s: exit %d; the terminal shows %q", code, res.code, tm.text())
	}
	return tm.text()
}

// A client that cannot ask (Gemini CLI, codex exec) gets a code; the
// person answers it with forgebox approve on a terminal, and the model's
// next identical call runs once. The model cannot answer for the person:
// not from the sandbox (the request store is read-only there, forgebox
// approve wants a terminal), not by calling again, not with another
// command.
func TestServeApprovalByCode(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e = judgedEnv(t, e)
		// --no-undo: with undo, git reset --hard runs unasked (policy/undo.go).
		c := e.serveMCP(nil, "--no-undo")
		call := func(line string) (approvalOut, string) {
			t.Helper()
			var out approvalOut
			_, text := c.call("run_shell_command", map[string]any{"command": line, "description": "tidy the tree"}, &out)
			return out, text
		}
		out, text := call(r3Line)
		if out.Ran || e.ran() || out.Approval == nil || out.Approval.Request == "" {
			t.Fatalf("R3 without elicitation: %s; want approval_required with a request code", text)
		}
		code := out.Approval.Request
		if !strings.Contains(out.Approval.How, "forgebox approve "+code) || fmt.Sprint(out.Approval.Scopes) != "[once]" {
			t.Errorf("approval_required = %+v; want forgebox approve %s and only once offered", out.Approval, code)
		}
		if again, _ := call(r3Line); again.Approval == nil || again.Approval.Request != code || e.ran() {
			t.Errorf("calling again before the answer: %+v; want the same code %s, nothing run", again.Approval, code)
		}

		// The model's attacks on its own request, let through by the judge
		// (allow rules for the exact lines) so that the sandbox must stop them.
		requests := filepath.Join(e.stateHome(), "forgebox", "requests")
		file := filepath.Join(requests, strings.ReplaceAll(code, "-", "")+".json")
		before := hashFile(t, file)
		forged := fmt.Sprintf(`{"code":%q,"session":"x","answer":"once","answered":%q}`, strings.ReplaceAll(code, "-", ""), time.Now().UTC().Format(time.RFC3339))
		attacks := []string{
			"printf '%s' '" + forged + "' | tee " + file,
			"rm -f " + file,
			"printf 'o\\n' | script -qec '" + forgebox + " approve " + code + "' /dev/null",
			forgebox + " approve " + code + " </dev/null",
		}
		var allow []map[string]string
		for _, p := range []string{"printf *", "tee *", "rm *", "script *", forgebox + " *"} {
			allow = append(allow, map[string]string{"pattern": p})
		}
		rules, _ := json.Marshal(map[string]any{"forgebox": map[string]any{"rules": map[string]any{"allow": allow}}})
		e.write(filepath.Join(e.configHome(), "forgebox", "config.json"), string(rules))
		for _, a := range attacks {
			var res approvalOut
			_, text := c.call("run_shell_command", map[string]any{"command": a}, &res)
			if !res.Ran {
				t.Errorf("attack %q did not run (so it tests nothing): %s", a, text)
			}
		}
		if after := hashFile(t, file); after != before {
			t.Fatalf("the sandboxed commands changed the request %s", file)
		}
		if again, text := call(r3Line); again.Ran || e.ran() || again.Approval == nil {
			t.Fatalf("after the model's attacks: %s; want still waiting for the person", text)
		}

		// No terminal, no answer.
		r := e.start([]string{"approve", code})
		if res := r.wait(t, 20*time.Second); res.code != 125 || !strings.Contains(res.stderr, "terminal") {
			t.Errorf("forgebox approve without a terminal: exit %d, %q; want 125 naming the terminal", res.code, res.stderr)
		}
		if hashFile(t, file) != before {
			t.Errorf("forgebox approve without a terminal changed the request")
		}

		// The person lists and answers it.
		if res := e.run([]string{"approve"}); res.code != 0 || !strings.Contains(res.stdout, code) || !strings.Contains(res.stdout, "git reset --hard") {
			t.Errorf("forgebox approve (list): exit %d, %q", res.code, res.stdout)
		}
		shown := e.answerAtTerminal(t, code, "o")
		for _, want := range []string{"git reset --hard", "tidy the tree", "[o]nce, [N]o"} {
			if !strings.Contains(shown, want) {
				t.Errorf("the terminal did not show %q: %q", want, shown)
			}
		}
		if other, _ := call(r3Line + " "); other.Ran || e.ran() {
			t.Errorf("the answer approved another command line")
		}
		out, text = call(r3Line)
		if !out.Ran || !e.ran() || !strings.Contains(out.ApprovedBy, "forgebox approve") {
			t.Fatalf("the call after the person's answer: %s; want it run, approved_by naming forgebox approve", text)
		}
		if again, _ := call(r3Line); again.Ran || e.ran() || again.Approval == nil || again.Approval.Request == code {
			t.Errorf("one answer ran the command twice, or reused its code: %+v", again.Approval)
		}

		// No is an answer too.
		out, _ = call(r3Line)
		e.answerAtTerminal(t, out.Approval.Request, "n")
		if out, text = call(r3Line); out.Ran || e.ran() || out.Blocked == nil || !strings.Contains(out.Blocked.Message, "refused") {
			t.Errorf("after the person said no: %s", text)
		}
		// A client that declines every question (codex exec does): the
		// person can still approve in a terminal.
		declining := e.serveMCP(func(string) string { return "" }, "--no-undo")
		var declined approvalOut
		declining.call("run_shell_command", map[string]any{"command": r3Line}, &declined)
		if declined.Ran || e.ran() || declined.Approval == nil || declined.Approval.Request == "" || !strings.Contains(declined.Approval.How, "forgebox approve") {
			t.Fatalf("declined question: %+v; want a refusal that offers forgebox approve", declined)
		}
		e.answerAtTerminal(t, declined.Approval.Request, "o")
		if declining.call("run_shell_command", map[string]any{"command": r3Line}, &declined); !declined.Ran || !e.ran() {
			t.Errorf("the call after the person answered a declined question: %+v", declined)
		}
		// A denied command gets no code at all.
		if out, _ = call(denyLine); out.Ran || e.ran() || out.Approval != nil {
			t.Errorf("denied line: %+v; want denied without a request", out)
		}
	})
}

func hashFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("read %s: %v", p, err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

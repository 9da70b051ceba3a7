package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forgebox/forgebox/policy"
)

func requestHost(t *testing.T) (Host, string) {
	t.Helper()
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	os.Mkdir(ws, 0o755)
	env := map[string]string{"XDG_STATE_HOME": filepath.Join(root, "state")}
	return Host{Getenv: func(k string) string { return env[k] }, Cwd: ws, Home: filepath.Join(root, "home")}, ws
}

// A request approves exactly the command it was filed for, once, and only
// after the person answered it.
func TestApprovalRequestLifecycle(t *testing.T) {
	h, ws := requestHost(t)
	r, err := FileRequest(h, PolicyOptions{Workspace: ws, Session: "s1"}, ws, "git reset --hard", nil, "clean up")
	if err != nil {
		t.Fatal(err)
	}
	again, err := FileRequest(h, PolicyOptions{Workspace: ws, Session: "s1"}, ws, "git reset --hard", nil, "")
	if err != nil || again.Code != r.Code {
		t.Fatalf("a second call before the answer filed %v, %v; want the same code %s", again, err, r.Code)
	}
	if _, ok, _ := TakeAnswer(h, ws, "s1", ws, "git reset --hard", nil); ok {
		t.Fatal("an unanswered request approved the command")
	}
	got, err := LoadRequest(h, strings.ToLower(ShowCode(r.Code)))
	if err != nil {
		t.Fatal(err)
	}
	if err := got.Record(policy.Once, true); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadRequest(h, r.Code); err == nil {
		t.Error("an answered request could be answered again")
	}
	for _, other := range []struct {
		session, dir, line string
		argv               []string
	}{
		{"s2", ws, "git reset --hard", nil},
		{"s1", filepath.Join(ws, "sub"), "git reset --hard", nil},
		{"s1", ws, "git reset --hard HEAD~3", nil},
		{"s1", ws, "", []string{"git", "reset", "--hard"}},
	} {
		if _, ok, _ := TakeAnswer(h, ws, other.session, other.dir, other.line, other.argv); ok {
			t.Errorf("the answer approved another command: %+v", other)
		}
	}
	answer, ok, err := TakeAnswer(h, ws, "s1", ws, "git reset --hard", nil)
	if err != nil || !ok || answer != "once" {
		t.Fatalf("TakeAnswer = %q, %v, %v; want once", answer, ok, err)
	}
	if _, ok, _ := TakeAnswer(h, ws, "s1", ws, "git reset --hard", nil); ok {
		t.Error("one answer approved two calls")
	}
}

func TestApprovalRequestRefusals(t *testing.T) {
	h, ws := requestHost(t)
	for _, code := range []string{"", "ABCD", "ABCD-234I", "../../etc/passwd", "ABCD-23456"} {
		if _, err := LoadRequest(h, code); err == nil {
			t.Errorf("LoadRequest(%q) succeeded", code)
		}
	}
	if _, err := FileRequest(h, PolicyOptions{Workspace: ws, Session: ""}, ws, "sudo true", nil, ""); err == nil {
		t.Error("a request without a session was filed")
	}
	// State inside the workspace: the command could answer for itself.
	inside := Host{Getenv: func(k string) string {
		if k == "XDG_STATE_HOME" {
			return filepath.Join(ws, ".state")
		}
		return ""
	}, Cwd: ws}
	if _, err := FileRequest(inside, PolicyOptions{Workspace: ws, Session: "s1"}, ws, "sudo true", nil, ""); err == nil || !strings.Contains(err.Error(), "inside the workspace") {
		t.Errorf("a request inside the workspace: %v", err)
	}
	if _, _, err := TakeAnswer(inside, ws, "s1", ws, "sudo true", nil); err == nil {
		t.Error("an answer was taken from inside the workspace")
	}
	// Expired requests and answers approve nothing.
	r, err := FileRequest(h, PolicyOptions{Workspace: ws, Session: "s1"}, ws, "sudo true", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	r.Answer, r.Answered = "once", time.Now().Add(-AnswerLife-time.Minute)
	if err := r.save(); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := TakeAnswer(h, ws, "s1", ws, "sudo true", nil); ok {
		t.Error("an expired answer approved the command")
	}
	if _, err := os.Stat(r.path); !os.IsNotExist(err) {
		t.Errorf("the expired request is still there: %v", err)
	}
	// A file whose name and code disagree is not a request.
	store, _ := h.requestDir()
	os.WriteFile(filepath.Join(store, "AAAAAAAA.json"), []byte(`{"code":"BBBBBBBB","session":"s1","dir":"`+ws+`","line":"sudo true","answer":"once","answered":"`+time.Now().UTC().Format(time.RFC3339)+`"}`), 0o600)
	if _, ok, _ := TakeAnswer(h, ws, "s1", ws, "sudo true", nil); ok {
		t.Error("a mislabelled file approved the command")
	}
}

package runner

import (
	"encoding/json"
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
		if err := ValidSessionID(id); err != nil {
			t.Errorf("ValidSessionID(%q) = %v; want nil", id, err)
		}
	}
	bad := []string{"", strings.Repeat("x", 129), "a/b", "../x", "a b", "a\n", "$(id)", "é", "a\x00"}
	for _, id := range bad {
		if err := ValidSessionID(id); err == nil || !strings.Contains(err.Error(), "invalid session ID") {
			t.Errorf("ValidSessionID(%q) = %v; want a refusal", id, err)
		}
	}
}

func TestSessionStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "forgebox", "sessions")
	s := NewSessionStore(dir, "s1")
	if base := filepath.Base(s.path); len(base) != 32+len(".json") || filepath.Dir(s.path) != dir {
		t.Fatalf("store path %s; want 32 hex digits in %s", s.path, dir)
	}
	if other := NewSessionStore(dir, "s2"); other.path == s.path {
		t.Fatalf("sessions s1 and s2 share the store %s", s.path)
	}
	if rules, err := s.Load(); err != nil || rules != nil {
		t.Fatalf("load() of a missing store = %v, %v; want nothing", rules, err)
	}
	add := []policy.Rule{{Command: "frobnicate --x", Added: "2025-01-02"}, {Pattern: "npm run *", Added: "2025-01-02"}}
	if err := s.Add(add); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(add[:1]); err != nil { // again: not twice
		t.Fatal(err)
	}
	rules, err := s.Load()
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
	removed, err := s.Remove(func(r policy.Rule) bool { return r.Text() == "npm run *" })
	if err != nil || len(removed) != 1 {
		t.Fatalf("remove() = %v, %v; want one rule", removed, err)
	}
	if rules, _ := s.Load(); len(rules) != 1 {
		t.Errorf("after remove: %v; want one rule left", rules)
	}
	if removed, err := s.Remove(func(policy.Rule) bool { return false }); err != nil || removed != nil {
		t.Errorf("remove(nothing) = %v, %v", removed, err)
	}
	// A store whose content names another session is refused.
	writeFile(t, NewSessionStore(dir, "s3").path, `{"session": "s4", "rules": []}`)
	if _, err := NewSessionStore(dir, "s3").Load(); err == nil || !strings.Contains(err.Error(), "belongs to session") {
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
	if err := RecordAlways(p, rules); err != nil {
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
	removed, err := RevokeAlways(p, func(policy.Rule) bool { return true })
	if err != nil || len(removed) != 1 || removed[0].Command != "frobnicate --y" {
		t.Fatalf("RevokeAlways(all) = %v, %v; want only the approved rule", removed, err)
	}
	b, _ = os.ReadFile(p)
	if !strings.Contains(string(b), `"frobnicate --x"`) || strings.Contains(string(b), "frobnicate --y") {
		t.Errorf("config after revoke: %s", b)
	}
	if removed, err := RevokeAlways(filepath.Join(t.TempDir(), "missing.json"), func(policy.Rule) bool { return true }); err != nil || removed != nil {
		t.Errorf("RevokeAlways(missing file) = %v, %v", removed, err)
	}
	writeFile(t, p, "{oops")
	if err := RecordAlways(p, rules); err == nil {
		t.Errorf("recordAlways into a malformed file = nil; want an error")
	}
}

package sandbox

import (
	"path"
	"strings"
	"testing"

	"github.com/forgebox/forgebox/pathtree"
)

// Every entry is a clean path with a kind and the documentation naming it,
// and no path is listed twice or inside another entry (the outer cover
// would make the inner one dead weight in every run).
func TestSecretTable(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range secretTable {
		switch {
		case s.Path == "" || path.Clean(s.Path) != s.Path || strings.HasPrefix(s.Path, "../"):
			t.Errorf("secret %q: path is not clean", s.Path)
		case s.Kind == "":
			t.Errorf("secret %q: no kind", s.Path)
		case !strings.HasPrefix(s.Source, "https://"):
			t.Errorf("secret %q: source %q is not a documentation link", s.Path, s.Source)
		case seen[s.Path]:
			t.Errorf("secret %q listed twice", s.Path)
		}
		seen[s.Path] = true
	}
	for _, a := range secretTable {
		for _, b := range secretTable {
			if a.Path != b.Path && pathtree.Beneath(b.Path, a.Path) {
				t.Errorf("secret %q lies inside secret %q", b.Path, a.Path)
			}
		}
	}
}

// The issue-16 escapes are in the table (a regression guard on the data).
func TestSecretTableCoversIssue16(t *testing.T) {
	for _, want := range []string{".pgpass", ".my.cnf", ".s3cfg", ".boto", ".config/rclone", ".config/github-copilot"} {
		found := false
		for _, c := range secretCandidates(secretBases{homes: []string{"/home/u"}}) {
			if c == path.Join("/home/u", want) {
				found = true
			}
		}
		if !found {
			t.Errorf("secretCandidates does not list ~/%s", want)
		}
	}
}

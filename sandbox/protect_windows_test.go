package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The Windows guard protects what walkGitDir lists, as Linux does:
// core.hooksPath, linked worktrees' files, submodules' Git directories and
// the submodules .gitmodules names.
func TestProtectWindowsFollowsTheGitRule(t *testing.T) {
	// Not t.TempDir: Wine fails its cleanup.
	ws, err := os.MkdirTemp("", "forgebox-protect-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(ws)
	for p, content := range map[string]string{
		".git/config":                   "[core]\n\thooksPath = .githooks\n",
		".git/hooks/pre-commit":         "",
		".git/worktrees/w/gitdir":       "",
		".git/modules/m/config":         "",
		".gitmodules":                   "[submodule \"s\"]\n\tpath = sub\n",
		"sub/.git":                      "gitdir: ../.git/modules/m\n",
		".githooks/pre-push":            "",
		"deep/er/still/.git/config":     "",
		"plain.txt":                     "",
		".git/modules/m/hooks/post-any": "",
	} {
		writeFile(t, filepath.Join(ws, filepath.FromSlash(p)), content)
	}
	g, err := protectWindows(ws, []string{ws})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range g.protected {
		rel, _ := filepath.Rel(ws, p)
		got = append(got, filepath.ToSlash(rel))
	}
	for _, want := range []string{".git/hooks", ".git/config", ".githooks", ".git/worktrees/w/gitdir",
		".git/modules/m/config", ".git/modules/m/hooks", "sub/.git"} {
		if !slices.Contains(got, want) {
			t.Errorf("protectWindows protects %q; want %s among them", got, want)
		}
	}
	for _, not := range []string{"plain.txt", "deep/er/still/.git/config"} {
		if slices.Contains(got, not) {
			t.Errorf("protectWindows protects %s, below the scan's depth or not protected", not)
		}
	}
	var watched []string
	for _, w := range g.watched {
		rel, _ := filepath.Rel(ws, w.path)
		watched = append(watched, filepath.ToSlash(rel))
	}
	for _, want := range []string{".git/commondir", ".git/modules/m/commondir"} {
		if !slices.Contains(watched, want) {
			t.Errorf("protectWindows watches %q; want the missing %s among them", watched, want)
		}
	}
}

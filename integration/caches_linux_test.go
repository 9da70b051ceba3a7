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
)

// goBin is the Go toolchain the build scenarios run, inside and outside.
const goBin = "/usr/local/go/bin/go"

// cacheListing proves a host directory unchanged: every entry with its
// mode, owner, size, mtime and ctime (a write sets the ctime to now, and
// nothing sets it back), symlink targets, and the contents of the files
// up to 64 KiB.
func cacheListing(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	n := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			fmt.Fprintf(h, "%s: %v\n", p, err)
			return nil
		}
		var st syscall.Stat_t
		if syscall.Lstat(p, &st) != nil {
			return nil
		}
		n++
		if d.Type().IsRegular() && st.Nlink > 1 {
			// A hard link to a file of the test's own Go cache
			// (warmGoCache): other links come and go, and the builds
			// going on beside the test touch it (its times) and rewrite
			// its index entries in place (os.WriteFile of the same
			// action ID). What counts is that it is the same inode, with
			// the same mode and size: the sandbox neither replaced,
			// chmodded nor grew it.
			fmt.Fprintf(h, "%s %o %d:%d %d ino %d\n", p, st.Mode, st.Uid, st.Gid, st.Size, st.Ino)
			return nil
		} else {
			fmt.Fprintf(h, "%s %o %d:%d %d %d.%d %d.%d", p, st.Mode, st.Uid, st.Gid, st.Size, st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			fmt.Fprintf(h, " -> %s", target)
		case d.Type().IsRegular() && st.Size <= 64<<10:
			b, _ := os.ReadFile(p)
			h.Write(b)
		}
		h.Write([]byte{'\n'})
		return nil
	})
	return fmt.Sprintf("%d entries, %x", n, h.Sum(nil))
}

// chownTree gives the mode's user every directory below dir (e.write
// chowns only the last one it makes): a cache the user does not own
// cannot be copied up in the user namespace.
func (e *env) chownTree(dir string) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			e.chown(p)
		}
		return nil
	})
}

// goModule writes a tiny module with a test into dir.
func (e *env) goModule(dir string) {
	e.write(filepath.Join(dir, "go.mod"), "module example.com/tiny\n\ngo 1.22\n")
	e.write(filepath.Join(dir, "main.go"), "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(add(2, 3)) }\n\nfunc add(a, b int) int { return a + b }\n")
	e.write(filepath.Join(dir, "main_test.go"), "package main\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif add(2, 3) != 5 {\n\t\tt.Fatal(\"add\")\n\t}\n}\n")
}

// warmGoCache gives the fake home a Go build cache that is already warm:
// hard links to the files of the test's own (so that no scenario compiles
// the standard library from scratch), in directories of the mode's user.
func (e *env) warmGoCache() string {
	e.t.Helper()
	if _, err := os.Stat(goBin); err != nil {
		e.t.Skipf("no Go toolchain at %s", goBin)
	}
	out, err := exec.Command(goBin, "env", "GOCACHE").Output()
	src := strings.TrimSpace(string(out))
	dst := filepath.Join(e.home, ".cache", "go-build")
	e.mkdir(filepath.Dir(dst))
	if err != nil || src == "" || exec.Command("cp", "-al", src, dst).Run() != nil {
		e.mkdir(dst)
	}
	// The cache's entries are written once (a new file renamed in place),
	// but trim.txt is rewritten in place by every Go that trims the cache:
	// a link to the test's own would change with the builds going on
	// beside the test. It gets a copy of its own.
	if b, err := os.ReadFile(filepath.Join(dst, "trim.txt")); err == nil {
		os.Remove(filepath.Join(dst, "trim.txt"))
		os.WriteFile(filepath.Join(dst, "trim.txt"), b, 0o644)
	}
	e.chownTree(dst)
	return dst
}

// The first scenario of the issue: go build and go test in a sandbox,
// with a home whose Go caches exist and hold something, work; the host's
// caches are unchanged, byte for byte.
func TestCacheGoBuildLeavesHostCachesUnchanged(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		gocache := e.warmGoCache()
		modcache := filepath.Join(e.home, "go", "pkg", "mod")
		e.write(filepath.Join(modcache, "cache", "download", "example.com", "dep", "@v", "list"), "v1.0.0\n")
		e.write(filepath.Join(modcache, "example.com", "dep@v1.0.0", "dep.go"), "package dep\n")
		os.Chmod(filepath.Join(modcache, "example.com", "dep@v1.0.0", "dep.go"), 0o444)
		os.Chmod(filepath.Join(modcache, "example.com", "dep@v1.0.0"), 0o555)
		e.goModule(e.ws)
		e.chownTree(e.home)
		before := map[string]string{gocache: cacheListing(t, gocache), modcache: cacheListing(t, modcache)}

		r, res := e.runJSON([]string{"--", "/bin/sh", "-c", goBin + " build -o tiny . && ./tiny && " + goBin + " test ./... && " +
			// What a command could try on the module cache.
			"chmod -R u+w ~/go/pkg/mod/example.com && echo planted > ~/go/pkg/mod/example.com/dep@v1.0.0/dep.go && rm -rf ~/go/pkg/mod/cache"})
		if res.ExitCode != 0 || !strings.Contains(res.Stdout, "5\n") || !strings.Contains(res.Stdout, "ok  \texample.com/tiny") {
			t.Fatalf("go build && go test in the sandbox: exit %d\nstdout: %s\nstderr: %s%s", res.ExitCode, res.Stdout, res.Stderr, r.stderr)
		}
		modes := map[string]string{}
		for _, c := range res.Enforced.Caches {
			modes[c.Path] = c.Mode
		}
		if modes[filepath.Join(e.home, ".cache")] != "overlay" || modes[modcache] != "overlay" {
			t.Errorf("enforced.caches = %+v; want ~/.cache and ~/go/pkg/mod as overlays", res.Enforced.Caches)
		}
		for dir, b := range before {
			if after := cacheListing(t, dir); after != b {
				t.Errorf("the host's %s changed: %s -> %s", dir, b, after)
			}
		}
	})
}

// What a run writes to a cache is there for the next run in the same
// workspace, and only there; forgebox cache clear empties it.
func TestCachePersistsPerWorkspace(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		cache := filepath.Join(e.home, ".cache")
		e.mkdir(cache)
		before := cacheListing(t, cache)
		other := filepath.Join(e.dir, "other")
		e.mkdir(other)

		if r := e.sh("echo from-run-1 > ~/.cache/x"); r.code != 0 {
			t.Fatalf("write ~/.cache/x: exit %d, %s", r.code, r.stderr)
		}
		if r := e.sh("cat ~/.cache/x"); r.code != 0 || r.stdout != "from-run-1\n" {
			t.Errorf("second run in the same workspace: cat ~/.cache/x = exit %d %q, want from-run-1", r.code, r.stdout)
		}
		if r := e.sh("cat ~/.cache/x", "--workspace", other); r.code == 0 {
			t.Errorf("a run in another workspace sees ~/.cache/x: %q", r.stdout)
		}
		if after := cacheListing(t, cache); after != before {
			t.Errorf("the host's ~/.cache changed: %s -> %s", before, after)
		}

		var list struct {
			Workspaces []struct {
				Workspace string `json:"workspace"`
				Bytes     int64  `json:"bytes"`
			} `json:"workspaces"`
		}
		r := e.run([]string{"cache", "list", "--json"})
		if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || r.code != 0 {
			t.Fatalf("forgebox cache list --json: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
		}
		found := false
		for _, w := range list.Workspaces {
			found = found || w.Workspace == e.ws
		}
		if !found {
			t.Errorf("forgebox cache list does not show %s: %s", e.ws, r.stdout)
		}

		if r := e.run([]string{"cache", "clear"}); r.code != 0 {
			t.Fatalf("forgebox cache clear: exit %d, %s", r.code, r.stderr)
		}
		if r := e.sh("cat ~/.cache/x"); r.code == 0 {
			t.Errorf("after forgebox cache clear, ~/.cache/x is still there: %q", r.stdout)
		}
		if r := e.run([]string{"cache", "clear", "--all"}); r.code != 0 {
			t.Errorf("forgebox cache clear --all: exit %d, %s", r.code, r.stderr)
		}
		if r := e.run([]string{"doctor", "--json"}); !strings.Contains(r.stdout, `"caches"`) {
			t.Errorf("forgebox doctor --json has no caches: %.300s", r.stdout)
		}
	})
}

// npm's, Cargo's and Maven's caches take writes, and the host's stay as
// they were; Cargo's configuration stays read-only.
func TestCacheWritesLeaveHostUnchanged(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		dirs := []string{".npm", ".cargo/registry", ".m2/repository", ".cache"}
		for _, d := range dirs {
			e.write(filepath.Join(e.home, d, "existing"), "host\n")
		}
		e.write(filepath.Join(e.home, ".cargo", "config.toml"), "[build]\n")
		e.chownTree(e.home)
		before := map[string]string{}
		for _, d := range dirs {
			before[d] = cacheListing(t, filepath.Join(e.home, d))
		}
		cargoConfig := snap(t, filepath.Join(e.home, ".cargo", "config.toml"))
		var line strings.Builder
		for _, d := range dirs {
			fmt.Fprintf(&line, "echo new > ~/%[1]s/new && echo changed > ~/%[1]s/existing && mkdir ~/%[1]s/sub && chmod 700 ~/%[1]s/existing && cat ~/%[1]s/existing && rm ~/%[1]s/existing && ", d)
		}
		line.WriteString("true")
		if r := e.sh(line.String()); r.code != 0 || strings.Count(r.stdout, "changed\n") != len(dirs) {
			t.Fatalf("writes to the caches: exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
		}
		for _, d := range dirs {
			if after := cacheListing(t, filepath.Join(e.home, d)); after != before[d] {
				t.Errorf("the host's ~/%s changed: %s -> %s", d, before[d], after)
			}
		}
		vs := e.probe(nil, "write "+filepath.Join(e.home, ".cargo", "config.toml")+" x", "write "+filepath.Join(e.home, ".cargo", "bin-new")+" x")
		blocked(t, vs, "EROFS")
		unchanged(t, filepath.Join(e.home, ".cargo", "config.toml"), cargoConfig)
	})
}

// The command cannot reach the private caches except through their mount
// points: forgebox's state directory is read-only (or hidden) to it, and
// the staged upper directory is gone.
func TestCacheUpperUnreachable(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.mkdir(filepath.Join(e.home, ".cache"))
		if r := e.sh("echo x > ~/.cache/f"); r.code != 0 {
			t.Fatalf("write ~/.cache/f: exit %d, %s", r.code, r.stderr)
		}
		ups, _ := filepath.Glob(filepath.Join(e.stateHome(), "forgebox", "caches", "*", "xdg-cache", "upper"))
		if len(ups) != 1 {
			t.Fatalf("private caches under the state directory: %v, want one xdg-cache/upper", ups)
		}
		f := filepath.Join(ups[0], "f")
		before := snap(t, f)
		if !before.exists || before.content != "x\n" {
			t.Fatalf("the run's write is not in %s: %+v", f, before)
		}
		vs := e.probe(nil, "write "+f+" pwned", "write "+filepath.Join(ups[0], "new")+" pwned",
			"write /dev/.forgebox-stage/c/upper/new pwned")
		blocked(t, vs)
		unchanged(t, f, before)
		if s := snap(t, filepath.Join(ups[0], "new")); s.exists {
			t.Errorf("the command created a file in the upper directory %s", ups[0])
		}
	})
}

// A symlink a run plants in its cache, pointing at a host file, is only
// a symlink: following it reaches the read-only host.
func TestCachePlantedSymlink(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.mkdir(filepath.Join(e.home, ".cache"))
		target := filepath.Join(e.outside, "victim")
		e.write(target, "host\n")
		before := snap(t, target)
		if r := e.sh("ln -s " + target + " ~/.cache/link && mkdir -p ~/.cache/d && ln -s " + e.outside + " ~/.cache/d/out"); r.code != 0 {
			t.Fatalf("plant: exit %d, %s", r.code, r.stderr)
		}
		vs := e.probe(nil, "write "+filepath.Join(e.home, ".cache", "link")+" pwned",
			"write "+filepath.Join(e.home, ".cache", "d", "out", "victim")+" pwned",
			"write "+filepath.Join(e.home, ".cache", "d", "out", "new")+" pwned")
		blocked(t, vs, "EROFS")
		unchanged(t, target, before)
		if s := snap(t, filepath.Join(e.outside, "new")); s.exists {
			t.Errorf("a write through the planted symlink created %s on the host", filepath.Join(e.outside, "new"))
		}
	})
}

// In a home without any cache directory the tools are pointed at private
// caches through their environment: go build works, and nothing appears
// in the home. (The build cache itself is the warm one GOCACHE names,
// overlaid: a cold one would compile the standard library for minutes;
// a cold GOCACHE in a fresh home goes the same way as GOMODCACHE.)
func TestCacheFreshHome(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		warm := e.warmGoCache()
		home := filepath.Join(e.dir, "fresh")
		e.mkdir(home)
		e.goModule(e.ws)
		e.extra = append(e.extra, "HOME="+home, "GOCACHE="+warm)
		before := tree(t, home)
		_, res := e.runJSON([]string{"--", "/bin/sh", "-c", goBin + " build -o tiny . && ./tiny && " + goBin + " env GOMODCACHE && " +
			"echo $npm_config_cache $XDG_CACHE_HOME $CARGO_HOME && echo > $npm_config_cache/x && echo > $CARGO_HOME/y && " +
			"mkdir -p $GOMODCACHE/cache/download && echo > $XDG_CACHE_HOME/z && echo $MAVEN_OPTS"})
		if res.ExitCode != 0 || !strings.Contains(res.Stdout, "5\n") {
			t.Fatalf("go build in a fresh home: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
		}
		for _, want := range []string{"/run/forgebox-caches/go-mod", "/run/forgebox-caches/npm",
			"/run/forgebox-caches/xdg-cache", "/run/forgebox-caches/cargo-home", "-Dmaven.repo.local=/run/forgebox-caches/maven"} {
			if !strings.Contains(res.Stdout, want) {
				t.Errorf("inside, the environment does not point at %s:\n%s", want, res.Stdout)
			}
		}
		if after := tree(t, home); after != before {
			t.Errorf("the fresh home changed:\n%s\n->\n%s", before, after)
		}
	})
}

// --no-cache leaves the caches read-only, as the rest of the home.
func TestCacheOff(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.mkdir(filepath.Join(e.home, ".cache"))
		vs := e.probe([]string{"--no-cache"}, "write "+filepath.Join(e.home, ".cache", "x")+" y")
		blocked(t, vs, "EROFS")
		_, res := e.runJSON([]string{"--no-cache", "--", "true"})
		if res.Enforced == nil || len(res.Enforced.Caches) != 0 {
			t.Errorf("with --no-cache, enforced.caches = %+v; want none", res.Enforced)
		}
	})
}

// Forgebox's state directory inside the workspace: the caches there are
// neither writable by the command (forgebox's state is hidden from it)
// nor walked by the post-run check, which would take overlay's work
// directories (mode 0) for something the run planted.
func TestCacheStateInsideWorkspace(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.mkdir(filepath.Join(e.home, ".cache"))
		state := filepath.Join(e.ws, "state")
		e.mkdir(state)
		e.extra = append(e.extra, "XDG_STATE_HOME="+state)
		for i := range 2 {
			// --no-undo: undo refuses a store inside the workspace, and
			// says so in a warning (TestUndoStoreInsideWorkspace).
			r, res := e.runJSON([]string{"--no-undo", "--", "/bin/sh", "-c", "echo x > ~/.cache/f"})
			if res.ExitCode != 0 || len(res.Warnings) != 0 || len(res.Quarantined) != 0 {
				t.Errorf("run %d: exit %d, warnings %q, quarantined %+v\n%s", i+1, res.ExitCode, res.Warnings, res.Quarantined, r.stderr)
			}
		}
		ups, _ := filepath.Glob(filepath.Join(state, "forgebox", "caches", "*", "xdg-cache", "upper"))
		if len(ups) != 1 {
			t.Fatalf("private caches under the state directory: %v, want one xdg-cache/upper", ups)
		}
		// forgebox's state is hidden from every run (the caches in it
		// included): not even there to write.
		vs := e.probe(nil, "write "+filepath.Join(ups[0], "f")+" pwned", "write "+filepath.Join(ups[0], "new")+" pwned")
		blocked(t, vs, "ENOENT")
		if _, err := os.Lstat(filepath.Join(ups[0], "new")); err == nil {
			t.Error("a run wrote into the private cache store")
		}
	})
}

// Runs at once in one workspace each get their overlay (a work directory
// of their own), and see each other's writes to the shared private cache.
func TestCacheConcurrentRuns(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.mkdir(filepath.Join(e.home, ".cache"))
		e.write(filepath.Join(e.home, ".cache", "host"), "host\n")
		before := cacheListing(t, filepath.Join(e.home, ".cache"))
		done := make(chan runResult, 3)
		for i := range 3 {
			go func() {
				_, res := e.runJSON([]string{"--", "/bin/sh", "-c", fmt.Sprintf("cat ~/.cache/host && echo %d > ~/.cache/run%d && sleep 1", i, i)})
				done <- res
			}()
		}
		for range 3 {
			res := <-done
			modes := map[string]string{}
			for _, c := range res.Enforced.Caches {
				modes[c.Path] = c.Mode
			}
			if res.ExitCode != 0 || res.Stdout != "host\n" || modes[filepath.Join(e.home, ".cache")] != "overlay" || len(res.Warnings) != 0 {
				t.Errorf("concurrent run: exit %d, stdout %q, caches %v, warnings %q", res.ExitCode, res.Stdout, modes, res.Warnings)
			}
		}
		if r := e.sh("cat ~/.cache/run0 ~/.cache/run1 ~/.cache/run2"); r.stdout != "0\n1\n2\n" {
			t.Errorf("after the concurrent runs, the private cache holds %q, want 0 1 2", r.stdout)
		}
		if after := cacheListing(t, filepath.Join(e.home, ".cache")); after != before {
			t.Errorf("the host's ~/.cache changed: %s -> %s", before, after)
		}
		if works, _ := filepath.Glob(filepath.Join(e.stateHome(), "forgebox", "caches", "*", "xdg-cache", "work-*")); len(works) != 0 {
			t.Errorf("the runs' own work directories are left: %v", works)
		}
	})
}

// A judged line of readers on the workspace runs without the private
// caches (runner.Caches), and says so; a line that may use a cache (a
// build tool, a shell, a script of the workspace, a reader of a cache
// path) keeps them, and sees what earlier runs wrote there.
func TestCacheOnlyWhereUsed(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.judged = true
		e.mkdir(filepath.Join(e.home, ".cache"))
		e.write(filepath.Join(e.ws, "f"), "one\ntwo\n")
		e.write(filepath.Join(e.ws, "script"), "#!/bin/sh\necho private > ~/.cache/from-script\n")
		os.Chmod(filepath.Join(e.ws, "script"), 0o755)
		for _, tc := range []struct {
			args   []string
			caches bool
			stdout string
		}{
			{[]string{"-c", "ls; cat f | grep tw"}, false, "f\nscript\ntwo\n"},
			{[]string{"--", "/bin/true"}, false, ""},
			{[]string{"-c", "./script && cat ~/.cache/from-script"}, true, "private\n"},
			{[]string{"-c", "cat ~/.cache/from-script"}, true, "private\n"},
			{[]string{"-c", "sh -c 'ls f'"}, true, "f\n"},
			{[]string{"-c", goBin + " env GOCACHE >/dev/null"}, true, ""},
			{[]string{"-c", "ls f | xargs cat"}, true, "one\ntwo\n"},
		} {
			r, res := e.runJSON(tc.args)
			if res.ExitCode != 0 || res.Stdout != tc.stdout || res.Enforced == nil {
				t.Errorf("run %q: exit %d, stdout %q (want %q)\n%s%s", tc.args, res.ExitCode, res.Stdout, tc.stdout, res.Stderr, r.stderr)
				continue
			}
			if got := len(res.Enforced.Caches) != 0; got != tc.caches {
				t.Errorf("run %q: enforced.caches = %+v; want caches %v", tc.args, res.Enforced.Caches, tc.caches)
			}
		}
		if _, err := os.Stat(filepath.Join(e.home, ".cache", "from-script")); err == nil {
			t.Errorf("the script's write reached the host's ~/.cache")
		}
	})
}

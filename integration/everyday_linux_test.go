package integration

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/forgebox/forgebox/integration/everyday"
)

// The everyday suite: a small real project per language, built and tested
// offline with plain `forgebox run -c LINE` (the default --net none, no
// extra grants), as root and as an ordinary user. Each project's tests
// start a server on 127.0.0.1. The host's caches in the scenario's home
// must come out byte for byte as they went in: whatever the toolchains
// cache during the run stays in the sandbox.
func TestEveryday(t *testing.T) {
	path := everydayPath(t)
	for _, p := range everyday.Projects() {
		t.Run(p.Name, func(t *testing.T) {
			forEachMode(t, func(t *testing.T, e *env) {
				e.extra = append(e.extra, "PATH="+path)
				e.requireTools(p.Tools)
				e.seedCaches(p)
				before := e.hashCaches()
				if err := p.Write(e.ws); err != nil {
					t.Fatal(err)
				}
				e.chownAll(e.ws)
				start := time.Now()
				r := e.run([]string{"run", "-c", p.Command})
				out := r.stdout + r.stderr
				if r.code != 0 || !strings.Contains(out, p.Want) {
					t.Fatalf("forgebox run -c %q exited %d after %v; want 0 and %q in the output\nstdout: %s\nstderr: %s",
						p.Command, r.code, time.Since(start).Round(time.Millisecond), p.Want, r.stdout, r.stderr)
				}
				t.Logf("built and tested in %v", time.Since(start).Round(time.Millisecond))
				if after := e.hashCaches(); after != before {
					t.Errorf("the host's caches changed:\n%s", lineDiff(before, after))
				}
			})
		})
	}
}

// cacheRoots are the caches of the toolchains under a home: Go's build
// cache and pip's under ~/.cache, Go's module cache, npm's, cargo's.
var cacheRoots = []string{".cache", "go", ".npm", ".cargo"}

// everydayPath is the PATH the projects run with: the go the tests run
// with (go test puts it first on PATH), then everyday.SystemPath.
func everydayPath(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		// A test binary run as the test user (scripts/test) may not
		// have it on PATH; it was built by this one.
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, err := os.Stat(goBin); err != nil {
			t.Fatalf("no go on PATH, nor in %s: %v", runtime.GOROOT(), err)
		}
	}
	return filepath.Dir(goBin) + ":" + everyday.SystemPath
}

// requireTools fails the test when a toolchain is missing for the mode's
// user: scripts/setup installs every one of them.
func (e *env) requireTools(tools []string) {
	e.t.Helper()
	for _, tool := range tools {
		if r := e.runProgram("/bin/sh", "-c", "command -v "+tool); r.code != 0 {
			e.t.Fatalf("%s is not on the PATH of %s (%s): scripts/setup installs it", tool, e.m.name, everydayPath(e.t))
		}
	}
}

// seedCaches gives the scenario's home the caches a developer's would
// have: each cache directory exists with a file in it, and Go's build
// cache is warm for the Go project (compiling the standard library for
// httptest from nothing takes a minute of CPU).
func (e *env) seedCaches(p everyday.Project) {
	e.t.Helper()
	for _, d := range []string{".cache/pip", "go/pkg/mod", ".npm", ".cargo/registry"} {
		e.write(filepath.Join(e.home, d, "forgebox-test"), "the host's, not the sandbox's\n")
	}
	if p.Name == "go" {
		if err := copyTree(goBuildSeed(e.t), filepath.Join(e.home, ".cache", "go-build")); err != nil {
			e.t.Fatal(err)
		}
	}
	e.chownAll(e.home)
}

var goSeed struct {
	once sync.Once
	dir  string
	err  error
}

// goBuildSeed is a Go build cache warm for the Go project. Warming one
// costs a minute of CPU, so it is kept beside the scratch space, per Go
// version, for later runs; the run as the unprivileged user takes root's
// when it can read it.
func goBuildSeed(t *testing.T) string {
	t.Helper()
	goSeed.once.Do(func() {
		goSeed.dir, goSeed.err = warmGoBuildSeed(everydayPath(t))
	})
	if goSeed.err != nil {
		t.Fatal(goSeed.err)
	}
	return goSeed.dir
}

func warmGoBuildSeed(path string) (string, error) {
	version, err := exec.Command(filepath.Join(strings.SplitN(path, ":", 2)[0], "go"), "env", "GOVERSION").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOVERSION: %v", err)
	}
	name := "everyday-go-build-" + strings.TrimSpace(string(version))
	for _, dir := range []string{filepath.Join(filepath.Dir(baseDir), name), filepath.Join("/var/lib/forgebox-test", name)} {
		if _, err := os.Stat(filepath.Join(dir, "go-build", "README")); err == nil {
			return filepath.Join(dir, "go-build"), nil
		}
	}
	dir := filepath.Join(filepath.Dir(baseDir), name)
	tmp, err := os.MkdirTemp(filepath.Dir(baseDir), name+"-")
	if err != nil {
		return "", err
	}
	defer func() {
		exec.Command("chmod", "-R", "u+w", tmp).Run()
		os.RemoveAll(tmp)
	}()
	p := everyday.Projects()[0]
	ws := filepath.Join(tmp, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		return "", err
	}
	if err := p.Write(ws); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", p.Command)
	cmd.Dir = ws
	cmd.Env = []string{"PATH=" + path, "HOME=" + tmp, "GOCACHE=" + filepath.Join(tmp, "go-build"),
		"GOMODCACHE=" + filepath.Join(tmp, "mod"), "GOTELEMETRY=off"}
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("warm a Go build cache: %v\n%s", err, out)
	}
	// Only the build cache is kept (the module cache is read-only).
	exec.Command("chmod", "-R", "u+w,a+rX", tmp).Run()
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return "", err
	}
	for _, d := range entries {
		if d.Name() == "go-build" {
			continue
		}
		if err := os.RemoveAll(filepath.Join(tmp, d.Name())); err != nil {
			return "", err
		}
	}
	if err := os.Rename(tmp, dir); err != nil && !errors.Is(err, fs.ErrExist) && !errors.Is(err, syscall.ENOTEMPTY) {
		return "", err
	}
	return filepath.Join(dir, "go-build"), nil
}

// hashCaches is every path under the cache roots of the scenario's home,
// with its mode, modification time and content (or link target).
func (e *env) hashCaches() string {
	e.t.Helper()
	var b strings.Builder
	for _, root := range cacheRoots {
		err := filepath.WalkDir(filepath.Join(e.home, root), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "%s %v %d", strings.TrimPrefix(p, e.home), fi.Mode(), fi.ModTime().UnixNano())
			switch {
			case fi.Mode().IsRegular():
				sum, err := fileSHA256(p)
				if err != nil {
					return err
				}
				fmt.Fprintf(&b, " %x", sum)
			case fi.Mode()&fs.ModeSymlink != 0:
				target, err := os.Readlink(p)
				if err != nil {
					return err
				}
				b.WriteString(" -> " + target)
			}
			b.WriteByte('\n')
			return nil
		})
		if err != nil {
			e.t.Fatalf("hash the caches: %v", err)
		}
	}
	return b.String()
}

func fileSHA256(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

// lineDiff lists the lines only in a or only in b, at most 20.
func lineDiff(a, b string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	ina, inb := in(a), in(b)
	var d []string
	for _, l := range strings.Split(a, "\n") {
		if !inb[l] {
			d = append(d, "- "+l)
		}
	}
	for _, l := range strings.Split(b, "\n") {
		if !ina[l] {
			d = append(d, "+ "+l)
		}
	}
	if len(d) > 20 {
		d = append(d[:20], fmt.Sprintf("... and %d more", len(d)-20))
	}
	return strings.Join(d, "\n")
}

// chownAll gives everything under dir to the mode's user.
func (e *env) chownAll(dir string) {
	e.t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		e.chown(p)
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// copyTree copies the regular files and directories under src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}

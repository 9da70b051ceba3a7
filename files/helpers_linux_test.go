package files

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// protectedForTest are the paths the sandbox protects in a workspace.
var protectedForTest = []string{".git/hooks", ".git/config", ".envrc", ".mcp.json", ".vscode", ".claude", ".forgebox"}

// fixture is a workspace beside a directory of "host" files that no
// operation may change, read or add to.
type fixture struct {
	base    string // holds both
	ws      string
	outside string
	fs      *FS
	before  snapshot // everything under base but the workspace
}

// walkModes runs fn with the openat2 walk (when the kernel has it) and
// with the openat(O_NOFOLLOW) fallback older kernels get.
func walkModes(t *testing.T, fn func(t *testing.T, openat2 bool)) {
	t.Helper()
	for _, openat2 := range []bool{true, false} {
		name := "openat"
		if openat2 {
			name = "openat2"
		}
		t.Run(name, func(t *testing.T) { fn(t, openat2) })
	}
}

// newFixture builds the workspace of the attacks:
//
//	outside/secret.txt, victim.txt, sub/       the host
//	ws/file.txt, dir/inner.txt                 plain content
//	ws/out -> /abs/outside, outrel -> ../outside, outfile -> outside/victim.txt
//	ws/chain1 -> chain2 -> out, etc -> /etc, loop1 <-> loop2
//	ws/hard (hard link to outside/victim.txt), hardsecret (to outside/secret.txt)
//	ws/.git/hooks/pre-commit, .git/config, hooklink -> .git/hooks
//	ws/.env, secrets/key, envlink -> .env   (hidden)
//	ws/tree/ok.txt, tree/escape -> ../../outside/victim.txt
func newFixture(t *testing.T, openat2 bool) *fixture {
	t.Helper()
	base := t.TempDir()
	fx := &fixture{base: base, ws: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside")}
	fx.mkdir("outside/sub")
	fx.file("outside/secret.txt", "SECRET", 0o600)
	fx.file("outside/victim.txt", "VICTIM", 0o644)
	fx.mkdir("ws/dir")
	fx.file("ws/file.txt", "hello\n", 0o644)
	fx.file("ws/dir/inner.txt", "inner\n", 0o644)
	fx.link(fx.outside, "ws/out")
	fx.link("../outside", "ws/outrel")
	fx.link(filepath.Join(fx.outside, "victim.txt"), "ws/outfile")
	fx.link("chain2", "ws/chain1")
	fx.link("out", "ws/chain2")
	fx.link("/etc", "ws/etc")
	fx.link("loop2", "ws/loop1")
	fx.link("loop1", "ws/loop2")
	fx.hardlink("outside/victim.txt", "ws/hard")
	fx.hardlink("outside/secret.txt", "ws/hardsecret")
	fx.mkdir("ws/.git/hooks")
	fx.file("ws/.git/hooks/pre-commit", "#!/bin/sh\nexit 0\n", 0o755)
	fx.file("ws/.git/config", "[core]\n", 0o644)
	fx.link(".git/hooks", "ws/hooklink")
	fx.file("ws/.env", "TOKEN=abc\n", 0o600)
	fx.mkdir("ws/secrets")
	fx.file("ws/secrets/key", "KEY\n", 0o600)
	fx.link(".env", "ws/envlink")
	fx.mkdir("ws/tree")
	fx.file("ws/tree/ok.txt", "ok\n", 0o644)
	fx.link("../../outside/victim.txt", "ws/tree/escape")

	f, err := New(Options{
		Root:      fx.ws,
		Protected: protectedForTest,
		Hidden:    []string{filepath.Join(fx.ws, ".env"), filepath.Join(fx.ws, "secrets"), filepath.Join(fx.outside, "secret.txt")},
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if openat2 && !f.h.openat2 {
		f.Close()
		t.Skip("openat2 is not available on this kernel")
	}
	f.h.openat2 = openat2
	t.Cleanup(func() { f.Close() })
	fx.fs = f
	fx.before = takeSnapshot(t, base, fx.ws)
	return fx
}

func (fx *fixture) path(rel string) string { return filepath.Join(fx.base, rel) }

func (fx *fixture) mkdir(rel string) {
	if err := os.MkdirAll(fx.path(rel), 0o755); err != nil {
		panic(err)
	}
}

func (fx *fixture) file(rel, content string, mode os.FileMode) {
	p := fx.path(rel)
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		panic(err)
	}
	if err := os.Chmod(p, mode); err != nil { // past the umask
		panic(err)
	}
}

func (fx *fixture) link(target, rel string) {
	if err := os.Symlink(target, fx.path(rel)); err != nil {
		panic(err)
	}
}

func (fx *fixture) hardlink(from, rel string) {
	if err := os.Link(fx.path(from), fx.path(rel)); err != nil {
		panic(err)
	}
}

// checkHost fails when anything outside the workspace changed: content,
// permission bits, link targets, or a name that appeared or vanished.
func (fx *fixture) checkHost(t *testing.T) {
	t.Helper()
	if diff := fx.before.diff(takeSnapshot(t, fx.base, fx.ws)); diff != "" {
		t.Fatalf("the host changed:\n%s", diff)
	}
}

// snapshot describes every name under a directory, without following links.
type snapshot map[string]string

func takeSnapshot(t *testing.T, root, skip string) snapshot {
	t.Helper()
	s := snapshot{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == skip {
			return filepath.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		desc := info.Mode().String()
		switch {
		case info.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			desc += " " + string(b)
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			desc += " -> " + target
		}
		s[p] = desc
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot %s: %v", root, err)
	}
	return s
}

func (s snapshot) diff(now snapshot) string {
	var lines []string
	for p, was := range s {
		if is, ok := now[p]; !ok {
			lines = append(lines, fmt.Sprintf("gone: %s (%q)", p, was))
		} else if is != was {
			lines = append(lines, fmt.Sprintf("changed: %s: %q -> %q", p, was, is))
		}
	}
	for p, is := range now {
		if _, ok := s[p]; !ok {
			lines = append(lines, fmt.Sprintf("new: %s (%q)", p, is))
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// wantKind fails unless err is an *Error of kind want.
func wantKind(t *testing.T, what string, err error, want Kind) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%s = %v, want an *Error of kind %s", what, err, want)
	}
	if e.Kind != want {
		t.Fatalf("%s = %v (kind %s, hint %q), want kind %s", what, err, e.Kind, e.Hint, want)
	}
	if e.Hint == "" {
		t.Errorf("%s: error %v has no hint", what, err)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("read %s: %v", p, err)
	}
	return string(b)
}

// noTemps fails if a temporary file of Write or Copy was left in dir.
func noTemps(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".fbtmp-") {
			t.Errorf("temporary %s left in %s", e.Name(), dir)
		}
	}
}

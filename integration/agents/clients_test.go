//go:build linux && agents

package agents

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ciDir is where scripts/setup-agents installs Node 22 and the clients.
func ciDir() string {
	if d := os.Getenv("FORGEBOX_CI_DIR"); d != "" {
		return d
	}
	return "/opt/forgebox-ci"
}

// nodeBin is the directory of Node 22's node binary.
func nodeBin() string { return filepath.Join(ciDir(), "node22", "node_modules", ".bin") }

// client finds an installed client's command in ciDir()/DIR, skipping the
// test when it is missing unless FORGEBOX_REQUIRE_AGENTS=1.
func client(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(ciDir(), dir, "node_modules", ".bin", name)
	installed(t, p)
	return p
}

// installed skips the test unless Node 22 and the paths are there, or
// fails it when FORGEBOX_REQUIRE_AGENTS=1 (set by .ci/run).
func installed(t *testing.T, paths ...string) {
	t.Helper()
	for _, need := range append([]string{filepath.Join(nodeBin(), "node")}, paths...) {
		if _, err := os.Stat(need); err != nil {
			if os.Getenv("FORGEBOX_REQUIRE_AGENTS") == "1" {
				t.Fatalf("%s is missing (%v): run scripts/setup-agents", need, err)
			}
			t.Skipf("%s is not installed: run scripts/setup-agents", need)
		}
	}
}

// mode is who runs the clients: the test's own user, and, when that is
// root, the unprivileged FORGEBOX_TEST_USER (default fbtest) too.
type mode struct {
	name     string
	uid, gid int
}

func modes(t *testing.T) []mode {
	t.Helper()
	self := mode{name: "self", uid: os.Getuid(), gid: os.Getgid()}
	if self.uid != 0 {
		return []mode{self}
	}
	self.name = "root"
	name := os.Getenv("FORGEBOX_TEST_USER")
	if name == "" {
		name = "fbtest"
	}
	u, err := user.Lookup(name)
	if err != nil {
		t.Logf("test user %s: %v: the clients run as root only", name, err)
		return []mode{self}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return []mode{self, {name: "user", uid: uid, gid: gid}}
}

// forEachMode runs f once per mode, one after the other (the machine's two
// cores are enough for one agent CLI and its forgebox at a time).
func forEachMode(t *testing.T, f func(t *testing.T, sc *scratch)) {
	t.Helper()
	for _, m := range modes(t) {
		t.Run(m.name, func(t *testing.T) {
			start := time.Now()
			f(t, newScratch(t, m))
			t.Logf("%s as %s: %v", t.Name(), m.name, time.Since(start).Round(time.Millisecond))
		})
	}
}

// scratch is one test's world: a git workspace with one commit and an
// uncommitted change, and a home of its own so that no configuration of
// the machine's user is read; all owned by the mode's user.
type scratch struct {
	t    *testing.T
	m    mode
	dir  string
	ws   string
	home string
}

func newScratch(t *testing.T, m mode) *scratch {
	t.Helper()
	dir, err := os.MkdirTemp(baseDir, "a-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	s := &scratch{t: t, m: m, dir: dir, ws: filepath.Join(dir, "ws"), home: filepath.Join(dir, "home")}
	s.chown(dir)
	for _, d := range []string{s.ws, s.home} {
		s.mkdir(d)
	}
	s.write(filepath.Join(s.ws, "README"), committedReadme)
	for _, args := range [][]string{{"init", "-q"}, {"add", "README"}, {"commit", "-qm", "first"}} {
		r := s.run(context.Background(), "git", nil, args...)
		if r.code != 0 {
			t.Fatalf("git %v: %s", args, r.stderr)
		}
	}
	// An uncommitted change, which git reset --hard would discard.
	s.write(filepath.Join(s.ws, "README"), changedReadme)
	return s
}

// mkdir creates a directory and its missing parents, owned by the mode's
// user.
func (s *scratch) mkdir(p string) {
	s.t.Helper()
	if _, err := os.Stat(p); err == nil {
		return
	}
	s.mkdir(filepath.Dir(p))
	if err := os.Mkdir(p, 0o755); err != nil {
		s.t.Fatal(err)
	}
	s.chown(p)
}

// write creates a file owned by the mode's user, with its parents.
func (s *scratch) write(p, content string) {
	s.t.Helper()
	s.mkdir(filepath.Dir(p))
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		s.t.Fatal(err)
	}
	s.chown(p)
}

func (s *scratch) chown(p string) {
	s.t.Helper()
	if os.Getuid() != 0 {
		return
	}
	if err := os.Lchown(p, s.m.uid, s.m.gid); err != nil {
		s.t.Fatal(err)
	}
}

// env is the environment every client runs with: Node 22 first on PATH,
// the scratch home, and nothing of the test's own environment.
func (s *scratch) env(extra ...string) []string {
	return append([]string{
		"PATH=" + nodeBin() + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=" + s.home, "LANG=C.UTF-8", "TERM=dumb",
		"XDG_CONFIG_HOME=" + filepath.Join(s.home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(s.home, ".local", "state"),
		"XDG_CACHE_HOME=" + filepath.Join(s.home, ".cache"),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid",
	}, extra...)
}

type result struct {
	code           int
	stdout, stderr string
	took           time.Duration
}

// run runs a program in the workspace to its end, killing it after two
// minutes.
func (s *scratch) run(ctx context.Context, name string, extraEnv []string, args ...string) result {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = s.ws
	cmd.Env = s.env(extraEnv...)
	cmd.Stdin = strings.NewReader("")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if s.m.uid != os.Getuid() {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(s.m.uid), Gid: uint32(s.m.gid), Groups: []uint32{}}}
	}
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		s.t.Fatalf("%s %q hung: killed after 2 minutes\nstdout: %s\nstderr: %s", name, args, r.stdout, r.stderr)
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		s.t.Fatalf("%s %q: %v", name, args, err)
	}
	return r
}

// denyLine is a line forgebox's policy refuses (it would write to a disk);
// run, it would first leave the marker M in the workspace.
const denyLine = "touch M; echo x > /dev/sda"

// committedReadme is the workspace's README as committed, changedReadme
// as it is left uncommitted.
const (
	committedReadme = "a workspace\n"
	changedReadme   = "a workspace, changed\n"
)

// unchanged checks that no refused command ran: the denied line's marker
// is absent and git reset --hard did not discard the uncommitted change.
func (s *scratch) unchanged() {
	s.t.Helper()
	if _, err := os.Stat(filepath.Join(s.ws, "M")); err == nil {
		s.t.Error("the denied line ran: its marker M is in the workspace")
	}
	if b, err := os.ReadFile(filepath.Join(s.ws, "README")); err != nil || string(b) != changedReadme {
		s.t.Errorf("README after the session: %q, %v; want the uncommitted change %q", b, err, changedReadme)
	}
}

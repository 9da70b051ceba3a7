package agents

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	for _, need := range []string{filepath.Join(nodeBin(), "node"), p} {
		if _, err := os.Stat(need); err != nil {
			if os.Getenv("FORGEBOX_REQUIRE_AGENTS") == "1" {
				t.Fatalf("%s is missing (%v): run scripts/setup-agents", need, err)
			}
			t.Skipf("%s is not installed: run scripts/setup-agents", need)
		}
	}
	return p
}

// scratch is one test's world: a git workspace with one commit, and a home
// of its own so that no configuration of the machine's user is read.
type scratch struct {
	t    *testing.T
	dir  string
	ws   string
	home string
}

func newScratch(t *testing.T) *scratch {
	t.Helper()
	dir, err := os.MkdirTemp("", "fbagent-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	s := &scratch{t: t, dir: dir, ws: filepath.Join(dir, "ws"), home: filepath.Join(dir, "home")}
	for _, d := range []string{s.ws, s.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s.write(filepath.Join(s.ws, "README"), "a workspace\n")
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

func (s *scratch) write(p, content string) {
	s.t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
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

const changedReadme = "a workspace, changed\n"

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

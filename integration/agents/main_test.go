//go:build linux && agents

package agents

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// forgebox is the binary under test: FORGEBOX_BIN, or built for this run.
var forgebox string

// baseDir holds the tests' scratch spaces. Not under /tmp: /tmp, /var/tmp
// and /dev/shm are private inside the sandbox, and the tests check that
// a sandboxed command cannot write to a directory it sees.
var baseDir string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "forgebox-agents-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "agents:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	// Searchable by all: the unprivileged mode's client starts it.
	os.Chmod(dir, 0o755)
	root := os.Getenv("FORGEBOX_TEST_DIR")
	if root == "" {
		if os.Getuid() == 0 {
			root = "/var/lib/forgebox-test"
		} else if c, err := os.UserCacheDir(); err == nil {
			root = filepath.Join(c, "forgebox-test")
		}
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "agents:", err)
		return 1
	}
	os.Chmod(root, 0o755)
	if baseDir, err = os.MkdirTemp(root, "agents-"); err != nil {
		fmt.Fprintln(os.Stderr, "agents:", err)
		return 1
	}
	defer os.RemoveAll(baseDir)
	os.Chmod(baseDir, 0o755)
	forgebox = os.Getenv("FORGEBOX_BIN")
	if forgebox == "" {
		forgebox = filepath.Join(dir, "forgebox")
		cmd := exec.Command("go", "build", "-trimpath", "-tags", "netgo,osusergo", "-ldflags", "-extldflags -static", "-o", forgebox, "../../cmd/forgebox")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "agents: build forgebox: %v\n%s", err, out)
			return 1
		}
	}
	return m.Run()
}

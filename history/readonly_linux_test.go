package history

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestOpenReadOnlyDir(t *testing.T) {
	if os.Geteuid() != 0 {
		dir := t.TempDir()
		if err := os.Chmod(dir, 0o500); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(dir, 0o700)
		_, _, err := Open(context.Background(), filepath.Join(dir, "history.db"), Options{})
		if err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Fatalf("Open in a read-only directory: error %v, want permission denied", err)
		}
		return
	}
	// root ignores directory modes: ask an unprivileged helper process.
	base, err := os.MkdirTemp("", "history-ro-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	bin := filepath.Join(base, "history.test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	ro := filepath.Join(base, "ro")
	for _, step := range []error{os.WriteFile(bin, data, 0o755), os.Mkdir(ro, 0o555), os.Chmod(base, 0o755), os.Chmod(ro, 0o555)} {
		if step != nil {
			t.Fatal(step)
		}
	}
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperModeEnv+"=open-read-only", helperDBEnv+"="+filepath.Join(ro, "history.db"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helper as uid 65534: %v\n%s", err, stderr.String())
	}
	msg := strings.TrimSpace(stdout.String())
	want := `create history database "` + filepath.Join(ro, "history.db") + `": permission denied`
	if msg != want {
		t.Errorf("Open in a read-only directory: error %q, want %q", msg, want)
	}
}

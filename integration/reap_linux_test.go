package integration

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// forgebox leaves no process for its caller to reap, whatever the way the
// run ends: refused flags (the child forked before flag parsing is never
// used), --help, a refused workspace, a program that is not found, the
// host network (the early child is discarded), a normal run. The caller
// here is a child subreaper that never reaps orphans, as a container's or
// a VM's minimal init may be: anything forgebox orphaned would stay a
// zombie under it.
func TestNoProcessLeftToTheCaller(t *testing.T) {
	e := newEnv(t, mode{name: "self", uid: os.Getuid(), gid: os.Getgid()})
	cmd := exec.Command(os.Args[0])
	cmd.Dir = e.ws
	cmd.Env = append(os.Environ(), "FORGEBOX_TEST_HELPER=subreaper", "FORGEBOX_HELPER_BIN="+forgebox)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("subreaper helper: %v\n%s", err, out)
	}
	if !bytes.HasPrefix(out, []byte("orphans: 0\n")) {
		t.Errorf("forgebox left processes to its caller:\n%s", out)
	}
}

// subreaperHelper becomes a child subreaper, runs forgebox in each way a run
// can end, and prints how many orphans it was handed (never reaped).
func subreaperHelper() int {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Println("error:", err)
		return 1
	}
	bin := os.Getenv("FORGEBOX_HELPER_BIN")
	for _, args := range [][]string{
		{"run", "--memory", "512k", "--", "true"},
		{"run", "--bogus-flag"},
		{"run", "--help"},
		{"run", "--workspace", "/", "--", "true"},
		{"run", "--", "/nonexistent/program"},
		{"run", "--net", "host", "--", "true"},
		{"run", "--", "true"},
		{"run", "--timeout", "100ms", "--", "sleep", "10"},
	} {
		exec.Command(bin, args...).Run()
	}
	var orphans []string
	deadline := time.Now().Add(2 * time.Second)
	for {
		orphans = orphans[:0]
		ents, _ := os.ReadDir("/proc")
		for _, d := range ents {
			if _, err := strconv.Atoi(d.Name()); err != nil {
				continue
			}
			b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
			i := bytes.LastIndexByte(b, ')')
			if err != nil || i < 0 {
				continue
			}
			f := strings.Fields(string(b[i+1:]))
			if len(f) > 1 && f[1] == strconv.Itoa(os.Getpid()) {
				orphans = append(orphans, string(b[:i+3]))
			}
		}
		// A live orphan may still be on its way out; a zombie stays.
		if len(orphans) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	fmt.Printf("orphans: %d\n%s\n", len(orphans), strings.Join(orphans, "\n"))
	return 0
}

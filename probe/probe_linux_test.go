package probe

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The JSON lines are the integration probe's interface: field names and
// the omission of empty fields stay as they are.
func TestMainOutput(t *testing.T) {
	var out bytes.Buffer
	p := t.TempDir() + "/f"
	if err := Main([]string{"write " + p + " hi", "read " + p, "read " + p + ".missing"}, &out); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`{"op":"write","args":["%[1]s","hi"],"ok":true}
{"op":"read","args":["%[1]s"],"ok":true,"out":"hi"}
{"op":"read","args":["%[1]s.missing"],"ok":false,"errno":"ENOENT","err":"open %[1]s.missing: no such file or directory"}
`, p)
	if out.String() != want {
		t.Errorf("Main wrote\n%s\nwant\n%s", out.String(), want)
	}
}

// Without a limit, forkbomb reaches its bound and leaves no process
// behind.
func TestForkbombCleansUp(t *testing.T) {
	v := Do("forkbomb", []string{"50"})
	if !v.OK || v.Out != "50 of 50" {
		t.Fatalf("forkbomb 50 = %+v; want 50 of 50", v)
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", os.Getpid(), os.Getpid()))
	if err == nil && strings.TrimSpace(string(b)) != "" {
		t.Errorf("children left: %s", b)
	}
	for _, n := range []string{"0", "-1", "x", "100000"} {
		if v := Do("forkbomb", []string{n}); v.OK || v.Errno != "EINVAL" {
			t.Errorf("forkbomb %s = %+v; want EINVAL", n, v)
		}
	}
}

func TestHogIsBounded(t *testing.T) {
	if v := Do("hog", []string{"1048576"}); !v.OK {
		t.Errorf("hog 1MiB = %+v; want ok", v)
	}
	if v := Do("hog", []string{fmt.Sprint(MaxHog + 1)}); v.OK || v.Errno != "EINVAL" {
		t.Errorf("hog past MaxHog = %+v; want EINVAL", v)
	}
}

// An ordinary program runs with the caller's credentials; the check of a
// setuid one is in the integration tests and forgebox selftest.
func TestExecCreds(t *testing.T) {
	prog, err := exec.LookPath("true")
	if err != nil {
		t.Skipf("no true: %v", err)
	}
	v := Do("exec-creds", []string{prog})
	uid := fmt.Sprint(os.Getuid())
	if !v.OK || !strings.HasPrefix(v.Out, "caller="+uid+" uid="+uid+","+uid+","+uid+","+uid+" ") {
		t.Errorf("exec-creds %s = %+v; want the caller's uid %s throughout", prog, v, uid)
	}
	if v := Do("exec-creds", []string{"/nonexistent"}); v.OK || v.Errno != "ENOENT" {
		t.Errorf("exec-creds /nonexistent = %+v; want ENOENT", v)
	}
}

// pause returns when its stdin ends: the bait process dies with its owner.
func TestPauseEndsWithStdin(t *testing.T) {
	if os.Getenv("PROBE_TEST_PAUSE") == "1" {
		fmt.Printf("%+v", Do("pause", []string{"300"}))
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPauseEndsWithStdin$")
	cmd.Env = append(os.Environ(), "PROBE_TEST_PAUSE=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	stdin.Close()
	if err := cmd.Wait(); err != nil || !strings.Contains(out.String(), "OK:true") {
		t.Fatalf("pause: %v, %q", err, out.String())
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("pause took %v to notice the end of its stdin", d)
	}
}

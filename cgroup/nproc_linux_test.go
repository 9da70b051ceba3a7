package cgroup

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// These tests measure the claim Plan rests on for callers without cgroups:
// RLIMIT_NPROC set inside a user namespace of the sandbox's own counts the
// tasks of that namespace only (Linux 5.14+ counts it in per-namespace
// ucounts), while the same limit without a user namespace counts every
// task of the user. Run as root, they use uid 65534 as "the user".

const nobody = 65534

// testUser is the user whose processes the tests count, and how to run a
// process as that user outside any sandbox.
func testUser() (uid, gid int, outside *syscall.SysProcAttr) {
	if os.Geteuid() != 0 {
		return os.Geteuid(), os.Getegid(), nil
	}
	return nobody, nobody, &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
}

// startOthers starts n sleeping processes of the test user outside any
// sandbox: the user's other work.
func startOthers(t *testing.T, n int) []*exec.Cmd {
	t.Helper()
	_, _, outside := testUser()
	var cmds []*exec.Cmd
	for range n {
		c := exec.Command("/bin/sleep", "1000")
		c.SysProcAttr = outside
		if err := c.Start(); err != nil {
			t.Fatalf("start the user's other processes: %v", err)
		}
		cmds = append(cmds, c)
	}
	t.Cleanup(func() {
		for _, c := range cmds {
			c.Process.Kill()
			c.Wait()
		}
	})
	return cmds
}

type bombResult struct {
	forks, threads int
	errno          syscall.Errno
}

// runNprocBomb runs the nproc helper with limit n under attr, checks the
// user can still start a process outside while the bomb is full, and
// returns what the bomb reported.
func runNprocBomb(t *testing.T, n int, attr *syscall.SysProcAttr) bombResult {
	t.Helper()
	hp := startHelper(t, fmt.Sprintf("nproc:%d", n), attr)
	line, err := hp.out.ReadString('\n')
	if err != nil {
		hp.cmd.Wait()
		t.Fatalf("nproc helper said %q: %v", line, err)
	}
	var r bombResult
	if _, err := fmt.Sscanf(line, "%d %d %d", &r.forks, &r.threads, &r.errno); err != nil {
		t.Fatalf("nproc helper said %q", line)
	}
	// while the bomb holds its tasks, the user starts a process outside
	_, _, outside := testUser()
	c := exec.Command("/bin/true")
	c.SysProcAttr = outside
	outsideErr := c.Run()
	hp.stdin.Close()
	if err := hp.cmd.Wait(); err != nil {
		t.Errorf("nproc helper: %v", err)
	}
	if outsideErr != nil {
		t.Errorf("the user could not start a process outside during the bomb: %v", outsideErr)
	}
	return r
}

func TestNprocInUserNSContainsForkBomb(t *testing.T) {
	h := Probe()
	if !h.NprocPerUserNS {
		t.Skipf("kernel %s counts RLIMIT_NPROC per user, not per user namespace", h.Kernel)
	}
	const limit, others = 40, 25
	startOthers(t, others)
	uid, gid, _ := testUser()
	attr := &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}},
		GidMappingsEnableSetgroups: false,
	}
	if os.Geteuid() == 0 {
		// become uid 0 of the namespace, that is nobody outside
		attr.Credential = &syscall.Credential{Uid: 0, Gid: 0, NoSetGroups: true}
	}
	if err := exec.Command("/bin/true").Run(); err != nil {
		t.Fatal(err)
	}
	probe := exec.Command("/bin/true")
	probe.SysProcAttr = &syscall.SysProcAttr{Cloneflags: attr.Cloneflags, UidMappings: attr.UidMappings,
		GidMappings: attr.GidMappings, Credential: attr.Credential}
	if err := probe.Run(); errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) ||
		err != nil && strings.Contains(err.Error(), "operation not permitted") {
		t.Skipf("cannot create a user namespace here: %v", err)
	}

	r := runNprocBomb(t, limit, attr)
	t.Logf("RLIMIT_NPROC=%d in a new user namespace, %d other tasks of uid %d outside: "+
		"%d forks + %d threads of the bomb, then %v", limit, others, uid, r.forks, r.threads, r.errno)
	if r.errno != syscall.EAGAIN {
		t.Errorf("the bomb stopped on %v, want EAGAIN", r.errno)
	}
	// the namespace holds exactly the bomb's tasks: its threads and forks
	// reach the limit, untouched by the user's other processes
	if got := r.forks + r.threads; got > limit || got < limit-1 {
		t.Errorf("forks + threads = %d + %d = %d, want %d (or one less, for a late runtime thread)",
			r.forks, r.threads, got, limit)
	}
}

func TestNprocWithoutUserNSCountsTheUsersOtherProcesses(t *testing.T) {
	const limit, others = 40, 25
	startOthers(t, others)
	uid, _, outside := testUser()
	r := runNprocBomb(t, limit, outside)
	t.Logf("RLIMIT_NPROC=%d without a user namespace, %d other tasks of uid %d: "+
		"%d forks + %d threads of the bomb, then %v", limit, others, uid, r.forks, r.threads, r.errno)
	if r.errno != syscall.EAGAIN {
		t.Errorf("the bomb stopped on %v, want EAGAIN", r.errno)
	}
	if r.forks+r.threads > limit-others {
		t.Errorf("forks + threads = %d with %d other processes and limit %d: the others were not counted",
			r.forks+r.threads, others, limit)
	}
}

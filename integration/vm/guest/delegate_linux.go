package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// The guest's unprivileged user (integration/vm/initramfs.go).
const (
	userID   = 1000
	userHome = "/home/fbuser"
)

// checkDelegatedCgroup: on cgroup v2, a user to whom root delegated a
// subtree (as systemd delegates user@UID.service) gets real limits: root
// makes the subtree and starts forgebox as the user inside a leaf of it;
// doctor then says the user can create groups there, and a hog under
// --memory 64M is OOM-killed in a group forgebox made beside the leaf,
// which is gone afterwards. cgroup v1 has no delegation to test.
func checkDelegatedCgroup(ctx context.Context, g *guest) (string, error) {
	switch {
	case g.who != "root":
		return "", skipError{"root delegates the subtree: see root/delegated_cgroup"}
	case cgroupLayout() != "v2":
		return "", skipError{"cgroup v1 has no delegation to other users"}
	}
	flags, err := g.launchFlags(ctx, "delegated_cgroup")
	if err != nil {
		return "", err
	}
	deleg := filepath.Join(cgroupRoot, fmt.Sprintf("fbvm-delegated-%d", os.Getpid()))
	leaf := filepath.Join(deleg, "leaf")
	ws := filepath.Join("/tmp", filepath.Base(deleg)+"-ws")
	leafDir, err := delegate(deleg, leaf, ws)
	defer func() {
		if leafDir != nil {
			leafDir.Close()
		}
		os.Remove(leaf)
		os.Remove(deleg)
		os.RemoveAll(ws)
	}()
	if err != nil {
		return "", err
	}
	// As the user, started inside the leaf, like a process of a delegated
	// service.
	asUser := func(cmd *exec.Cmd) {
		cmd.Dir = ws
		cmd.Env = []string{"HOME=" + userHome, "USER=fbuser", "LOGNAME=fbuser", "PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Credential:  &syscall.Credential{Uid: userID, Gid: userID},
			UseCgroupFD: true,
			CgroupFD:    int(leafDir.Fd()),
		}
	}

	o, err := g.execute(ctx, []string{g.forgeboxBin, "doctor", "--json"}, asUser)
	if err != nil {
		return "", err
	}
	var d doctorReport
	if err := json.Unmarshal(o.stdout, &d); err != nil {
		g.logf("delegated_cgroup", "%v", o)
		return "", fmt.Errorf("the doctor's report does not parse: %v", err)
	}
	var values map[string]string
	for _, c := range d.Checks {
		if c.Name == "cgroups" {
			values = c.Values
		}
	}
	if values["can_create"] != "true" || values["delegated"] != "true" || values["root"] != deleg || values["memory_limit"] != "cgroup-v2" {
		g.logf("delegated_cgroup", "%v", o)
		return "", fmt.Errorf("doctor as the user in %s: cgroups %v; want can_create and delegated true, root %s, memory_limit cgroup-v2", leaf, values, deleg)
	}

	argv := append(append([]string{g.forgeboxBin, "run", "--no-policy", "--json", "--workspace", ws}, flags...),
		"--memory", "64M", "--", "/bin/fbvm-check", "hog", "256")
	moves, terr := traceMoves()
	o, err = g.execute(ctx, argv, asUser)
	var moved []string
	if terr == nil {
		moved, terr = moves()
	}
	if terr != nil {
		g.logf("delegated_cgroup", "cannot trace moves between cgroups: %v", terr)
	}
	if err != nil {
		return "", err
	}
	r, err := g.parseRun("delegated_cgroup", o)
	if err != nil {
		return "", err
	}
	mech := ""
	if r.Enforced != nil && r.Enforced.Limits != nil {
		mech = r.Enforced.Limits.Memory.Mechanism
	}
	g.fact("delegated_limit_memory", mech)
	var problems []string
	if mech != "cgroup-v2" {
		problems = append(problems, fmt.Sprintf("memory enforced by %q, want cgroup-v2", mech))
	}
	if o.exit != 137 || !r.OOMKilled {
		problems = append(problems, fmt.Sprintf("exit %d, oom_killed %v; want 137 and true", o.exit, r.OOMKilled))
	}
	if strings.Contains(r.Stdout, "survived") {
		problems = append(problems, "the hog survived")
	}
	how := "not traced"
	if terr == nil {
		how = "cloned into it: no move traced"
		for _, m := range moved {
			if r.Enforced != nil && r.Enforced.Cgroup != "" && strings.Contains(m, r.Enforced.Cgroup) {
				problems = append(problems, fmt.Sprintf("the command was moved into its group, not cloned there: %s", m))
				how = "moved"
			}
		}
	}
	if left := afterRun(); left != "" {
		problems = append(problems, left)
	}
	if err := os.Remove(leaf); err != nil {
		problems = append(problems, fmt.Sprintf("the leaf cannot be removed: %v", err))
	}
	if err := os.Remove(deleg); err != nil {
		problems = append(problems, fmt.Sprintf("the delegated subtree cannot be removed: %v", err))
	}
	if len(problems) > 0 {
		g.logf("delegated_cgroup", "%v", o)
		return "", errors.New(strings.Join(problems, "; "))
	}
	return fmt.Sprintf("doctor as uid %d in %s: can_create, delegated; --memory 64M by %s in %s/%s (%s): hog OOM-killed (exit 137), group removed",
		userID, leaf, mech, filepath.Base(deleg), r.Enforced.Cgroup, how), nil
}

// delegate makes the subtree deleg with the leaf a delegated user's
// processes run in, hands both to the user the way systemd delegates a
// unit (the directories and their cgroup.procs, cgroup.threads and
// cgroup.subtree_control files), and a workspace ws. It returns the leaf,
// open for CLONE_INTO_CGROUP.
func delegate(deleg, leaf, ws string) (*os.File, error) {
	// Root lets its children have the controllers, as systemd does.
	if err := os.WriteFile(filepath.Join(cgroupRoot, "cgroup.subtree_control"), []byte("+memory +pids"), 0); err != nil {
		return nil, fmt.Errorf("enable memory and pids below %s: %w", cgroupRoot, err)
	}
	for _, d := range []string{deleg, leaf, ws} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return nil, err
		}
		own := []string{d}
		if d != ws {
			for _, f := range []string{"cgroup.procs", "cgroup.threads", "cgroup.subtree_control"} {
				own = append(own, filepath.Join(d, f))
			}
		}
		for _, f := range own {
			if err := os.Chown(f, userID, userID); err != nil {
				return nil, err
			}
		}
	}
	fd, err := unix.Open(leaf, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", leaf, err)
	}
	return os.NewFile(uintptr(fd), leaf), nil
}

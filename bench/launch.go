package main

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"

	"github.com/forgebox/forgebox/bench/pairs"
)

// launchBench measures the launch against bubblewrap in interleaved pairs,
// in wall and CPU time: `forgebox run -- /bin/true` with and without a
// pseudo-terminal, as the caller and (when the caller is root) as the
// ordinary user name; then the same pairs while a CPU-bound job keeps
// every core busy; then `forgebox version` against a Go program that does
// nothing, built in this run, for the Go runtime's and the packages' start;
// and, given a baseline binary (an earlier commit), both against it.
func launchBench(ws, bin, baseline string, n int, name string, load bool) {
	fmt.Printf("launch, %d interleaved pairs each, workspace %s (%s)\n", n, ws, loadavg())
	run := []string{bin, "run", "--", "/bin/true"}
	pty := []string{bin, "run", "--pty", "--", "/bin/true"}
	as := "the caller"
	if os.Getuid() == 0 {
		as = "root"
	}
	fmt.Printf(" as %s\n", as)
	compare(ws, n, "forgebox run --pty -- /bin/true", pty, "bwrap", pairs.Bwrap("/bin/true"))
	compare(ws, n, "forgebox run -- /bin/true", run, "bwrap", pairs.Bwrap("/bin/true"))
	if os.Getuid() == 0 && name != "" {
		if u, err := user.Lookup(name); err != nil {
			fmt.Printf(" as %s: skipped (%v)\n", name, err)
		} else {
			fmt.Printf(" as the ordinary user %s\n", name)
			userPairs(u, n, "forgebox run --pty -- /bin/true", pty)
			userPairs(u, n, "forgebox run -- /bin/true", run)
		}
	}
	if load {
		stop, err := pairs.Load(runtime.NumCPU())
		if err != nil {
			fail("start the load: " + err.Error())
		}
		fmt.Printf(" under load (%d busy loops, one per CPU), as %s\n", runtime.NumCPU(), as)
		compare(ws, n/2, "forgebox run -- /bin/true", run, "bwrap", pairs.Bwrap("/bin/true"))
		stop()
	}
	dir, err := os.MkdirTemp("", "forgebox-bench-nop-")
	if err != nil {
		fail(err.Error())
	}
	defer os.RemoveAll(dir)
	nop, err := pairs.BuildNop(dir)
	if err != nil {
		fail(err.Error())
	}
	fmt.Printf(" the binary's own start (goal: at most 1.5x a do-nothing static Go program)\n")
	compare(ws, n, "forgebox version", []string{bin, "version"}, "a do-nothing static Go program", []string{nop})
	fmt.Printf(" what each part adds: the same run with one part off (median of pair differences)\n")
	// /bin/true is a reader the judge knows: it runs without the private
	// caches (runner.Caches). Their cost is measured on a line that keeps
	// them, sh -c true, as a build or a script would; so is the judge's,
	// since without a judge every run keeps them.
	sh := []string{"--", "/bin/sh", "-c", "true"}
	for _, off := range []struct {
		flag, what string
		argv       []string
	}{
		{"--no-cache", "private package caches, where kept (sh -c true)", sh},
		{"--no-history", "recording in the history", []string{"--", "/bin/true"}},
		{"--no-policy", "the judge (sh -c true)", sh},
	} {
		on := append([]string{bin, "run"}, off.argv...)
		r, err := pairs.Compare(n/2, 10, pairs.Cmd{Argv: on, Dir: ws}, pairs.Cmd{Argv: append([]string{bin, "run", off.flag}, off.argv...), Dir: ws})
		if err != nil {
			fail(err.Error())
		}
		fmt.Printf("  %-64s wall %+6.2f ms, CPU %+6.2f ms (%s)\n", off.what, r.Diff(pairs.Wall), r.Diff(pairs.CPU), off.flag)
	}
	if baseline != "" {
		fmt.Printf(" against the baseline %s\n", baseline)
		compare(ws, n, "forgebox run -- /bin/true", run, "baseline run -- /bin/true", []string{baseline, "run", "--", "/bin/true"})
		compare(ws, n, "forgebox version", []string{bin, "version"}, "baseline version", []string{baseline, "version"})
	}
}

// userPairs is compare as the ordinary user u, in a workspace of theirs,
// with a minimal environment (their home, so that their own history
// database is written).
func userPairs(u *user.User, n int, aName string, a []string) {
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	ws, err := os.MkdirTemp("", "forgebox-bench-user-")
	if err != nil {
		fail(err.Error())
	}
	defer os.RemoveAll(ws)
	if err := os.Chown(ws, uid, gid); err != nil {
		fail(err.Error())
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + u.HomeDir, "LANG=C.UTF-8",
		"XDG_STATE_HOME=" + filepath.Join(ws, ".state")}
	attr := asUser(uid, gid)
	r, err := pairs.Compare(n, 20, pairs.Cmd{Argv: a, Dir: ws, Env: env, Attr: attr},
		pairs.Cmd{Argv: pairs.Bwrap("/bin/true"), Dir: ws, Env: env, Attr: attr})
	if err != nil {
		fail(err.Error())
	}
	fmt.Print(r.Format(aName, "bwrap"))
}

// loadavg is the first line of /proc/loadavg, to quote with the figures.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "load unknown"
	}
	return "load " + string(b[:len(b)-1])
}

package session

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

type procEntry struct {
	pid, ppid, sid int
	zombie         bool
}

// killSession ends the session led by leader: every process whose session id
// is the leader's (background jobs live in process groups of their own, so
// one group is not enough) and every descendant (which catches children that
// called setsid while their parent chain is still alive). SIGHUP first, as a
// closing terminal would, with SIGCONT so stopped jobs see it; whatever is
// left after grace, such as a process ignoring SIGHUP, gets SIGKILL. Scans
// repeat because a dying shell's children may still be forking.
//
// Not covered: processes that left the session and their parent chain
// (double fork + setsid) or changed their uid. Containing those is the
// sandbox's job (PID namespace, cgroup).
func killSession(leader int, grace time.Duration) {
	victims := sessionMembers(readProcs(), leader)
	signalAll(victims, unix.SIGHUP)
	signalAll(victims, unix.SIGCONT)
	deadline := time.Now().Add(grace)
	for anyAlive(victims) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	for range 10 {
		left := sessionMembers(readProcs(), leader)
		for _, pid := range victims {
			if alive(pid) {
				left = append(left, pid)
			}
		}
		if len(left) == 0 {
			return
		}
		signalAll(left, unix.SIGKILL)
		time.Sleep(5 * time.Millisecond)
	}
}

func sessionMembers(procs []procEntry, leader int) []int {
	children := map[int][]int{}
	in := map[int]bool{}
	var queue []int
	add := func(pid int) {
		if !in[pid] && pid > 1 && pid != os.Getpid() {
			in[pid] = true
			queue = append(queue, pid)
		}
	}
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p.pid)
		if p.pid == leader || p.sid == leader {
			add(p.pid)
		}
	}
	var members []int
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		members = append(members, pid)
		for _, c := range children[pid] {
			add(c)
		}
	}
	return members
}

func signalAll(pids []int, sig unix.Signal) {
	for _, pid := range pids {
		// ESRCH: gone already. EPERM: it changed its uid; nothing we can do.
		_ = unix.Kill(pid, sig)
	}
}

func anyAlive(pids []int) bool {
	for _, pid := range pids {
		if alive(pid) {
			return true
		}
	}
	return false
}

// alive is false for zombies: they hold no resources and whoever inherited
// them reaps them.
func alive(pid int) bool {
	p, err := readProc(pid)
	return err == nil && !p.zombie
}

func readProcs() []procEntry {
	dir, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var procs []procEntry
	for _, e := range dir {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, err := readProc(pid); err == nil {
			procs = append(procs, p)
		}
	}
	return procs
}

// readProc parses /proc/<pid>/stat: after the command name in parentheses
// (which may itself contain ") ") come state, ppid, pgrp and session.
func readProc(pid int) (procEntry, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procEntry{}, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procEntry{}, fmt.Errorf("parse /proc/%d/stat: no command name", pid)
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 4 {
		return procEntry{}, fmt.Errorf("parse /proc/%d/stat: %d fields", pid, len(f))
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	sid, err2 := strconv.Atoi(string(f[3]))
	if err1 != nil || err2 != nil {
		return procEntry{}, fmt.Errorf("parse /proc/%d/stat: bad ppid or session", pid)
	}
	return procEntry{pid: pid, ppid: ppid, sid: sid, zombie: string(f[0]) == "Z"}, nil
}

// programInForeground reports whether a program holds the terminal of the
// session's shell: the shell is the shallowest descendant of leader named
// like one (through forgebox run, stage 0 and the sandbox's init: a script
// or a nested shell the user starts sits below it), and its
// terminal's foreground process group is not its own. Read from /proc, so
// it knows even when the shell's prompt marker has not arrived yet.
func programInForeground(leader int) bool {
	procs := readProcs()
	children := map[int][]int{}
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p.pid)
	}
	shell := 0
	queue := []int{leader}
	for depth := 0; len(queue) > 0 && depth < 64 && shell == 0; depth++ {
		var next []int
		for _, pid := range queue {
			if c, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); err == nil {
				switch string(bytes.TrimSpace(c)) {
				case "bash", "sh", "dash", "zsh":
					shell = pid
				}
			}
			next = append(next, children[pid]...)
		}
		queue = next
	}
	if shell == 0 {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(shell) + "/stat")
	if err != nil {
		return false
	}
	f := bytes.Fields(b[bytes.LastIndexByte(b, ')')+1:])
	// state ppid pgrp session tty_nr tpgid
	return len(f) > 5 && string(f[5]) != "-1" && string(f[2]) != string(f[5])
}

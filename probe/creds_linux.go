package probe

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// execCreds starts PROGRAM ARGS and reports the credentials it runs with:
// the caller's, unless exec raised them (a setuid binary, file
// capabilities). Its output goes to a pipe that is full before it starts,
// so the program blocks at its first write, before it can drop what it
// gained; it is killed then. out is
// "caller=UID uid=R,E,S,FS gid=R,E,S,FS cap_prm=HEX cap_eff=HEX".
func execCreds(a []string) (string, error) {
	if len(a) == 0 || a[0] == "" {
		return "", fmt.Errorf("exec-creds: no program: %w", syscall.EINVAL)
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return "", fmt.Errorf("pipe: %w", err)
	}
	r, w := p[0], p[1]
	defer unix.Close(r)
	null, err := unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err == nil {
		err = fillPipe(w)
	}
	if err != nil {
		unix.Close(w)
		return "", fmt.Errorf("prepare the program's output: %w", err)
	}
	pid, err := syscall.ForkExec(a[0], a, &syscall.ProcAttr{
		Env:   []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C"},
		Files: []uintptr{uintptr(null), uintptr(w), uintptr(w)},
	})
	unix.Close(w)
	unix.Close(null)
	if err != nil {
		return "", fmt.Errorf("exec %s: %w", a[0], err)
	}
	defer func() {
		unix.Kill(pid, unix.SIGKILL) // the real uid is still ours, whatever exec did
		unix.Wait4(pid, nil, 0, nil)
	}()
	status, err := settledStatus(pid, filepath.Base(a[0]))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("caller=%d uid=%s gid=%s cap_prm=%s cap_eff=%s", os.Getuid(),
		status["Uid"], status["Gid"], status["CapPrm"], status["CapEff"]), nil
}

// fillPipe writes to the pipe until it holds no more, shrunk first to a
// page so that this is quick.
func fillPipe(w int) error {
	unix.FcntlInt(uintptr(w), unix.F_SETPIPE_SZ, os.Getpagesize())
	if err := unix.SetNonblock(w, true); err != nil {
		return err
	}
	buf := make([]byte, os.Getpagesize())
	for {
		if _, err := unix.Write(w, buf); err == unix.EAGAIN {
			break
		} else if err != nil {
			return err
		}
	}
	return unix.SetNonblock(w, false) // the program's writes must block
}

// settledStatus reads /proc/PID/status once the program runs under its own
// name and sleeps (blocked on the full pipe) or has exited: exec has then
// installed its credentials. The fields come with their whitespace folded
// to commas.
func settledStatus(pid int, name string) (map[string]string, error) {
	comm := name
	if len(comm) > 15 {
		comm = comm[:15] // TASK_COMM_LEN
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			return nil, fmt.Errorf("read the status of %s: %w", name, err)
		}
		st := map[string]string{}
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok {
				st[k] = strings.Join(strings.Fields(v), ",")
			}
		}
		state := st["State"]
		if st["Name"] == comm && state != "" && strings.ContainsAny(state[:1], "STtZ") {
			return st, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s never settled (state %q): %w", name, state, syscall.ETIMEDOUT)
		}
		time.Sleep(time.Millisecond)
	}
}

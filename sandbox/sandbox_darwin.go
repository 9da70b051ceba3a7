package sandbox

// The macOS backend: the command runs under /usr/bin/sandbox-exec with a
// Seatbelt profile written by sbpl.go, in a session and process group of
// its own. What it enforces and what it cannot is in sbpl.go and in
// Diagnose's WillEnforce.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// sandboxExec is the only sandbox-exec used: one found on PATH could be
// anyone's.
const sandboxExec = "/usr/bin/sandbox-exec"

// checkSandboxExec names the doctor's check for sandbox-exec.
const checkSandboxExec = "sandbox_exec"

// trampoline runs in the sandbox between sandbox-exec and the command: it
// reports on fd 3 that the profile applied, closes it, and becomes the
// command ($0, with its arguments). A failed exec is sh's 126 or 127.
const trampoline = `printf . >&3 && exec 3>&- && exec "$0" "$@"`

// outputAfterExit bounds how long the output may still flow once the
// command's session is dead: only a process that left it can hold the
// output open then.
const outputAfterExit = time.Second

// Run starts the command described by spec under sandbox-exec, connects it
// to st and waits until it and its session are gone.
//
// An error means the command did not run: a spec the host cannot honour
// (ErrInvalid), a missing protection (*UnavailableError: sandbox-exec
// missing or refusing the profile, a limit, a private loopback), or a
// program that cannot be executed (*ExecError). A command that ran and
// failed is a Result. With Spec.BestEffort, a missing or failing
// sandbox-exec runs the command without a sandbox, as Linux does without
// namespaces, and Enforced says so.
func Run(ctx context.Context, spec Spec, st Streams) (*Result, error) {
	tl := &darwinTimeline{start: time.Now()}
	r, err := prepareDarwin(spec)
	if err != nil {
		return nil, err
	}
	tl.mark("planned")
	if err := sandboxExecPresent(); err != nil {
		un := &UnavailableError{Layer: "sandbox-exec", Reason: err.Error(), Err: err}
		if !spec.BestEffort {
			return nil, un
		}
		r.unsandboxed(un)
	}
	if launched := st.Launched; launched != nil {
		var once sync.Once
		st.Launched = func(e Enforced) { once.Do(func() { launched(e) }) }
	}
	res, err := r.run(ctx, spec, st, tl)
	var un *UnavailableError
	if errors.As(err, &un) && un.Layer == "sandbox-exec" && spec.BestEffort && r.enforced.Sandbox {
		// sandbox-exec failed before the command started: run it again,
		// bare.
		r.unsandboxed(un)
		res, err = r.run(ctx, spec, st, tl)
	}
	return res, err
}

// run is one launch: under sandbox-exec, or bare once unsandboxed.
func (r *darwinRun) run(ctx context.Context, spec Spec, st Streams, tl *darwinTimeline) (*Result, error) {
	tmp, err := r.useTempDir()
	if tmp != "" {
		defer os.RemoveAll(tmp)
	}
	if err != nil {
		return nil, err
	}
	ds, err := newDarwinStreams(st, spec.IdleTimeout > 0)
	if err != nil {
		return nil, err
	}
	defer ds.close()
	if ds.slave != nil {
		r.plan.PTY = ds.slave.Name()
		r.enforced.PTY = true
	}
	profile := ""
	if r.enforced.Sandbox {
		if profile, err = buildSBPL(r.plan); err != nil {
			return nil, &SetupError{Step: "profile", Message: err.Error()}
		}
	}
	prog, err := r.program()
	if err != nil {
		return nil, err
	}
	tl.mark("profile written")
	proc, applied, err := launchDarwin(r, ds, profile, prog)
	if err != nil {
		return nil, err
	}
	tl.mark("command started")
	begin := time.Now()
	e := superviseDarwin(ctx, proc.Pid, spec, st.Signals, ds, applied, func() {
		if st.Launched != nil {
			st.Launched(r.enforced)
		}
	})
	tl.mark("command exited")
	cut, flushErr := ds.drain(outputAfterExit)
	ds.close()
	tl.mark("output drained")
	if !e.applied && !e.status.Signaled() {
		why := fmt.Sprintf("%s could not apply the profile (exit status %d)", sandboxExec, e.status.ExitStatus())
		if _, errs := ds.captured(); errs.Total > 0 {
			why += ": " + strings.TrimSpace(string(append(errs.Head, errs.Tail...)))
		} else {
			why += "; its message is on stderr"
		}
		return nil, &UnavailableError{Layer: "sandbox-exec", Reason: why}
	}
	res := r.result(e, ds, time.Since(begin))
	if cut {
		res.Warnings = append(res.Warnings, "a process of the command left its session and kept its output open: it was not killed, and its later output is lost")
	}
	if flushErr != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("writing output: %v", flushErr))
	}
	res.Timeline = tl.phases()
	return res, nil
}

// unsandboxed turns the run into one without Seatbelt, for --best-effort
// where sandbox-exec is missing or refuses: only the environment filtering,
// the private TMPDIR, the terminal relay and the session handling remain.
func (r *darwinRun) unsandboxed(un *UnavailableError) {
	r.enforced = r.enforced.withoutSandbox("sandbox-exec ("+un.Reason+")", "read-only host filesystem", "hidden secrets",
		"protected paths", "network isolation", "device, process and service restrictions")
	r.warnings = append(r.warnings, "running WITHOUT a sandbox: "+un.Error())
}

// useTempDir makes the run's private temporary directory, the only place
// outside the writable roots the command may write, and points TMPDIR at
// it (unless --env TMPDIR=... says otherwise). The caller removes it.
func (r *darwinRun) useTempDir() (string, error) {
	tmp, err := os.MkdirTemp("", "forgebox-run-")
	if err != nil {
		return "", &SetupError{Step: "temporary directory", Message: err.Error()}
	}
	real, err := filepath.EvalSymlinks(tmp) // /var is /private/var
	if err != nil {
		return tmp, &SetupError{Step: "temporary directory", Message: err.Error()}
	}
	r.plan.TempDir = real
	if r.enforced.Sandbox {
		r.enforced.PrivateDirs = []string{real}
	}
	if !r.explicitTempDir {
		r.env = append(slices.DeleteFunc(r.env, func(kv string) bool { return strings.HasPrefix(kv, "TMPDIR=") }), "TMPDIR="+real+"/")
		slices.Sort(r.env)
	}
	return tmp, nil
}

// launchDarwin starts sandbox-exec with the profile, in a session of its
// own: its own process group to signal and kill, and no controlling
// terminal but its pseudo-terminal. applied says whether the profile was
// applied: the trampoline reports it on fd 3 before it becomes the command.
// Without that word, sandbox-exec failed (a profile this macOS rejects, or
// forgebox already inside a sandbox), and its exit status is not the
// command's.
func launchDarwin(r *darwinRun, ds *darwinStreams, profile, prog string) (*os.Process, <-chan bool, error) {
	rd, wr, err := os.Pipe()
	if err != nil {
		return nil, nil, &SetupError{Step: "start", Message: err.Error()}
	}
	exe, argv := sandboxExec, append([]string{sandboxExec, "-p", profile, "--", "/bin/sh", "-c", trampoline, prog}, r.argv[1:]...)
	if !r.enforced.Sandbox {
		exe, argv = "/bin/sh", append([]string{"/bin/sh", "-c", trampoline, prog}, r.argv[1:]...)
	}
	proc, err := os.StartProcess(exe, argv, &os.ProcAttr{
		Dir:   r.cwd,
		Env:   r.env,
		Files: append(ds.child[:], wr),
		Sys:   &syscall.SysProcAttr{Setsid: true, Setctty: ds.slave != nil, Ctty: 0},
	})
	wr.Close()
	if err != nil {
		rd.Close()
		return nil, nil, &SetupError{Step: "start", Message: fmt.Sprintf("start %s: %v", exe, err)}
	}
	ds.started()
	ds.lastOutput.Store(time.Now().UnixNano()) // the idle clock starts with the command
	applied := make(chan bool, 1)
	go func() {
		defer rd.Close()
		var b [1]byte
		n, _ := rd.Read(b[:])
		applied <- n == 1
	}()
	return proc, applied, nil
}

// result is how the command ended, with what the run enforced.
func (r *darwinRun) result(e darwinEnding, ds *darwinStreams, d time.Duration) *Result {
	res := &Result{Cwd: r.cwd, Workspace: r.workspace, Duration: d, Enforced: r.enforced,
		Warnings: slices.Clone(r.warnings), Withheld: r.withheld, TimedOut: e.timedOut, IdleTimedOut: e.idle}
	res.Stdout, res.Stderr = ds.captured()
	if e.status.Signaled() {
		res.ExitCode, res.Signal = 128+int(e.status.Signal()), unix.SignalName(e.status.Signal())
	} else {
		res.ExitCode = e.status.ExitStatus()
	}
	if e.timedOut {
		res.ExitCode = 124
	}
	res.Usage = Usage{UserTime: time.Duration(e.usage.Utime.Nano()), SystemTime: time.Duration(e.usage.Stime.Nano()),
		MaxRSSBytes: e.usage.Maxrss} // bytes on macOS
	return res
}

// program resolves the command's program as execvp would in the sandbox
// (bash falls back to sh), where files the profile hides do not count. The
// resolved path goes to sandbox-exec: its own exec failure would look like
// the command's.
func (r *darwinRun) program() (string, error) {
	path := lookupEnv(r.env, "PATH")
	visible := r.plan.readableIn
	if !r.enforced.Sandbox {
		visible = func(string) bool { return true }
	}
	prog, err := findProgram(r.argv[0], path, r.cwd, visible)
	if errors.Is(err, syscall.ENOENT) && r.alt != "" {
		r.argv[0] = r.alt
		prog, err = findProgram(r.alt, path, r.cwd, visible)
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return "", &ExecError{Program: r.argv[0], Errno: errno}
	}
	return prog, err
}

// darwinEnding is how the command ended.
type darwinEnding struct {
	status         unix.WaitStatus
	usage          unix.Rusage
	timedOut, idle bool
	applied        bool // the profile applied and the command was started
}

// superviseDarwin relays signals, enforces the timeouts and the grace
// period, and waits for the command; launched runs once the profile is in
// force. When the command exits, what is left of its session is killed
// before it is reaped (while it is a zombie, its IDs cannot be reused).
func superviseDarwin(ctx context.Context, pid int, spec Spec, signals <-chan os.Signal, ds *darwinStreams, applied <-chan bool, launched func()) darwinEnding {
	var (
		e       darwinEnding
		timeout <-chan time.Time
		quiet   <-chan time.Time
		grace   *time.Timer
		graceC  <-chan time.Time
		last    syscall.Signal
		done    = ctx.Done()
		exited  = exitNotice(pid)
	)
	group := func(sig syscall.Signal) { unix.Kill(-pid, sig) }
	terminate := func(sig syscall.Signal) {
		group(sig)
		if grace == nil {
			grace = time.NewTimer(cmp.Or(spec.Grace, DefaultGrace))
			graceC = grace.C
		}
	}
	kill := func() { group(unix.SIGKILL); graceC = nil }
	if spec.Timeout > 0 {
		t := time.NewTimer(spec.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	if spec.IdleTimeout > 0 {
		t := time.NewTicker(max(spec.IdleTimeout/4, time.Millisecond))
		defer t.Stop()
		quiet = t.C
	}
	for running := true; running; {
		select {
		case <-exited:
			running = false
		case e.applied = <-applied:
			applied = nil
			if e.applied {
				launched()
			}
		case <-timeout:
			e.timedOut, timeout, quiet = true, nil, nil
			terminate(unix.SIGTERM)
		case <-quiet:
			if time.Since(time.Unix(0, ds.lastOutput.Load())) >= spec.IdleTimeout {
				e.timedOut, e.idle, timeout, quiet = true, true, nil, nil
				terminate(unix.SIGTERM)
			}
		case sig := <-signals:
			s, ok := sig.(syscall.Signal)
			switch {
			case !ok:
			case (s == unix.SIGINT || s == unix.SIGTERM) && s == last:
				kill() // the user insists
			default:
				last = s
				terminate(s)
			}
		case <-graceC:
			kill()
		case <-done:
			done = nil
			kill()
		}
	}
	if grace != nil {
		grace.Stop()
	}
	killSession(pid) // what the command left running
	if applied != nil {
		e.applied = <-applied // the pipe's last writer is gone
	}
	for {
		if _, err := unix.Wait4(pid, &e.status, 0, &e.usage); err != unix.EINTR {
			break
		}
	}
	return e
}

// killSession kills what is left of the session the command led: its
// process group, and the groups of its session (a shell's jobs). It runs
// while the leader is a zombie, so neither ID can have been reused. A
// process that started a session of its own (setsid) is out of reach:
// macOS has no PID namespace and no subreaper.
func killSession(leader int) {
	unix.Kill(-leader, unix.SIGKILL)
	procs, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return
	}
	for _, kp := range procs {
		if p := int(kp.Proc.P_pid); p != leader && p > 1 {
			if sid, err := unix.Getsid(p); err == nil && sid == leader {
				unix.Kill(p, unix.SIGKILL)
			}
		}
	}
}

// exitNotice is closed when process pid has exited, without reaping it. The
// kqueue waits in the runtime's poller, not on a thread of its own.
func exitNotice(pid int) <-chan struct{} {
	ch := make(chan struct{})
	kq, err := unix.Kqueue()
	if err != nil {
		go func() { waitExitBlocking(pid); close(ch) }()
		return ch
	}
	var ev unix.Kevent_t
	unix.SetKevent(&ev, pid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT)
	ev.Fflags = unix.NOTE_EXIT
	if _, err := unix.Kevent(kq, []unix.Kevent_t{ev}, nil, nil); err != nil {
		unix.Close(kq)
		if err == unix.ESRCH { // already a zombie
			close(ch)
		} else {
			go func() { waitExitBlocking(pid); close(ch) }()
		}
		return ch
	}
	unix.SetNonblock(kq, true)
	f := os.NewFile(uintptr(kq), "kqueue")
	go func() {
		defer close(ch)
		defer f.Close()
		rc, err := f.SyscallConn()
		if err != nil {
			return
		}
		zero := unix.Timespec{}
		events := make([]unix.Kevent_t, 1)
		err = rc.Read(func(fd uintptr) bool {
			n, err := unix.Kevent(int(fd), nil, events, &zero)
			return n > 0 || (err != nil && err != unix.EINTR)
		})
		if err != nil { // no poller for it: block instead
			for {
				if n, err := unix.Kevent(kq, nil, events, nil); n > 0 || (err != nil && err != unix.EINTR) {
					return
				}
			}
		}
	}()
	return ch
}

// waitExitBlocking waits for pid to exit without reaping it, by polling
// its state (wait4 has no WNOWAIT on macOS): the fallback when no kqueue
// can be had.
func waitExitBlocking(pid int) {
	const zombie = 5 // SZOMB in <sys/proc.h>
	for {
		kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
		if err != nil || kp.Proc.P_pid != int32(pid) || kp.Proc.P_stat == zombie {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func sandboxExecPresent() error {
	st, err := os.Stat(sandboxExec)
	switch {
	case err != nil:
		return fmt.Errorf("%s is missing (%v): forgebox's macOS sandbox is Seatbelt, run through it", sandboxExec, err)
	case !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("%s is not an executable file", sandboxExec)
	}
	return nil
}

// ReleasePrefork does nothing here: only Linux forks a child early.
func ReleasePrefork() {}

// QuickReport describes the host without launching anything.
func QuickReport() Report {
	r := Report{OS: "darwin", Root: os.Getuid() == 0}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		r.Kernel = "Darwin " + unix.ByteSliceToString(u.Release[:])
	}
	if v, err := unix.Sysctl("kern.osproductversion"); err == nil {
		r.Kernel = "macOS " + v + " (" + r.Kernel + ")"
	}
	if me, err := user.Current(); err == nil {
		r.User = fmt.Sprintf("%s (uid %s)", me.Username, me.Uid)
	}
	c := Check{Name: checkSandboxExec, OK: true, Required: true, Detail: sandboxExec + " is present"}
	if err := sandboxExecPresent(); err != nil {
		c.OK, c.Detail = false, err.Error()
	}
	r.Checks = []Check{c}
	return r
}

// Diagnose inspects the host and launches one real sandbox to see what
// works. It changes nothing on the host but a temporary directory.
func Diagnose(ctx context.Context) Report {
	r := QuickReport()
	launch := darwinLaunchCheck(ctx)
	r.Checks = append(r.Checks, launch, darwinPTYCheck(), darwinLimitsCheck())
	for _, c := range r.Checks {
		if !c.OK && c.Required {
			r.Missing = append(r.Missing, c.Name+": "+c.Detail)
		}
	}
	if launch.OK {
		r.WillEnforce = []string{
			"Seatbelt (sandbox-exec) profile, deny by default",
			"host read-only: writes, chmod, chown, utime and xattr changes refused outside the workspace, --rw paths and a private TMPDIR",
			"protected .git (hooks, config, worktrees' and submodules' Git files), rc files and editor/agent config, existing or not",
			"credential locations (~/.ssh, ~/.aws, keychains, browser profiles, ...) and --hide paths unreadable",
			"no network with --net none; the host's loopback only with --net loopback (--best-effort); Unix sockets only in the private TMPDIR",
			"no host devices but null, zero, random, tty and the run's own pseudo-terminal",
			"signals and process inspection limited to the sandbox; no process table, no other processes' arguments",
			"the command's session (its process groups) killed on exit, timeout and interruption",
			"not enforced on macOS: memory, task and CPU limits; a process that starts a session of its own (setsid) survives the run; nothing dies with forgebox itself",
		}
	}
	return r
}

// darwinLaunchCheck runs `true` in a real sandbox: the only reliable test.
func darwinLaunchCheck(ctx context.Context) Check {
	c := Check{Name: CheckSandbox, Required: true}
	dir, err := os.MkdirTemp("", "forgebox-doctor-")
	if err != nil {
		c.Detail = "cannot create a scratch workspace: " + err.Error()
		return c
	}
	defer os.RemoveAll(dir)
	res, err := Run(ctx, Spec{Argv: []string{"true"}, Workspace: dir, Dir: dir, Environ: []string{"PATH=" + defaultPath}}, Streams{Capture: true})
	var un *UnavailableError
	switch {
	case err == nil && res.ExitCode == 0:
		c.OK, c.Detail = true, "a sandboxed command ran"
	case err == nil:
		// sandbox-exec refused the profile or could not apply it (inside
		// another sandbox, say); it says why on stderr.
		c.Detail = fmt.Sprintf("true exited %d under sandbox-exec: %s", res.ExitCode, strings.TrimSpace(string(append(res.Stderr.Head, res.Stderr.Tail...))))
	case errors.As(err, &un):
		c.Detail = un.Error()
		c.Values = map[string]string{"layer": un.Layer}
	default:
		c.Detail = err.Error()
	}
	return c
}

func darwinPTYCheck() Check {
	m, s, err := pty.Open()
	if err != nil {
		return Check{Name: CheckPTY, Required: true, Detail: "cannot open a pseudo-terminal: " + err.Error()}
	}
	m.Close()
	s.Close()
	return Check{Name: CheckPTY, OK: true, Required: true, Detail: "pseudo-terminals are available"}
}

// darwinLimitsCheck says how the default limits are enforced: not at all.
func darwinLimitsCheck() Check {
	ram, _ := unix.SysctlUint64("hw.memsize")
	d, _, _ := seatbeltLimits(Limits{}, int64(ram), 1, true)
	return Check{Name: CheckCgroups, Detail: "macOS has no cgroups: the memory, task and CPU limits are not enforced (" + d.Pids.Reason + ")",
		Values: map[string]string{"memory_limit": string(d.Memory.Mechanism), "pids_limit": string(d.Pids.Mechanism), "cpu_limit": string(d.CPUs.Mechanism)}}
}

// darwinTimeline is when each step of the launch ended.
type darwinTimeline struct {
	start time.Time
	marks []Phase
}

func (t *darwinTimeline) mark(step string) {
	t.marks = append(t.marks, Phase{Step: step, At: time.Since(t.start)})
}

func (t *darwinTimeline) phases() []Phase { return slices.Clone(t.marks) }

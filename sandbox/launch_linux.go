package sandbox

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/forgebox/forgebox/caches"
	"github.com/forgebox/forgebox/seccomp"
	"golang.org/x/sys/unix"
)

// Run starts the command described by spec in a sandbox, connects it to st
// and waits until it and every process it started are gone.
//
// An error means the command did not run (or its setup failed): a spec the
// host cannot honour (ErrInvalid), a missing protection
// (*UnavailableError), a failed setup step (*SetupError) or a program that
// could not be executed (*ExecError). A command that ran and failed is a
// Result with its exit code.
func Run(ctx context.Context, spec Spec, st Streams) (*Result, error) {
	if !childLinked {
		return nil, &UnavailableError{Layer: "sandbox child", Reason: "this forgebox was built without cgo"}
	}
	tl := &timeline{start: monotonicNow()}
	spec.StateDir = hostStateDir(spec.StateDir)
	pl, err := newPlumbing(st, spec.IdleTimeout > 0)
	if err != nil {
		return nil, fmt.Errorf("connect standard streams: %w", err)
	}
	defer pl.close()
	rows, cols := pl.winsize()
	p, err := newRun(spec, st.PTY, rows, cols)
	if err != nil {
		return nil, err
	}
	defer p.release()
	// The child enters its namespaces while the view is planned here.
	c, discarded, err := start(pl, p, tl)
	defer discarded()
	if err != nil {
		return nil, err
	}
	filter := compileSeccomp(spec)
	limits := startLimits(spec)
	err = p.planView(spec, tl)
	// The group is the run's to remove, whatever happens next.
	if lerr := p.useLimits(<-limits); err == nil {
		err = lerr
	}
	tl.mark("limits")
	if err == nil {
		err = p.useSeccomp(spec, <-filter)
		tl.mark("seccomp filter")
	}
	if err != nil {
		c.abort()
		return nil, err
	}
	var once sync.Once
	launched := func(e Enforced) {
		if st.Launched != nil {
			once.Do(func() { st.Launched(e) })
		}
	}
	res, err := c.finish(ctx, spec, p, pl, tl, launched)
	// Without namespaces the proxy would have nowhere private to listen:
	// --net allow is refused then, even with --best-effort, which drops
	// protections, not permissions (a shared loopback would give the
	// command whatever listens on the proxy's port).
	var un *UnavailableError
	if errors.As(err, &un) && spec.BestEffort && spec.network() == NetAllow {
		err = &UnavailableError{Layer: "network allowlist (--net allow)", Err: un,
			Reason: "it needs the namespaces this host refused (" + un.Reason + "); --best-effort cannot run it without them: use --net none or --net host"}
	} else if errors.As(err, &un) && spec.BestEffort {
		p.unisolated(un.Reason)
		p.warnings = append(p.warnings, fmt.Sprintf("running WITHOUT a sandbox: %s", un.Error()))
		if c, err = spawn(pl, &p.child, tl); err == nil {
			res, err = c.finish(ctx, spec, p, pl, tl, launched)
		}
	}
	// The group is measured and removed while the protected paths are
	// checked and stage 0 is reaped.
	if res != nil {
		p.measure(res)
	}
	if p.proxy != nil && res != nil {
		var perr error
		res.Connections, res.ConnectionsOmitted, perr = p.proxy.close()
		if perr != nil {
			res.Warnings = append(res.Warnings, perr.Error())
		}
	}
	removed := make(chan error, 1)
	go func() { removed <- p.limits.close() }()
	// The private caches are tidied meanwhile too: overlay's marks go
	// (they matter only to the next mount), the lock is released, and
	// once in caches.MeasureEvery the caches are measured and the least
	// recently used evicted.
	cachesDone := make(chan error, 1)
	go func() {
		if p.caches == nil || res == nil {
			cachesDone <- nil
			return
		}
		p.caches.ws.Release(p.caches.overlays, p.caches.work)
		p.caches.release()
		_, err := caches.Maintain(p.caches.root, time.Now())
		cachesDone <- err
	}()
	// The run's changes join the workspace before the protected paths
	// are checked there.
	if p.undo != nil {
		released := p.commitUndo(res)
		tl.mark("undo committed")
		defer func() { <-released }()
	}
	if p.guard != nil {
		// Also after a failed setup: the tree is dead either way.
		moved, warnings := p.guard.afterRun(time.Now())
		// Then the config copies: the command's tree is dead, and the
		// check above has seen the real config as it was.
		cm, cw := p.guard.carryConfig()
		moved, warnings = append(moved, cm...), append(warnings, cw...)
		if res != nil {
			res.Quarantined = moved
			res.Warnings = append(res.Warnings, warnings...)
			tl.mark("checked protected paths")
		}
	}
	if c != nil {
		c.reap(tl)
	}
	if rerr := <-removed; rerr != nil && res != nil {
		res.Warnings = append(res.Warnings, rerr.Error())
	}
	if cerr := <-cachesDone; cerr != nil && res != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("private caches: %v", cerr))
	}
	if res != nil {
		tl.mark("cgroup removed")
		res.Timeline = tl.phases()
	}
	return res, err
}

// child is one launch of stage 0, from the parent's side.
type child struct {
	conn   *syncConn
	sup    *supervisor
	exited <-chan unix.WaitStatus
	reaped bool
	events chan childEvent
	// proxy, for a NetAllow run, serves on the listener the ready
	// message brings.
	proxy *runProxy
	// filter answers the seccomp listener the ready message brings, for
	// obs, which watches under network.
	filter  *seccomp.Program
	network Network
	obs     *observer
}

// reap waits for stage 0, which exits right after PID 1 (or soon after a
// kill), to be reaped. Left to the caller's init it would linger as a
// zombie wherever nothing reaps orphans (a container's or a VM's minimal
// PID 1).
func (c *child) reap(tl *timeline) {
	if c.reaped {
		return
	}
	select {
	case <-c.exited:
		c.reaped = true
		tl.mark("child reaped")
	case <-time.After(time.Second):
	}
}

// start gets a stage 0 for the run: the one the constructor forked before the
// Go runtime started, when it guessed this run's namespaces right, or a
// re-executed one. done waits for a discarded preforked child to be reaped;
// the caller calls it before returning.
func start(pl *plumbing, p *prepared, tl *timeline) (c *child, done func(), err error) {
	done = func() {}
	sock, pid, pidfd, ok := claimPrefork()
	if ok && p.child.Flags == flagIsolate|flagNewNet {
		tl.mark("child adopted")
		return adopt(sock, pid, pidfd), done, nil
	}
	if ok {
		// The guess was wrong (the host network, or no namespaces): let
		// it go while the right one starts.
		gone := make(chan struct{})
		go func() {
			adopt(sock, pid, pidfd).abort()
			close(gone)
		}()
		done = func() { <-gone }
	}
	c, err = spawn(pl, &p.child, tl)
	return c, done, err
}

// ReleasePrefork ends the sandbox child that `forgebox run` forked before
// the Go runtime started, if no run has claimed it (the flags were refused,
// say), and reaps it. A command-line program calls it before exiting, so
// that nothing is left to the caller's reaper.
func ReleasePrefork() {
	if sock, pid, pidfd, ok := claimPrefork(); ok {
		adopt(sock, pid, pidfd).abort()
	}
}

// adopt takes over the preforked child.
func adopt(sock, pid, pidfd int) *child {
	sup := newSupervisor(pidfd, true)
	exited := make(chan unix.WaitStatus, 1)
	go func() { exited <- waitExit(pid, pidfd) }()
	conn, err := newSyncConn(sock)
	if err != nil {
		unix.Close(sock)
		sup.kill()
		conn = nil
	}
	c := &child{conn: conn, sup: sup, exited: exited, events: make(chan childEvent, 4)}
	c.listen()
	return c
}

// spawn re-executes this binary as stage 0 and hands it the first frame.
func spawn(pl *plumbing, cs *childSpec, tl *timeline) (*child, error) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("create socket pair: %w", err)
	}
	conn, err := newSyncConn(pair[0])
	if err != nil {
		unix.Close(pair[1])
		return nil, fmt.Errorf("sync socket: %w", err)
	}
	stage0fd, exited, err := startChild(pl, pair[1])
	unix.Close(pair[1])
	if err != nil {
		conn.close()
		return nil, &UnavailableError{Layer: "process creation", Reason: err.Error(), Err: err}
	}
	tl.mark("child spawned")
	c := &child{conn: conn, sup: newSupervisor(stage0fd, cs.Flags&flagIsolate != 0), exited: exited, events: make(chan childEvent, 4)}
	unix.Close(stage0fd)
	conn.writeAll(cs.encodeNamespaces()) // a few bytes: the socket buffer takes them
	c.listen()
	return c, nil
}

// listen turns the child's messages into events.
func (c *child) listen() {
	if c.conn == nil {
		c.events <- childEvent{err: errEOF}
		return
	}
	go func() {
		for {
			typ, payload, err := c.conn.readFrame()
			if err != nil {
				c.events <- childEvent{err: err}
				return
			}
			c.events <- decodeEvent(c.conn, typ, payload)
		}
	}()
}

// abort ends a child that will not be told what to run, and reaps it.
// Closing the socket is enough: PID 1 reads the end of the view stream and
// exits, and stage 0 reaps it and exits. Killing stage 0 instead would
// orphan PID 1 to the caller's reaper, which may never reap it (a
// container's or a VM's minimal init, a subreaper that does not wait), so
// that is only the fallback for a child that does not go within a second.
func (c *child) abort() {
	if c.conn != nil {
		c.conn.close()
		select {
		case <-c.exited:
			c.sup.release()
			return
		case <-time.After(time.Second):
		}
	}
	c.sup.kill()
	<-c.exited
	c.sup.release()
}

// finish sends the command and its view, supervises the run and collects
// how it ended.
func (c *child) finish(ctx context.Context, spec Spec, p *prepared, pl *plumbing, tl *timeline, launched func(Enforced)) (*Result, error) {
	if c.conn == nil {
		c.abort()
		return nil, &SetupError{Step: "start", Message: "cannot talk to the sandbox child"}
	}
	defer c.conn.close()
	defer c.sup.release()
	c.sup.grace = cmp.Or(spec.Grace, DefaultGrace)
	if p.child.ProxyPort != 0 {
		c.proxy = p.proxy
	}
	c.filter, c.network = p.filter, p.enforced.Network
	// However the run ends, the observer ends with it.
	defer c.stopObserving()
	view, err := p.child.encodeView()
	if err != nil {
		c.abort()
		return nil, err
	}
	// The command's standard streams travel with the view. If the child
	// died first (namespaces refused), its message says why.
	fds := []int{int(pl.child[0].Fd()), int(pl.child[1].Fd()), int(pl.child[2].Fd())}
	_, extra := p.child.extraFDs()
	for _, f := range extra {
		fds = append(fds, int(f.Fd()))
	}
	// Before the view goes: the command cannot start until the child has
	// it, so what the caller needs in place before that (its signal
	// handlers) is.
	launched(p.enforced)
	writeErr := c.conn.writeWithFDs(view, fds)
	tl.mark("view sent")

	begin := time.Now()
	e := c.supervise(ctx, spec.Timeout, spec.IdleTimeout, pl, tl)
	if err := e.failure(p.argv[0], writeErr, c.sup.killed); err != nil {
		return nil, err
	}
	pl.started(nil) // if the run was cut short before the command ran
	flushErr := pl.wait()
	pl.close()
	tl.mark("output drained")

	warnings := append(slices.Clone(p.warnings), p.cacheFallbacks(e.cacheFallbacks, e.cacheErrno)...)
	if len(p.enforced.Missing) > 0 {
		// Accepted with --best-effort; said on stderr as well as in
		// Enforced.Missing, so that a person sees it too.
		warnings = append(warnings, "not enforced on this host (--best-effort): "+strings.Join(p.enforced.Missing, "; "))
	}
	res := &Result{Duration: time.Since(begin), Enforced: p.enforced, Warnings: warnings, TimedOut: e.timedOut, IdleTimedOut: e.idle,
		Withheld: p.withheld, Cwd: p.child.Cwd, Workspace: p.workspace}
	res.Stdout, res.Stderr = pl.captured()
	res.Attribution = c.obs != nil
	res.Refusals, res.RefusalsOmitted = c.stopObserving()
	switch {
	case e.exit != nil && e.exit.signaled:
		res.ExitCode, res.Signal = 128+e.exit.code, unix.SignalName(syscall.Signal(e.exit.code))
		res.Usage = e.exit.usage
	case e.exit != nil:
		res.ExitCode = e.exit.code
		res.Usage = e.exit.usage
	case c.sup.killed || e.timedOut:
		// PID 1 was killed before it could report: the whole tree went.
		res.ExitCode, res.Signal = 128+int(unix.SIGKILL), "SIGKILL"
	default:
		return nil, &SetupError{Step: "supervise", Message: fmt.Sprintf("the sandbox init ended unexpectedly (%s)", e.describe())}
	}
	if e.timedOut {
		res.ExitCode = 124
	}
	if flushErr != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("writing output: %v", flushErr))
	}
	return res, nil
}

// ending is how a run ended, as the supervisor saw it.
type ending struct {
	setup  *SetupError      // the child reported a failed setup step
	exit   *exitInfo        // PID 1 reported the command's exit
	status *unix.WaitStatus // stage 0 was reaped
	ready  bool             // the command was started
	// cacheFallbacks and cacheErrno: the overlays the child could not
	// mount (childEvent).
	cacheFallbacks uint32
	cacheErrno     unix.Errno
	timedOut       bool
	idle           bool // the timeout was the idle one
}

// supervise relays signals, enforces the timeouts and the grace period, and
// waits for the end: PID 1 reports the exit only once every process of the
// sandbox is dead and the output streams are closed. Without a report, the
// run ends when stage 0 is reaped and the socket closed.
func (c *child) supervise(ctx context.Context, limit, idle time.Duration, pl *plumbing, tl *timeline) ending {
	var (
		e       ending
		timeout <-chan time.Time
		quiet   <-chan time.Time
		drain   <-chan time.Time
		eof     bool
		events  = c.events
		exited  = c.exited
		done    = ctx.Done()
	)
	if limit > 0 {
		t := time.NewTimer(limit)
		defer t.Stop()
		timeout = t.C
	}
	if idle > 0 {
		// Checked a few times per idle period: the kill comes at most a
		// quarter period late.
		t := time.NewTicker(max(idle/4, time.Millisecond))
		defer t.Stop()
		quiet = t.C
	}
	for e.exit == nil && (e.status == nil || !eof) {
		select {
		case ev := <-events:
			switch {
			case ev.err != nil:
				eof, events = true, nil
			case ev.typ == msgReady:
				e.ready = true
				e.cacheFallbacks, e.cacheErrno = ev.cacheFallbacks, ev.cacheErrno
				c.sup.ready(ev.pidfd)
				tl.marks = append(tl.marks, ev.marks...)
				tl.mark("ready received")
				pl.lastOutput.Store(time.Now().UnixNano()) // the idle clock starts with the command
				pl.started(ev.master)
				c.startObserving(ev.notify)
				if err := c.serveProxy(ev.proxy); err != nil {
					// Fail closed: a NetAllow command without its proxy
					// would just fail; say why instead.
					e.setup = err
					c.sup.kill()
				}
			case ev.typ == msgError:
				e.setup = ev.setup
			case ev.typ == msgExit:
				e.exit = &ev.exit
				tl.mark("exit reported")
			}
		case ws := <-exited:
			c.reaped = true
			tl.mark("child reaped")
			e.status, exited, timeout, quiet = &ws, nil, nil, nil
			// PID 1 closes the socket as it dies; a last message may
			// still be in flight, but never wait long for it.
			drain = time.After(time.Second)
		case <-drain:
			eof = true
		case <-timeout:
			e.timedOut, timeout, quiet = true, nil, nil
			c.sup.terminate(unix.SIGTERM)
		case <-quiet:
			if e.ready && time.Since(time.Unix(0, pl.lastOutput.Load())) >= idle {
				e.timedOut, e.idle, timeout, quiet = true, true, nil, nil
				c.sup.terminate(unix.SIGTERM)
			}
		case sig := <-pl.s.Signals:
			if s, ok := sig.(syscall.Signal); ok {
				c.sup.forward(s)
			}
		case <-c.sup.graceC():
			c.sup.kill()
		case <-done:
			done = nil // once is enough
			c.sup.kill()
		}
	}
	return e
}

// startObserving answers the command's seccomp listener, if it has one,
// for the rest of the run.
func (c *child) startObserving(l *os.File) {
	switch {
	case l == nil:
	case c.filter == nil:
		// Never sent without a filter to answer with. Closed, the
		// listener makes the kernel refuse the notified calls (ENOSYS):
		// nothing refused gets through.
		l.Close()
	default:
		// Without an observer the listener is closed: refused calls get
		// ENOSYS, watched ones too. Only an eventfd can fail here.
		c.obs, _ = observe(l, c.filter, c.network)
	}
}

// stopObserving ends the observer, once the command's tree is gone, and
// returns what it recorded. Called again, it returns nothing.
func (c *child) stopObserving() ([]Refusal, int) {
	if c.obs == nil {
		return nil, 0
	}
	o := c.obs
	c.obs = nil
	return o.stop()
}

// serveProxy starts the run's proxy on the listener the child handed over.
func (c *child) serveProxy(l *os.File) *SetupError {
	switch {
	case c.proxy == nil && l != nil:
		l.Close()
	case c.proxy == nil:
	case l == nil:
		return &SetupError{Step: "network proxy", Message: "the sandbox did not hand over the proxy's listening socket"}
	default:
		if err := c.proxy.serve(l); err != nil {
			return &SetupError{Step: "network proxy", Message: "serve on the sandbox's listener: " + err.Error()}
		}
	}
	return nil
}

// failure is the error of a run whose command never ran, or nil.
func (e ending) failure(program string, writeErr error, killed bool) error {
	switch {
	case e.setup != nil && e.setup.Step == stepExec:
		return &ExecError{Program: program, Errno: e.setup.Errno}
	case e.setup != nil && e.setup.Step == stepNamespaces:
		return &UnavailableError{Layer: "namespaces", Reason: e.setup.Message, Err: e.setup}
	case e.setup != nil && e.setup.Step == stepMounts && e.setup.Errno == unix.ENOSYS:
		// mount_setattr and the new mount API came with Linux 5.12 (5.2
		// for open_tree): an older kernel cannot build the view at all.
		return &UnavailableError{Layer: "read-only filesystem view", Reason: "the kernel lacks the mount API forgebox builds the view with (mount_setattr, Linux 5.12): " + e.setup.Message, Err: e.setup}
	case e.setup != nil:
		return e.setup
	case !e.ready && writeErr != nil && !e.timedOut && !killed:
		return fmt.Errorf("send the command to the sandbox child: %w", writeErr)
	case !e.ready && !e.timedOut && !killed:
		return &SetupError{Step: "start", Message: fmt.Sprintf("the sandbox child ended without reporting (%s)", e.describe())}
	}
	return nil
}

// describe says how stage 0 ended.
func (e ending) describe() string {
	if e.status == nil {
		return "still running"
	}
	return describeStatus(*e.status)
}

func describeStatus(ws unix.WaitStatus) string {
	if ws.Signaled() {
		return "killed by " + unix.SignalName(ws.Signal())
	}
	return fmt.Sprintf("exit status %d", ws.ExitStatus())
}

// startChild re-executes this binary as stage 0 and returns a pidfd of it
// (the caller's to close). The thread that forks stays locked until stage
// 0 is reaped: the parent-death signal fires when the forking thread exits,
// not only when the process does.
func startChild(pl *plumbing, sock int) (int, <-chan unix.WaitStatus, error) {
	type started struct {
		pidfd int
		err   error
	}
	startc := make(chan started, 1)
	exited := make(chan unix.WaitStatus, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		// The command's streams come with the view; the child's own are
		// /dev/null.
		null := pl.null.Fd()
		files := []uintptr{null, null, null, uintptr(sock)}
		pidfd := -1
		pid, err := syscall.ForkExec("/proc/self/exe", []string{"forgebox", initVerb}, &syscall.ProcAttr{
			Env:   []string{},
			Files: files,
			Sys:   &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, PidFD: &pidfd},
		})
		if err != nil {
			startc <- started{-1, err}
			return
		}
		dup, derr := unix.FcntlInt(uintptr(pidfd), unix.F_DUPFD_CLOEXEC, 0)
		if derr != nil {
			dup = -1
		}
		startc <- started{dup, nil}
		exited <- waitExit(pid, pidfd)
	}()
	s := <-startc
	return s.pidfd, exited, s.err
}

// waitExit reaps stage 0. With a pidfd the wait parks in the network
// poller: a thread blocked in wait4 would keep the runtime's monitor thread
// polling every 20µs for the whole run.
func waitExit(pid, pidfd int) unix.WaitStatus {
	var ws unix.WaitStatus
	if pidfd >= 0 && unix.SetNonblock(pidfd, true) == nil {
		f := os.NewFile(uintptr(pidfd), "pidfd")
		defer f.Close()
		if rc, err := f.SyscallConn(); err == nil {
			done := false
			rerr := rc.Read(func(fd uintptr) bool {
				var info childSiginfo
				_, _, errno := unix.Syscall6(unix.SYS_WAITID, unix.P_PIDFD, fd, uintptr(unsafe.Pointer(&info)), unix.WEXITED|unix.WNOHANG, 0, 0)
				switch {
				case errno == unix.EINTR || (errno == 0 && info.Pid == 0):
					return false // not yet: wait for the pidfd to be readable
				case errno != 0:
					return true // fall back to wait4 below
				}
				ws, done = info.status(), true
				return true
			})
			if done && rerr == nil {
				return ws
			}
		}
	}
	for {
		if _, err := unix.Wait4(pid, &ws, 0, nil); err != unix.EINTR {
			return ws
		}
	}
}

// childSiginfo is siginfo_t as waitid fills it for a child.
type childSiginfo struct {
	Signo, Errno, Code int32
	_                  int32
	Pid                int32
	UID                uint32
	Status             int32
	_                  [100]byte
}

func (i *childSiginfo) status() unix.WaitStatus {
	const cldExited, cldDumped = 1, 3
	switch i.Code {
	case cldExited:
		return unix.WaitStatus(i.Status << 8)
	case cldDumped:
		return unix.WaitStatus(i.Status | 0x80)
	}
	return unix.WaitStatus(i.Status)
}

// supervisor signals the sandbox from the parent, always through pidfds:
// a bare pid could have been reaped and reused.
type supervisor struct {
	stage0   int // pidfd of stage 0 (a dup, ours to close)
	pidfd    int // PID 1, once ready
	isolated bool
	grace    time.Duration
	timer    *time.Timer
	last     syscall.Signal
	pending  syscall.Signal // arrived before the command was running
	killed   bool
}

func newSupervisor(stage0 int, isolated bool) *supervisor {
	if stage0 >= 0 {
		stage0, _ = unix.FcntlInt(uintptr(stage0), unix.F_DUPFD_CLOEXEC, 0)
	}
	return &supervisor{stage0: stage0, pidfd: -1, isolated: isolated}
}

// ready: PID 1 is known. A signal that arrived while the sandbox was being
// set up is delivered now.
func (s *supervisor) ready(pidfd int) {
	s.pidfd = pidfd
	if s.pending != 0 && !s.killed {
		s.send(s.pending)
		s.pending = 0
	}
}

// forward passes a signal to the command. A repeated SIGINT or SIGTERM
// means the user insists: the tree is killed.
func (s *supervisor) forward(sig syscall.Signal) {
	if (sig == unix.SIGINT || sig == unix.SIGTERM) && s.last == sig {
		s.kill()
		return
	}
	s.last = sig
	s.terminate(sig)
}

// terminate sends sig to the command and arms the grace timer. While the
// sandbox is still being set up, the signal waits for the command to exist;
// the grace period runs either way.
func (s *supervisor) terminate(sig syscall.Signal) {
	if s.pidfd < 0 {
		s.pending = sig
	} else {
		s.send(sig)
	}
	if s.timer == nil {
		s.timer = time.NewTimer(s.grace)
	}
}

func (s *supervisor) send(sig syscall.Signal) { unix.PidfdSendSignal(s.pidfd, sig, nil, 0) }

func (s *supervisor) graceC() <-chan time.Time {
	if s.timer == nil || s.killed {
		return nil
	}
	return s.timer.C
}

// sigKillTree asks a PID 1 without a PID namespace (--best-effort) to kill
// the command's tree and exit (FB_SIG_KILL_TREE in init_linux.h).
const sigKillTree = syscall.Signal(40)

// kill ends the whole tree. With a PID namespace, SIGKILL to PID 1 takes
// the namespace with it. Without one, PID 1 is asked to kill the tree
// itself, and killed a moment later if it does not. Before PID 1 is known,
// stage 0 is killed and PID 1 follows through its parent-death signal.
func (s *supervisor) kill() {
	s.killed = true
	switch {
	case s.pidfd >= 0 && s.isolated:
		unix.PidfdSendSignal(s.pidfd, unix.SIGKILL, nil, 0)
	case s.pidfd >= 0:
		unix.PidfdSendSignal(s.pidfd, sigKillTree, nil, 0)
		if fd, err := unix.FcntlInt(uintptr(s.pidfd), unix.F_DUPFD_CLOEXEC, 0); err == nil {
			time.AfterFunc(2*time.Second, func() {
				unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
				unix.Close(fd)
			})
		}
	case s.stage0 >= 0:
		unix.PidfdSendSignal(s.stage0, unix.SIGKILL, nil, 0)
	}
}

func (s *supervisor) release() {
	for _, fd := range []*int{&s.pidfd, &s.stage0} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
	if s.timer != nil {
		s.timer.Stop()
	}
}

// timeline collects the marks of the parent and the child.
type timeline struct {
	start int64
	marks []mark
}

func (t *timeline) mark(step string) { t.marks = append(t.marks, mark{step, monotonicNow()}) }

func (t *timeline) phases() []Phase {
	m := slices.Clone(t.marks)
	slices.SortStableFunc(m, func(a, b mark) int { return cmp.Compare(a.ns, b.ns) })
	out := make([]Phase, len(m))
	for i, x := range m {
		out[i] = Phase{Step: x.step, At: time.Duration(x.ns - t.start)}
	}
	return out
}

func microseconds(us uint64) time.Duration { return time.Duration(us) * time.Microsecond }

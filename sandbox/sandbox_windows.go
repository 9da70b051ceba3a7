package sandbox

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	conpty "github.com/forgebox/forgebox/conpty_windows"
	"golang.org/x/sys/windows"
)

// The Windows backend. The command runs as a restricted, Low-integrity
// version of the caller's token (conpty.NewRestrictedToken), in a job
// object that holds its limits and takes the whole tree down with it
// (conpty.NewJob), created suspended and resumed only once in the job. Its
// writable roots are labelled Low for the run and unlabelled after it
// (grants_windows.go); the strict profile also leaves the caller's profile
// out of what the token may read.
//
// What Windows cannot enforce per process is refused unless --best-effort:
// --net none and loopback (no per-process network cut without Windows
// Filtering Platform rules), and the hiding of secrets outside the strict
// profile. The -c form runs bash (Git for Windows'; never WSL's), or
// cmd.exe, PowerShell or another shell named with --shell.

// Timeouts of the end of a run.
const (
	treeGoneWait  = 5 * time.Second // for the job to empty after TerminateJobObject
	outputWait    = 5 * time.Second // for the output to drain after that
	undoWait      = 10 * time.Minute
	exitKilled    = 128 + 9 // the tree was killed outright, as by SIGKILL
	exitTimeout   = 124
	ntStatusFirst = 0xC0000000 // exit codes from here on are NTSTATUS errors: a crash
)

// Run starts the command described by spec in a sandbox, connects it to st
// and waits until it and every process it started are gone. Errors are as
// on Linux: ErrInvalid, *UnavailableError, *SetupError, *ExecError.
func Run(ctx context.Context, spec Spec, st Streams) (*Result, error) {
	tl := newPhases()
	r, err := checkWindows(spec)
	if err != nil {
		return nil, err
	}
	tl.mark("checked")
	cores := runtime.NumCPU()
	ram, _ := conpty.TotalRAM()
	limits, err := planJobLimits(spec.Limits, cores, ram)
	if err != nil {
		return nil, err
	}
	pl, err := newWinPlumbing(st, spec.IdleTimeout > 0)
	if err != nil {
		return nil, err
	}
	defer pl.close()

	w := &winLaunch{spec: spec, st: st, r: r, pl: pl, tl: tl, limits: limits}
	err = w.setUp(ctx)
	var res *Result
	if err == nil {
		res, err = w.run(ctx)
	}
	if err != nil {
		// What the undo could not do must not go unsaid with the error.
		if ws := w.cleanup(); len(ws) > 0 {
			err = errors.Join(err, errors.New(strings.Join(ws, "; ")))
		}
		return nil, err
	}
	return res, nil
}

// winLaunch is one run being set up and supervised.
type winLaunch struct {
	spec   Spec
	st     Streams
	r      *winRun
	pl     *winPlumbing
	tl     *phases
	limits jobLimits

	token       windows.Token
	job         *conpty.Job
	grants      *grants
	guard       *winGuard
	enforced    Enforced
	warnings    []string
	quarantined []Quarantined
	cleaned     bool
}

// setUp makes the token, the job and the grants, and fills Enforced.
func (w *winLaunch) setUp(ctx context.Context) error {
	r, spec := w.r, w.spec
	missing := slices.Clone(r.missing)
	runSID, err := conpty.RunSID()
	if err != nil {
		return err
	}
	token, info, err := conpty.NewRestrictedToken(conpty.TokenOptions{RunSID: runSID, KeepUser: !r.strict})
	sandboxed := err == nil
	if err != nil {
		un := &UnavailableError{Layer: "restricted token", Reason: err.Error(), Err: err}
		if !spec.BestEffort {
			return un
		}
		missing = append(missing, "sandbox ("+un.Error()+")")
		w.warnings = append(w.warnings, "running WITHOUT a sandbox: "+un.Error())
	}
	w.token = token
	w.tl.mark("token")

	if w.job, err = conpty.NewJob(); err != nil {
		return &SetupError{Step: "job object", Message: err.Error()}
	}
	m, err := w.jobLimits()
	if err != nil {
		return err
	}
	missing = append(missing, m...)
	uiLimited := true
	if err := w.job.SetUIRestrictions(); err != nil {
		un := &UnavailableError{Layer: "job UI restrictions", Reason: err.Error(), Err: err}
		if !spec.BestEffort {
			return un
		}
		uiLimited = false
		missing = append(missing, "job UI restrictions ("+err.Error()+")")
	}
	w.tl.mark("job")

	w.enforced = newEnforced(r.profile, r.network, w.st.PTY)
	w.enforced.Limits = &w.limits.Decision
	if !sandboxed {
		// Missing already says so, in the order it was found.
		w.enforced = w.enforced.withoutSandbox()
	}
	// The temporary directory TEMP names is made in any case; the rest
	// only for a token that needs it.
	if err := w.privateTemp(ctx, runSID, sandboxed); err != nil {
		return err
	}
	if sandboxed {
		if err := w.grant(ctx); err != nil {
			return err
		}
		w.enforced.Capabilities = capabilities(info, uiLimited)
		w.enforced.Hidden = slices.Clone(r.hidden)
	}
	w.enforced.Missing = missing
	return nil
}

// privateTemp journals and makes the run's temporary directory, after
// undoing what dead runs left.
func (w *winLaunch) privateTemp(ctx context.Context, runSID string, sandboxed bool) error {
	g, err := newGrants(runSID, w.r.strict)
	if err != nil {
		return &UnavailableError{Layer: "workspace", Reason: err.Error(), Err: err}
	}
	w.grants = g
	w.warnings = append(w.warnings, g.sweep(ctx)...)
	if err := g.temp(ctx, w.r.temp); err != nil {
		return &UnavailableError{Layer: "private temporary directory", Reason: err.Error(), Err: err}
	}
	if sandboxed {
		w.enforced.PrivateDirs = []string{w.r.temp}
		w.enforced.Writable = append(w.enforced.Writable, w.r.temp)
	}
	w.tl.mark("temporary directory")
	return nil
}

// jobLimits sets the job's limits; one Windows refuses is dropped and
// decided again under the fail-closed rule.
func (w *winLaunch) jobLimits() ([]string, error) {
	l := &w.limits
	if err := w.job.SetLimits(l.ActiveProcesses, l.JobMemoryBytes); err != nil {
		l.unenforced("pids", "the job refused the limit: "+err.Error())
		l.unenforced("memory", "the job refused the limit: "+err.Error())
		if err := w.job.SetLimits(0, 0); err != nil {
			return nil, &SetupError{Step: "job object", Message: err.Error()}
		}
	}
	if l.CPURate > 0 {
		if err := w.job.SetCPURate(l.CPURate); err != nil {
			l.unenforced("cpus", "the job refused a CPU rate (Windows 8 and later have it): "+err.Error())
		}
	}
	return l.refuse(w.spec.Limits, w.spec.BestEffort)
}

// grant journals and applies the run's changes to file security: the
// writable roots with their protected paths, and in the strict profile
// the readable ones.
func (w *winLaunch) grant(ctx context.Context) error {
	r, g := w.r, w.grants
	var roots []string
	if r.profile != ProfileReadOnly {
		roots = append(roots, r.ws)
	}
	for _, p := range r.rw {
		roots = appendNew(roots, p)
	}
	roots = outermost(roots)
	var err error
	if w.guard, err = protectWindows(r.ws, roots); err != nil {
		return err
	}
	for _, root := range roots {
		res, err := g.writable(ctx, root, w.guard.byRoot[root])
		w.noteSkipped(root, res)
		if err != nil {
			var un *UnavailableError
			if errors.As(err, &un) {
				return un
			}
			return &SetupError{Step: "workspace permissions", Message: err.Error()}
		}
		w.enforced.Writable = append(w.enforced.Writable, root)
		w.tl.mark("writable " + root)
	}
	w.enforced.Protected = append([]string{}, w.guard.protected...)
	for _, x := range w.guard.watched {
		w.enforced.Watched = append(w.enforced.Watched, x.path)
	}
	if !r.strict {
		// Locations labelled Low by Windows itself stay writable.
		if low, err := windows.KnownFolderPath(windows.FOLDERID_LocalAppDataLow, 0); err == nil {
			w.enforced.Writable = append(w.enforced.Writable, low)
		}
		return nil
	}
	for _, root := range outermost(r.ro) {
		if containedIn(root, roots) {
			continue
		}
		res, err := g.readable(ctx, root)
		w.noteSkipped(root, res)
		if err != nil {
			return &SetupError{Step: "read grants", Message: err.Error()}
		}
		w.tl.mark("readable " + root)
	}
	return nil
}

// noteSkipped warns about objects a grant left as they were.
func (w *winLaunch) noteSkipped(root string, res conpty.TreeResult) {
	n := 0
	for _, c := range res.Skipped {
		n += c
	}
	if n > 0 {
		w.warnings = append(w.warnings, fmt.Sprintf("%d entries under %s stay read-only to the command (%s)", n, root, strings.Join(res.Examples, "; ")))
	}
}

// run starts the command and supervises it to the end.
func (w *winLaunch) run(ctx context.Context) (*Result, error) {
	r := w.r
	attr := conpty.ProcAttr{Token: w.token, Job: w.job, App: r.app, CmdLine: r.cmdline, Env: r.env, Dir: r.cwd, PTY: w.pl.pty}
	if w.pl.pty == nil {
		attr.Stdin, attr.Stdout, attr.Stderr = w.pl.child[0], w.pl.child[1], w.pl.child[2]
		attr.NoWindow = true
	}
	proc, err := conpty.Start(attr)
	if err != nil {
		if ee := execError(r.argv[0], err); ee != nil {
			return nil, ee
		}
		return nil, &SetupError{Step: "start", Message: err.Error()}
	}
	defer proc.Close()
	w.tl.mark("process started")
	w.pl.started()
	w.pl.lastOutput.Store(time.Now().UnixNano())
	if w.st.Launched != nil {
		w.st.Launched(w.enforced)
	}
	begin := time.Now()
	e := w.supervise(ctx, proc)
	w.tl.mark("exited")

	// The whole tree dies with the command, as on Linux.
	w.job.Terminate(exitKilled)
	gone, cancel := context.WithTimeout(context.Background(), treeGoneWait)
	err = w.job.WaitEmpty(gone)
	cancel()
	w.tl.mark("tree gone")
	acct, _ := w.job.Accounting()
	res := &Result{Duration: time.Since(begin), Enforced: w.enforced, Cwd: r.cwd, Workspace: r.ws,
		Withheld: r.withheld, TimedOut: e.timedOut, IdleTimedOut: e.idle}
	if err != nil {
		res.Warnings = append(res.Warnings, "processes of the command outlived it: "+err.Error())
	}
	if ferr := w.pl.wait(outputWait); ferr != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("writing output: %v", ferr))
	}
	w.tl.mark("output drained")
	res.Stdout, res.Stderr = w.pl.captured()

	switch {
	case e.timedOut:
		res.ExitCode = exitTimeout
	case e.killed:
		res.ExitCode, res.Signal = exitKilled, "SIGKILL"
	default:
		res.ExitCode = int(e.code)
		if e.code >= ntStatusFirst {
			res.Warnings = append(res.Warnings, fmt.Sprintf("the command crashed (exception %#x)", e.code))
		}
	}
	res.Usage = Usage{UserTime: acct.UserTime, SystemTime: acct.KernelTime, TreeCPUTime: acct.UserTime + acct.KernelTime,
		PeakMemoryBytes: int64(acct.PeakMemoryBytes), ForksRefused: w.job.ProcessLimitHits()}
	if n := res.Usage.ForksRefused; n > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the task limit (--pids %d) refused %d process creations", w.limits.Decision.Pids.Value, n))
	}
	if n := w.job.MemoryLimitHits(); n > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the memory limit (%d bytes) refused %d allocations", w.limits.Decision.Memory.Value, n))
	}
	res.Warnings = append(res.Warnings, w.cleanup()...)
	res.Warnings = append(slices.Clone(w.warnings), res.Warnings...)
	if w.guard != nil {
		res.Quarantined = w.quarantined
	}
	res.Timeline = w.tl.phases()
	return res, nil
}

// cleanup undoes the run's changes on the host once its tree is dead:
// what it planted at watched names is moved aside, the grants are undone,
// the token and the job are closed. It returns what went wrong, as
// warnings; calling it again does nothing.
func (w *winLaunch) cleanup() []string {
	if w.cleaned {
		return nil
	}
	w.cleaned = true
	var warnings []string
	if w.job != nil {
		w.job.Terminate(exitKilled) // a setup that failed half way leaves nothing running
		gone, cancel := context.WithTimeout(context.Background(), treeGoneWait)
		w.job.WaitEmpty(gone)
		cancel()
	}
	if w.guard != nil {
		moved, ws := w.guard.afterRun(time.Now())
		w.quarantined = moved
		warnings = append(warnings, ws...)
	}
	if w.grants != nil {
		ctx, cancel := context.WithTimeout(context.Background(), undoWait)
		if err := w.grants.release(ctx); err != nil {
			warnings = append(warnings, "the run's changes to file permissions were not all undone; the next run retries: "+err.Error())
		}
		cancel()
		warnings = append(warnings, w.grants.warnings...)
		w.tl.mark("permissions restored")
	}
	if w.job != nil {
		w.job.Close()
	}
	if w.token != 0 {
		w.token.Close()
	}
	return warnings
}

// capabilities describes what the token and the job take away, for
// Enforced.Capabilities.
func capabilities(info conpty.TokenInfo, ui bool) string {
	s := "restricted token: every privilege removed but SeChangeNotifyPrivilege; integrity Low; restricting SIDs " +
		strings.Join(info.Restricting, ", ")
	if len(info.DenyOnly) > 0 {
		s += "; deny-only " + strings.Join(info.DenyOnly, ", ")
	}
	s += "; job: tree killed with forgebox, no breakaway"
	if ui {
		s += ", no " + strings.Join(conpty.UIRestrictions, ", no ")
	}
	return s
}

// outermost drops the paths that lie inside another of the list.
func outermost(paths []string) []string {
	var out []string
	for i, p := range paths {
		inner := false
		for j, q := range paths {
			if i != j && !strings.EqualFold(p, q) {
				if in, _ := winWithin(p, q); in {
					inner = true
					break
				}
			}
		}
		if !inner {
			out = appendNew(out, p)
		}
	}
	return out
}

// phases collects when each step of a run ended.
type phases struct {
	start time.Time
	mu    sync.Mutex
	marks []Phase
}

func newPhases() *phases { return &phases{start: time.Now()} }

func (t *phases) mark(step string) {
	t.mu.Lock()
	t.marks = append(t.marks, Phase{Step: step, At: time.Since(t.start)})
	t.mu.Unlock()
}

func (t *phases) phases() []Phase {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.marks)
}

// ReleasePrefork does nothing here: only Linux forks a child early.
func ReleasePrefork() {}

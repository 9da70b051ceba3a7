package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/forgebox/forgebox/cgroup"
	"golang.org/x/sys/unix"
)

// limitPlan is how a run's limits are enforced: decided, and the cgroup
// made, while the view is planned.
type limitPlan struct {
	decision cgroup.Decision
	group    *cgroup.Group
	dir      *os.File     // cgroup v2: the group, for CLONE_INTO_CGROUP
	join     []*os.File   // each hierarchy's join file (Group.JoinFiles), for the command
	host     *cgroup.Host // where the group was made, to clean up after
	missing  []string     // what --best-effort could not enforce
	warnings []string
	err      error
}

// runSeq tells apart the groups of concurrent runs of one forgebox process.
var runSeq atomic.Int64

// cleanupTimeout bounds removing a group, and the stale groups of dead
// runs, once a run is over.
const cleanupTimeout = 5 * time.Second

// startLimits plans the limits beside the view.
func startLimits(s Spec) <-chan limitPlan {
	ch := make(chan limitPlan, 1)
	go func() { ch <- planLimits(s, cgroup.Probe()) }()
	return ch
}

// planLimits decides each limit's mechanism on host h and creates the run's
// cgroup when one is needed. A limit the caller set explicitly and the host
// cannot enforce refuses the run, or with --best-effort is reported missing.
func planLimits(s Spec, h cgroup.Host) (lp limitPlan) {
	want, explicit := s.Limits.resolve(h)
	lp.decision = cgroup.Plan(want, h)
	lp.fitRlimits()
	if lp.err = lp.refuseUnenforced(explicit, s.BestEffort); lp.err != nil {
		return lp
	}
	if !lp.decision.UsesCgroup() {
		return lp
	}
	lp.host = &h
	g, err := cgroup.Create(h, "run"+strconv.FormatInt(runSeq.Add(1), 10), lp.decision.Cgroup())
	if err == nil {
		lp.group = g
		err = lp.openGroup(h)
	}
	if err != nil {
		lp.close()
		lp.withoutCgroup(err.Error())
		lp.missing = nil // decided again, now without the group
		lp.err = lp.refuseUnenforced(explicit, s.BestEffort)
	}
	return lp
}

// fitRlimits lowers the stand-in resource limits to the caller's own hard
// limits: raising a hard limit takes a privilege the sandbox lacks (the
// child's setrlimit would fail), and the lower limit binds the command
// already. A small machine's default RLIMIT_NPROC is below the default
// task limit (1707 with 512 MiB of RAM).
func (lp *limitPlan) fitRlimits() {
	d := &lp.decision
	for i, r := range d.Rlimits {
		n, err := r.Resource.Number()
		var cur unix.Rlimit
		if err != nil || unix.Getrlimit(n, &cur) != nil || cur.Max >= r.Hard {
			continue
		}
		d.Rlimits[i].Soft, d.Rlimits[i].Hard = cur.Max, cur.Max
		if r.Resource == cgroup.ResourceNproc {
			d.Pids.Value = int64(cur.Max)
			d.Pids.Reason += fmt.Sprintf("; lowered to your own hard limit of %d tasks (ulimit -Hu), which only a privileged process may raise", cur.Max)
		}
	}
}

// openGroup opens what the child needs to put the command in the group.
func (lp *limitPlan) openGroup(h cgroup.Host) error {
	if h.Version == cgroup.VersionV2 {
		dir, err := lp.group.Dir()
		if err != nil {
			return err
		}
		lp.dir = dir
	}
	join, err := lp.group.JoinFiles()
	lp.join = join
	return err
}

// withoutCgroup turns the limits planned for a cgroup into unenforced
// ones: the group could not be made after all.
func (lp *limitPlan) withoutCgroup(why string) {
	d := &lp.decision
	for _, m := range []*cgroup.Mechanism{&d.Memory.Mechanism, &d.Pids.Mechanism, &d.CPUs.Mechanism} {
		if *m == cgroup.MechanismCgroupV1 || *m == cgroup.MechanismCgroupV2 {
			*m = cgroup.MechanismNone
		}
	}
	for _, r := range []*string{&d.Memory.Reason, &d.Pids.Reason, &d.CPUs.Reason} {
		if *r == "" {
			*r = "creating the cgroup failed: " + why
		}
	}
}

// refuseUnenforced applies the fail-closed rule to the limits the caller
// set: each one without a mechanism is an error, or with --best-effort
// an entry of Missing.
func (lp *limitPlan) refuseUnenforced(explicit Limits, bestEffort bool) error {
	d := lp.decision
	for _, l := range []struct {
		set       bool
		layer     string
		mechanism cgroup.Mechanism
		reason    string
	}{
		{explicit.MemoryBytes > 0, "memory limit (--memory)", d.Memory.Mechanism, d.Memory.Reason},
		{explicit.Pids > 0, "task limit (--pids)", d.Pids.Mechanism, d.Pids.Reason},
		{explicit.CPUs > 0, "CPU limit (--cpus)", d.CPUs.Mechanism, d.CPUs.Reason},
	} {
		if !l.set || l.mechanism != cgroup.MechanismNone {
			continue
		}
		layer := l.layer
		if !bestEffort {
			return &UnavailableError{Layer: layer, Reason: l.reason}
		}
		lp.missing = append(lp.missing, fmt.Sprintf("%s (%s)", layer, l.reason))
	}
	return nil
}

// useLimits hands the plan to the run: the group to the child, the
// decision to Enforced. The prepared run owns the group from here on
// (release destroys it), also when the plan is refused.
func (p *prepared) useLimits(lp limitPlan) error {
	p.limits = lp
	if lp.err != nil {
		return lp.err
	}
	d := lp.decision
	p.enforced.Limits = &d
	p.enforced.Missing = append(p.enforced.Missing, lp.missing...)
	p.warnings = append(p.warnings, lp.warnings...)
	if lp.group != nil {
		p.enforced.Cgroup = lp.group.Name()
	}
	p.child.CgroupDir, p.child.CgroupJoin = lp.dir, lp.join
	for _, r := range d.Rlimits {
		n, err := r.Resource.Number()
		if err != nil {
			return &SetupError{Step: "limits", Message: err.Error()}
		}
		p.child.Rlimits = append(p.child.Rlimits, rlimit{Resource: uint32(n), Soft: r.Soft, Hard: r.Hard})
	}
	return nil
}

// measure adds what the group saw to the result: peak memory, CPU time,
// refused forks and an OOM kill. A command the OOM killer stopped (or whose
// tree it cut into, so that it failed) exits 137, as if killed by SIGKILL.
func (p *prepared) measure(res *Result) {
	g := p.limits.group
	if g == nil {
		return
	}
	st, err := g.Stats()
	if err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("reading the run's resource use: %v", err))
		return
	}
	res.Usage.PeakMemoryBytes = st.PeakMemoryBytes
	res.Usage.TreeCPUTime = st.CPUTime
	res.Usage.ForksRefused = st.ForksRefused
	d := p.limits.decision
	if st.ForksRefused > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the task limit (--pids %d) refused %d forks", d.Pids.Value, st.ForksRefused))
	}
	if !st.OOMKilled {
		return
	}
	res.OOMKilled = true
	if res.ExitCode != 0 && !res.TimedOut {
		res.ExitCode = 128 + 9
	}
}

// close releases the group: its descriptors, and the group itself; then it
// removes the groups that runs of forgebox processes killed meanwhile left
// behind (after the run, off the launch's path).
func (lp *limitPlan) close() error {
	if lp.dir != nil {
		lp.dir.Close()
	}
	for _, f := range lp.join {
		f.Close()
	}
	lp.dir, lp.join = nil, nil
	if lp.group != nil {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		err := lp.group.Destroy(ctx)
		lp.group = nil
		if _, serr := cgroup.CleanStale(ctx, *lp.host); serr != nil {
			err = errors.Join(err, fmt.Errorf("removing cgroups left by earlier runs: %w", serr))
		}
		return err
	}
	return nil
}

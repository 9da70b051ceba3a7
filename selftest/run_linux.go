package selftest

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/forgebox/forgebox/cgroup"
	"github.com/forgebox/forgebox/probe"
	"github.com/forgebox/forgebox/sandbox"
)

// runTimeout bounds each sandbox run of selftest: the probe takes
// milliseconds, unless something hangs.
const runTimeout = 30 * time.Second

// run is Run on Linux; ch is what spec allows on purpose.
func run(ctx context.Context, spec sandbox.Spec, o Options, ch choices) (rep *Report, err error) {
	begin := time.Now()
	b, err := plantBait(o.Exe, spec)
	if err != nil {
		return nil, err
	}
	defer func() {
		switch rerr := b.remove(); {
		case rerr == nil:
		case err != nil:
			err = fmt.Errorf("%w; and %v", err, rerr)
		default:
			rep.Warnings = append(rep.Warnings, rerr.Error())
		}
	}()
	rep = &Report{Bait: b.root, Ignored: []string{}, Warnings: []string{}}
	hide := []string{b.path(baitSecretFile), b.path(baitSecretDir)}

	// The proxy is attacked unless the user's allowlist lets it reach the
	// bait (--net allow=127.0.0.1): then it is meant to.
	b.proxy = spec.Network == sandbox.NetAllow && !allowlistReaches(spec.Allowlist, b.tcp)
	attacks := plan(b.target)
	res, err := sandbox.Run(ctx, probeSpec(spec, o.Exe, b.ws, probeArgs(attacks), hide), sandbox.Streams{Capture: true, PTY: true})
	if err == nil && ctx.Err() != nil {
		err = ErrInterrupted
	}
	if err != nil {
		return nil, err
	}
	host := b.check(res)
	verdicts := matchVerdicts(attacks, probe.Decode(slices.Concat(res.Stdout.Head, res.Stdout.Tail)))
	pids, memory, err := runLimits(ctx, probeSpec(spec, o.Exe, b.ws, nil, hide), ch)
	if err == nil && ctx.Err() != nil {
		err = ErrInterrupted
	}
	if err != nil {
		return nil, err
	}
	// Checked last: a signal that got through has long been delivered.
	if alive, how := b.hostAlive(); !alive {
		host.changed[classSignal] = append(host.changed[classSignal], fmt.Sprintf("the host process %d ended: %s", b.hostPID, how))
	} else {
		host.notes[classSignal] = append(host.notes[classSignal], "host: the process still runs")
	}

	for _, c := range classes {
		switch {
		case c.id == classPids:
			rep.Classes = append(rep.Classes, judgePids(pids, ch))
		case c.id == classMemory:
			rep.Classes = append(rep.Classes, judgeMemory(memory, hogBytes, ch, o.bytes))
		case c.id == classSetuid && b.setuid == "":
			rep.Classes = append(rep.Classes, notTested(c, b.noSetuid))
		default:
			rep.Classes = append(rep.Classes, judge(c, attacks[c.id], verdicts[c.id], host, res.Enforced, ch))
		}
	}
	rep.Enforced, rep.Limits = &res.Enforced, pids.limits
	for _, w := range res.Warnings {
		if !strings.Contains(w, b.root) { // the quarantine of the bait is in the evidence
			rep.Warnings = append(rep.Warnings, w)
		}
	}
	rep.Duration = time.Since(begin)
	rep.conclude()
	return rep, nil
}

// probeSpec is the user's spec turned on the bait: the probe as the
// command, the bait workspace, the bait secrets hidden, and the forgebox
// executable visible whatever the profile.
func probeSpec(spec sandbox.Spec, exe, ws string, ops, hide []string) sandbox.Spec {
	s := spec
	s.Argv, s.Command, s.Shell = append([]string{exe, ProbeVerb}, ops...), "", ""
	s.Workspace, s.Dir = ws, ws
	s.ReadOnly = append(slices.Clone(spec.ReadOnly), exe)
	s.Hide = append(slices.Clone(spec.Hide), hide...)
	s.Timeout, s.Grace = runTimeout, time.Second
	// The bait's home, where the credential table's files are planted,
	// is the probe's: the sandbox hides the table in every home it knows.
	s.Environ = slices.DeleteFunc(slices.Clone(spec.Environ), func(kv string) bool { return strings.HasPrefix(kv, "HOME=") })
	s.Environ = append(s.Environ, "HOME="+filepath.Join(filepath.Dir(ws), baitHome))
	return s
}

// runLimits attacks selftest's own small limits from sandboxes of spec (a
// probeSpec without operations), through whatever mechanism this host
// gives them: a fork bomb, then, only where memory can be limited at all,
// a memory hog. --best-effort lets a limit the host cannot enforce through,
// so that the run reports it.
func runLimits(ctx context.Context, s sandbox.Spec, ch choices) (pids, memory limitRun, err error) {
	if ch.noPids && ch.noMemoryLimit {
		return pids, memory, nil
	}
	s.BestEffort = true
	s.Limits = sandbox.Limits{Pids: limitPids, MemoryBytes: limitMemory}
	if ch.noPids {
		s.Limits.Pids = sandbox.NoLimit
	} else {
		s.Argv = append(s.Argv, probe.Encode("forkbomb", fmt.Sprint(forkbombCount)))
	}
	if ch.noMemoryLimit {
		s.Limits.MemoryBytes = sandbox.NoLimit
	}
	pids, err = limitAttack(ctx, s)
	memory = limitRun{limits: pids.limits}
	if err != nil || ch.noMemoryLimit || pids.limits == nil || pids.limits.Memory.Mechanism == cgroup.MechanismNone {
		return pids, memory, err // where nothing would stop the hog, it does not run
	}
	s.Argv = append(s.Argv[:2], probe.Encode("hog", fmt.Sprint(hogBytes)))
	s.Limits.Pids = 0
	memory, err = limitAttack(ctx, s)
	return pids, memory, err
}

// limitAttack runs one attack on the limits and reads how it ended.
func limitAttack(ctx context.Context, s sandbox.Spec) (limitRun, error) {
	res, err := sandbox.Run(ctx, s, sandbox.Streams{Capture: true})
	if err != nil {
		return limitRun{}, err
	}
	lr := limitRun{ran: true, limits: res.Enforced.Limits, oomKilled: res.OOMKilled, refused: res.Usage.ForksRefused,
		exit: fmt.Sprintf("exit %d", res.ExitCode)}
	if res.Signal != "" {
		lr.exit = res.Signal
	}
	if vs := probe.Decode(slices.Concat(res.Stdout.Head, res.Stdout.Tail)); len(vs) > 0 {
		lr.verdict = &vs[0]
	}
	return lr, nil
}

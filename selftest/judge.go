package selftest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/forgebox/forgebox/cgroup"
	"github.com/forgebox/forgebox/probe"
	"github.com/forgebox/forgebox/sandbox"
)

// Class identifiers, stable for JSON consumers.
const (
	classSecret         = "secret-read"
	classHostWrite      = "host-write"
	classHostChmod      = "host-chmod"
	classProtected      = "protected-write"
	classUnixSocket     = "host-unix-socket"
	classAbstractSocket = "abstract-socket"
	classNetwork        = "host-network"
	classSeeProcess     = "see-host-processes"
	classSignal         = "signal-host-processes"
	classPtrace         = "ptrace"
	classMount          = "mount"
	classModule         = "kernel-module"
	classIOURing        = "io-uring"
	classTIOCSTI        = "tiocsti"
	classSetuid         = "setuid"
	classUserNS         = "nested-userns"
	classPids           = "pids-limit"
	classMemory         = "memory-limit"
)

// class is one kind of attack selftest makes, and the layers that must
// stop it: an escape while every one of them was missing (--best-effort)
// is "not enforced", an escape with one of them in place is an ESCAPE.
type class struct {
	id, title string
	guards    []layer
}

// classes in the order selftest reports them (and the probe attacks).
var classes = []class{
	// Landlock keeps hidden paths out of reach only beside the mount view:
	// without namespaces the run reports "hidden secrets" missing.
	{classSecret, "read a hidden secret", []layer{layerMounts}},
	{classHostWrite, "write outside the workspace", []layer{layerMounts, layerLandlockFS}},
	{classHostChmod, "chmod or touch outside the workspace", []layer{layerMounts}},
	{classProtected, "write a protected workspace path", []layer{layerMounts}},
	{classUnixSocket, "connect to a host Unix socket", []layer{layerMounts, layerSeccompUnix}},
	{classAbstractSocket, "connect to a host abstract socket", []layer{layerNetNS, layerLandlockScope}},
	{classNetwork, "reach the host network", []layer{layerNetNS, layerLandlockTCP}},
	{classSeeProcess, "see host processes", []layer{layerPidNS}},
	{classSignal, "signal host processes", []layer{layerPidNS, layerLandlockScope}},
	{classPtrace, "ptrace", []layer{layerSeccomp}},
	{classMount, "mount", []layer{layerSeccomp, layerNoCaps}},
	{classModule, "load a kernel module", []layer{layerSeccomp, layerNoCaps}},
	{classIOURing, "io_uring", []layer{layerSeccomp}},
	{classTIOCSTI, "inject terminal input (TIOCSTI)", []layer{layerSeccomp}},
	{classSetuid, "escalate through a setuid binary", []layer{layerNoNewPrivs, layerMounts, layerUserNS}},
	setidClass,
	{classUserNS, "create a nested user namespace", []layer{layerSeccomp}},
	{classPids, "escape the task limit (fork bomb)", nil},
	{classMemory, "escape the memory limit", nil},
}

func findClass(id string) class {
	for _, c := range classes {
		if c.id == id {
			return c
		}
	}
	panic("selftest: unknown class " + id)
}

// layer is one protection of a run, as Enforced reports it.
type layer string

const (
	layerMounts        layer = "read-only mount view"
	layerLandlockFS    layer = "Landlock file rules"
	layerLandlockTCP   layer = "Landlock TCP rules"
	layerLandlockScope layer = "Landlock scoping"
	layerNetNS         layer = "network namespace"
	layerPidNS         layer = "PID namespace"
	layerUserNS        layer = "user namespace"
	layerSeccomp       layer = "seccomp filter"
	layerSeccompUnix   layer = "seccomp refusal of Unix sockets"
	layerNoNewPrivs    layer = "no_new_privs"
	layerNoCaps        layer = "capability drop"
)

func (l layer) present(en sandbox.Enforced) bool {
	switch l {
	case layerMounts:
		return en.Sandbox && en.ReadOnlyRoot && slices.Contains(en.Namespaces, "mount")
	case layerLandlockFS:
		return en.LandlockABI > 0
	case layerLandlockTCP:
		return en.LandlockTCP
	case layerLandlockScope:
		return en.LandlockScoped
	case layerNetNS:
		return slices.Contains(en.Namespaces, "net")
	case layerPidNS:
		return slices.Contains(en.Namespaces, "pid")
	case layerUserNS:
		return slices.Contains(en.Namespaces, "user")
	case layerSeccomp:
		return en.Seccomp
	case layerSeccompUnix:
		return en.Seccomp && en.UnixSockets == sandbox.UnixSocketsRefused
	case layerNoNewPrivs:
		return en.NoNewPrivs
	case layerNoCaps:
		return en.Capabilities == "none"
	}
	return false
}

// choices are what the user's own flags allow on purpose, and whether
// missing layers are accepted.
type choices struct {
	hostNetwork           bool // --net host
	noMemoryLimit, noPids bool // --memory none, --pids none
	bestEffort            bool
}

func choicesOf(spec sandbox.Spec) choices {
	return choices{hostNetwork: spec.Network == sandbox.NetHost, noMemoryLimit: spec.Limits.MemoryBytes == sandbox.NoLimit,
		noPids: spec.Limits.Pids == sandbox.NoLimit, bestEffort: spec.BestEffort}
}

// findings is what the host showed after the main run, by class: what
// changed there (each an escape), what could not be checked, and what is
// worth saying (a quarantine, a check that passed).
type findings struct {
	changed, unclear, notes map[string][]string
}

// judge gives a class's verdict from the probe's verdicts on its attempts
// (nil where the probe reported nothing), what the host showed, and what
// the run enforced.
func judge(c class, atts []attempt, vs []*probe.Verdict, host findings, en sandbox.Enforced, ch choices) ClassResult {
	r := ClassResult{Class: c.id, Title: c.title, Evidence: []string{}}
	escaped, undecided := false, 0
	for i, a := range atts {
		if vs[i] == nil {
			undecided++
			r.Evidence = append(r.Evidence, a.show+": no verdict")
			continue
		}
		eff, note := a.expect(*vs[i])
		escaped = escaped || eff == gotThrough
		if eff == unclear {
			undecided++
		}
		r.Evidence = append(r.Evidence, a.show+": "+outcome(*vs[i], note))
	}
	changed := host.changed[c.id]
	for _, what := range changed {
		r.Evidence = append(r.Evidence, "host: "+what)
	}
	for _, what := range host.unclear[c.id] {
		undecided++
		r.Evidence = append(r.Evidence, "host: "+what)
	}
	r.Evidence = append(r.Evidence, host.notes[c.id]...)
	escaped = escaped || len(changed) > 0
	switch {
	case c.id == classNetwork && ch.hostNetwork:
		return r.allowed("--net host")
	case escaped:
		return r.escapedWith(c.guards, en, ch)
	case undecided > 0:
		return r.inconclusive(fmt.Sprintf("%d of %d attempts gave no clear verdict", undecided, len(atts)))
	}
	r.Verdict = VerdictBlocked
	return r
}

// outcome is how an attempt ended, for the evidence: "ok", the errno, or
// the error, with the expectation's note.
func outcome(v probe.Verdict, note string) string {
	s := "ok"
	switch {
	case v.OK:
	case v.Errno != "":
		s = v.Errno
	default:
		s = "failed (" + v.Err + ")"
	}
	if note != "" {
		s += ", " + note
	}
	return s
}

// escapedWith is an escape, or "not enforced" when none of the layers
// that must stop the class was in place: then --best-effort accepts it.
func (r ClassResult) escapedWith(guards []layer, en sandbox.Enforced, ch choices) ClassResult {
	var absent []string
	for _, g := range guards {
		if g.present(en) {
			r.Verdict, r.Fails = VerdictEscaped, true
			return r
		}
		absent = append(absent, string(g))
	}
	return r.notEnforced("the run had no "+strings.Join(absent, " and no "), ch)
}

func (r ClassResult) notEnforced(reason string, ch choices) ClassResult {
	r.Verdict, r.Reason, r.Fails = VerdictNotEnforced, reason, !ch.bestEffort
	return r
}

func (r ClassResult) allowed(flag string) ClassResult {
	r.Verdict, r.Reason, r.Fails = VerdictAllowed, flag, false
	return r
}

func (r ClassResult) inconclusive(reason string) ClassResult {
	r.Verdict, r.Reason, r.Fails = VerdictInconclusive, reason, true
	return r
}

// notTested is a class this host offers no way to attack: nothing to fail.
func notTested(c class, reason string, evidence ...string) ClassResult {
	return ClassResult{Class: c.id, Title: c.title, Verdict: VerdictNotTested, Reason: reason, Evidence: append([]string{}, evidence...)}
}

// limitRun is how a run under selftest's own small limits went.
type limitRun struct {
	ran       bool
	limits    *cgroup.Decision
	verdict   *probe.Verdict // the forkbomb's or the hog's, nil if none came
	oomKilled bool
	exit      string // how the probe ended: "exit 0", "SIGKILL"
	refused   int64  // forks the cgroup refused, when it counts them
}

// judgePids: the fork bomb must be stopped below the task limit.
func judgePids(lr limitRun, ch choices) ClassResult {
	c := findClass(classPids)
	r := ClassResult{Class: c.id, Title: c.title, Evidence: []string{}}
	if ch.noPids {
		return r.allowed("--pids none")
	}
	if !lr.ran || lr.limits == nil {
		return r.inconclusive("the limit run did not happen")
	}
	e := lr.limits.Pids
	if e.Mechanism == cgroup.MechanismNone {
		return r.notEnforced(e.Reason, ch)
	}
	limit := fmt.Sprintf("--pids %d by %s", e.Value, e.Mechanism)
	if lr.verdict == nil {
		return r.inconclusive(fmt.Sprintf("the probe died before reporting (%s) under %s", lr.exit, limit))
	}
	v := *lr.verdict
	r.Evidence = append(r.Evidence, fmt.Sprintf("forkbomb: %s alive at once, then %s, under %s", v.Out, outcome(v, ""), limit))
	if lr.refused > 0 {
		r.Evidence = append(r.Evidence, fmt.Sprintf("the cgroup refused %d fork(s)", lr.refused))
	}
	reached, _ := strconv.ParseInt(strings.Fields(v.Out + " -1")[0], 10, 64)
	switch {
	case v.OK || reached >= e.Value:
		r.Verdict, r.Fails = VerdictEscaped, true
	case reached < 0:
		return r.inconclusive("the fork bomb reported no count")
	default:
		r.Verdict = VerdictBlocked
	}
	return r
}

// judgeMemory: the hog must be stopped at the memory limit; bytes renders
// the sizes in the evidence.
func judgeMemory(lr limitRun, hogBytes int64, ch choices, bytes func(int64) string) ClassResult {
	c := findClass(classMemory)
	r := ClassResult{Class: c.id, Title: c.title, Evidence: []string{}}
	if ch.noMemoryLimit {
		return r.allowed("--memory none")
	}
	if lr.limits == nil {
		return r.inconclusive("the limit run did not happen")
	}
	e := lr.limits.Memory
	if e.Mechanism == cgroup.MechanismNone {
		return r.notEnforced(e.Reason, ch)
	}
	if !lr.ran {
		return r.inconclusive("the memory hog did not run")
	}
	limit := fmt.Sprintf("--memory %s by %s", bytes(e.Value), e.Mechanism)
	hog := "hog " + bytes(hogBytes)
	switch {
	case lr.oomKilled:
		r.Evidence = append(r.Evidence, fmt.Sprintf("%s: OOM-killed under %s", hog, limit))
		r.Verdict = VerdictBlocked
	case lr.verdict != nil && lr.verdict.OK:
		r.Evidence = append(r.Evidence, fmt.Sprintf("%s: touched all of it under %s", hog, limit))
		r.Verdict, r.Fails = VerdictEscaped, true
	case lr.verdict != nil:
		r.Evidence = append(r.Evidence, fmt.Sprintf("%s: %s under %s", hog, outcome(*lr.verdict, ""), limit))
		r.Verdict = VerdictBlocked
	case lr.exit == "SIGKILL":
		r.Evidence = append(r.Evidence, fmt.Sprintf("%s: killed by SIGKILL under %s (no OOM kill reported)", hog, limit))
		r.Verdict = VerdictBlocked
	default:
		return r.inconclusive(fmt.Sprintf("the hog ended without a verdict (%s) under %s", lr.exit, limit))
	}
	return r
}

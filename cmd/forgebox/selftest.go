package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/forgebox/forgebox/agent"
	"github.com/forgebox/forgebox/sandbox"
	"github.com/forgebox/forgebox/selftest"
)

const selftestUsage = `Usage:
  forgebox selftest [flags of forgebox run] [--json]

Starts a sandbox with the flags forgebox run would get, attacks from inside
it bait that selftest plants on this host (a secret, files outside the
workspace, sockets, a process of yours), checks the host afterwards, and
reports for each attack class whether it was blocked. The task and memory
limits are attacked in two more runs, under small limits of selftest's own
(--pids 64, --memory 64MiB). The bait is removed afterwards.

Exit status: 0 when every class was blocked (or allowed by your own flags,
or has nothing to attack on this host); 1 when something escaped, could not
be judged, or is not enforced on this host (with --best-effort, what the
host cannot enforce is reported and does not fail); 125 when no sandbox
could start; 130 when interrupted.

The probe works in a bait workspace of its own, on a pseudo-terminal:
--workspace, --shell, --pty, --no-pty, --no-stdin, --max-output, --trace,
--timeout and --grace are accepted and not applied. Flags:
`

// probeVerb is argv[1] of the probe selftest runs in its sandboxes (main
// hands the rest to probe.Main).
const probeVerb = selftest.ProbeVerb

// notApplied are the flags of forgebox run that selftest accepts and does
// not apply.
var notApplied = []string{"workspace", "shell", "pty", "no-pty", "no-stdin", "max-output", "trace", "timeout", "grace"}

// exitInterrupted is the status after Ctrl-C, as a shell would report it.
const exitInterrupted = 128 + 2

func (e env) selftest(args []string) int {
	var f runFlags
	fs := f.flagSet()
	fs.Lookup("json").Usage = "print the report as one JSON object on stdout"
	fs.Lookup("c").Usage = "refused: selftest runs its own probe"
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(e.stdout, selftestUsage)
			fs.SetOutput(e.stdout)
			fs.PrintDefaults()
			return 0
		}
		return e.selftestFailed(f.jsonOut || wantsJSON(args), sandbox.Invalidf("selftest: %v; see forgebox selftest --help", err))
	}
	if f.command != "" || fs.NArg() > 0 {
		return e.selftestFailed(f.jsonOut, sandbox.Invalidf("selftest runs its own probe: give it the flags of forgebox run, without a command"))
	}
	spec, err := f.spec(nil)
	if err != nil {
		return e.selftestFailed(f.jsonOut, err)
	}
	if spec.Network == sandbox.NetAllow {
		var warnings []string
		if spec.Allowlist, warnings, err = configuredAllowlist(f, spec); err != nil {
			return e.selftestFailed(f.jsonOut, err)
		}
		for _, w := range warnings {
			e.errorf("warning: %s", w)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return e.selftestFailed(f.jsonOut, fmt.Errorf("find forgebox's own executable, which runs the probe: %w", err))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	rep, err := selftest.Run(ctx, spec, selftest.Options{Exe: exe, FormatBytes: humanBytes})
	if err != nil && (errors.Is(err, selftest.ErrInterrupted) || ctx.Err() != nil) {
		e.errorf("selftest interrupted; its bait was removed")
		return exitInterrupted
	}
	if err != nil {
		return e.selftestFailed(f.jsonOut, err)
	}
	fs.Visit(func(fl *flag.Flag) {
		if slices.Contains(notApplied, fl.Name) {
			rep.Ignored = append(rep.Ignored, "--"+fl.Name)
		}
	})
	if f.jsonOut {
		e.printJSON(selftestJSON{Report: rep, DurationMS: ms(rep.Duration)})
	} else {
		writeSelftest(e.stdout, rep)
	}
	return rep.ExitCode
}

// selftestFailed reports that selftest could not attack anything, in
// forgebox's voice and, with --json, as the report's error.
func (e env) selftestFailed(jsonOut bool, err error) int {
	code := e.fail(runFlags{}, err) // the message, as forgebox run gives it
	if jsonOut {
		info, _ := explain(err)
		e.printJSON(selftestJSON{Report: &selftest.Report{Verdict: "error", ExitCode: code, Classes: []selftest.ClassResult{}, Ignored: []string{}, Warnings: []string{}}, Error: &info})
	}
	return code
}

// selftestJSON is what selftest --json prints: the package's report, how
// long it took in milliseconds as every forgebox JSON result gives it, and
// why selftest could not attack anything (Verdict "error").
type selftestJSON struct {
	*selftest.Report
	DurationMS float64      `json:"duration_ms"`
	Error      *agent.Error `json:"error,omitempty"`
}

// verdictLabels are the verdicts as the human report prints them.
var verdictLabels = map[string]string{
	selftest.VerdictBlocked: "blocked", selftest.VerdictEscaped: "ESCAPED", selftest.VerdictNotEnforced: "not enforced",
	selftest.VerdictAllowed: "allowed", selftest.VerdictNotTested: "not tested", selftest.VerdictInconclusive: "INCONCLUSIVE",
}

// writeSelftest prints the report for a person: what was enforced, one
// line per class with its evidence, and the conclusion.
func writeSelftest(w io.Writer, r *selftest.Report) {
	fmt.Fprintf(w, "forgebox selftest: attacked a sandbox from inside; bait in %s (removed)\n", r.Bait)
	if r.Enforced != nil {
		fmt.Fprintf(w, "enforced: %s\n", describeEnforced(*r.Enforced))
	}
	counts := map[string]int{}
	for _, c := range r.Classes {
		counts[c.Verdict]++
		detail := strings.Join(c.Evidence, "; ")
		switch c.Verdict {
		case selftest.VerdictNotEnforced:
			detail = joinNonEmpty(": ", "not enforced on this host: "+c.Reason, detail)
		case selftest.VerdictAllowed:
			detail = joinNonEmpty(": ", "allowed by your flags ("+c.Reason+")", detail)
		case selftest.VerdictNotTested, selftest.VerdictInconclusive:
			detail = joinNonEmpty(": ", c.Reason, detail)
		}
		fmt.Fprintf(w, "  %-13s %-36s %s\n", verdictLabels[c.Verdict], c.Title, detail)
	}
	for _, warning := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warning)
	}
	if len(r.Ignored) > 0 {
		fmt.Fprintf(w, "not applied: %s (the probe uses a bait workspace and a pseudo-terminal of its own)\n", strings.Join(r.Ignored, " "))
	}
	var summary []string
	for _, v := range []string{selftest.VerdictEscaped, selftest.VerdictInconclusive, selftest.VerdictNotEnforced, selftest.VerdictBlocked, selftest.VerdictAllowed, selftest.VerdictNotTested} {
		if counts[v] > 0 {
			summary = append(summary, fmt.Sprintf("%d %s", counts[v], verdictLabels[v]))
		}
	}
	fmt.Fprintf(w, "forgebox selftest: %s: %s (exit %d)\n", strings.ToUpper(r.Verdict), strings.Join(summary, ", "), r.ExitCode)
}

// describeEnforced sums up the layers of a run in one line.
func describeEnforced(en sandbox.Enforced) string {
	var parts []string
	if en.Sandbox {
		parts = append(parts, "namespaces "+strings.Join(en.Namespaces, ","), "profile "+string(en.Profile), "network "+string(en.Network))
	} else {
		parts = append(parts, "NO namespaces")
	}
	if en.LandlockABI > 0 {
		parts = append(parts, fmt.Sprintf("Landlock ABI %d", en.LandlockABI))
	}
	if en.Seccomp {
		parts = append(parts, "seccomp")
	}
	if en.NoNewPrivs {
		parts = append(parts, "no_new_privs")
	}
	parts = append(parts, "capabilities "+en.Capabilities)
	if l := en.Limits; l != nil {
		parts = append(parts, fmt.Sprintf("memory limit by %s, task limit by %s", l.Memory.Mechanism, l.Pids.Mechanism))
	}
	if len(en.Missing) > 0 {
		parts = append(parts, "MISSING: "+strings.Join(en.Missing, "; "))
	}
	return strings.Join(parts, "; ")
}

func joinNonEmpty(sep string, parts ...string) string {
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, sep)
}

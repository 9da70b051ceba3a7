package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/forgebox/forgebox/policy"
	"github.com/forgebox/forgebox/runner"
	"github.com/forgebox/forgebox/sandbox"
)

const checkUsage = `Usage:
  forgebox check [flags] -c 'COMMAND LINE'
  forgebox check [flags] -- PROGRAM [ARGS...]
  forgebox check [flags] --batch

Judges a command as forgebox run would, without running anything, and
prints the decision: allow, ask or deny, the risk, level and category, the
rule that decided, the reasons, and each command of the line with its own
verdict. --batch reads one command line per line of stdin and writes one
JSON decision per line on stdout; a line that is one JSON string (in double
quotes, with \n escapes) holds a command that spans lines.

The sandbox flags of forgebox run (--net, --rw, --best-effort,
--allow-unix-sockets) judge it as that run would: a program forgebox does not
know, a download or a push runs unasked when the sandbox contains it (the
default), and is asked about when the run reaches out.

Exit status: 0 allow, 1 ask, 2 deny, 125 an error (bad flags, a malformed
configuration); with --batch, 0 at the end of the input. Flags:
`

// Exit statuses of forgebox check.
const (
	exitCheckAsk  = 1
	exitCheckDeny = 2
)

// judgeTarget is the command to judge: a line (-c) or a program and its
// arguments (-- PROGRAM ARGS).
type judgeTarget struct {
	line string
	argv []string
}

// parseTarget reads the command from -c and the arguments left after the
// flags. bareLine lets a single argument given without "--" be a line, the
// way forgebox policy explain 'LINE' reads.
func parseTarget(line string, args, rest []string, bareLine bool) (judgeTarget, error) {
	switch {
	case line != "" && len(rest) > 0:
		return judgeTarget{}, errors.New("give either -c 'LINE' or -- PROGRAM ARGS, not both")
	case line != "":
		return judgeTarget{line: line}, nil
	case len(rest) == 0:
		return judgeTarget{}, errors.New("no command: give -c 'LINE' or -- PROGRAM ARGS")
	}
	dashes := len(args) > len(rest) && args[len(args)-len(rest)-1] == "--"
	if bareLine && !dashes && len(rest) == 1 {
		return judgeTarget{line: rest[0]}, nil
	}
	return judgeTarget{argv: rest}, nil
}

// display is the command as the person would type it.
func (t judgeTarget) display() string { return runner.Display(t.line, t.argv) }

func (e env) check(args []string) int {
	var (
		o              policyOpts
		line           string
		jsonOut, batch bool
		fs             = flag.NewFlagSet("check", flag.ContinueOnError)
	)
	fs.SetOutput(io.Discard)
	o.register(fs, true)
	o.registerSandbox(fs)
	fs.StringVar(&line, "c", "", "judge the command `LINE` (as run -c would run it)")
	fs.BoolVar(&jsonOut, "json", false, "print the decision as one JSON object")
	fs.BoolVar(&batch, "batch", false, "judge each line of stdin; print one JSON decision per line")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(e.stdout, checkUsage)
			fs.SetOutput(e.stdout)
			fs.PrintDefaults()
			return 0
		}
		e.errorf("check: %v; see forgebox check --help", err)
		return exitForgebox
	}
	var t judgeTarget
	if batch {
		if line != "" || fs.NArg() > 0 {
			e.errorf("check: --batch reads the commands from stdin: give no -c or arguments")
			return exitForgebox
		}
	} else {
		var err error
		if t, err = parseTarget(line, args, fs.Args(), false); err != nil {
			e.errorf("check: %v", err)
			return exitForgebox
		}
	}
	js, code := e.loadJudge(o)
	if js == nil {
		return code
	}
	if batch {
		return e.checkBatch(js)
	}
	d := js.Decide(t.line, t.argv)
	if d.Empty() {
		e.errorf("check: there is no command: the line is empty, or only blanks and comments")
		return exitForgebox
	}
	if jsonOut {
		e.printJSON(d)
	} else {
		writeDecision(e.stdout, d)
	}
	switch d.Action {
	case policy.Ask:
		return exitCheckAsk
	case policy.Deny:
		return exitCheckDeny
	}
	return 0
}

// loadJudge loads the policy for check and policy, printing the warnings;
// it returns nil and the exit code on failure.
func (e env) loadJudge(o policyOpts) (*runner.Judge, int) {
	h, err := runner.CurrentHost()
	if err == nil {
		// As forgebox run with these sandbox flags (by default, the
		// default sandbox) would judge.
		o.Sandbox, err = o.containment(h)
	}
	if err == nil {
		var js *runner.Judge
		if js, err = runner.LoadJudge(h, o.PolicyOptions); err == nil {
			for _, w := range js.Warnings {
				e.errorf("warning: %s", w)
			}
			return js, 0
		}
	}
	info, code := explain(&runner.PolicyError{Err: err})
	msg := info.Message
	if info.Hint != "" {
		msg += "; " + info.Hint
	}
	e.errorf("%s", msg)
	return nil, code
}

// containment is what forgebox run with the sandbox flags given
// (registerSandbox) would let a command reach in the workspace.
func (o policyOpts) containment(h runner.Host) (policy.Containment, error) {
	var spec sandbox.Spec
	if o.run != nil {
		var err error
		if spec, err = o.run.spec(nil); err != nil {
			return policy.Containment{}, err
		}
	}
	ctx, err := runner.JudgeContext(h, o.Workspace)
	if err != nil {
		return policy.Containment{}, err
	}
	spec.Workspace = ctx.Workspace
	return runner.Containment(spec), nil
}

// checkBatch judges each line of stdin. Output is flushed whenever no
// more input is waiting, so that a caller can write a line and wait for
// its answer; a line longer than policy.MaxLineBytes is not kept whole
// but answered as one (ask: too long to judge).
func (e env) checkBatch(js *runner.Judge) int {
	in := bufio.NewReaderSize(e.stdin, 64<<10)
	out := bufio.NewWriterSize(e.stdout, 64<<10)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	var buf []byte
	for {
		if waiting, _ := in.Peek(in.Buffered()); bytes.IndexByte(waiting, '\n') < 0 {
			if err := out.Flush(); err != nil {
				e.errorf("check: write the decisions: %v", err)
				return exitForgebox
			}
		}
		var (
			more bool
			err  error
		)
		buf, more, err = readBatchLine(in, buf[:0])
		if !more {
			if err != nil && !errors.Is(err, io.EOF) {
				e.errorf("check: read the command lines: %v", err)
				return exitForgebox
			}
			break
		}
		if err := enc.Encode(js.Engine.DecideLine(js.Ctx, batchLine(buf))); err != nil {
			e.errorf("check: write the decisions: %v", err)
			return exitForgebox
		}
	}
	if err := out.Flush(); err != nil {
		e.errorf("check: write the decisions: %v", err)
		return exitForgebox
	}
	return 0
}

// batchLine is the command a line of --batch input holds: the line itself,
// or, for a line that is exactly one JSON string ("cat <<EOF\n...\nEOF"),
// the string it encodes, so that commands spanning lines (here-documents)
// fit on one. A shell line that merely starts with a quote does not parse
// as a single JSON string and is taken as written.
func batchLine(buf []byte) string {
	if len(buf) > 1 && buf[0] == '"' && buf[len(buf)-1] == '"' {
		var s string
		if json.Unmarshal(buf, &s) == nil {
			return s
		}
	}
	return string(buf)
}

// readBatchLine reads one line into buf, without its "\n" (or "\r\n"). Of
// a line longer than policy.MaxLineBytes it keeps the first
// MaxLineBytes+1 bytes, enough for the judge to see it is too long, and
// discards the rest. more is false when there was no line to read.
func readBatchLine(r *bufio.Reader, buf []byte) (line []byte, more bool, err error) {
	total := 0
	for {
		chunk, err := r.ReadSlice('\n')
		total += len(chunk)
		if room := policy.MaxLineBytes + 1 - len(buf); room > 0 {
			buf = append(buf, chunk[:min(room, len(chunk))]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		// Only a line kept whole loses its end: a "\r" kept at the cut of
		// a long one must not shorten it back under the limit.
		if err == nil && total == len(buf) {
			buf = bytes.TrimSuffix(buf, []byte("\n"))
			buf = bytes.TrimSuffix(buf, []byte("\r"))
		}
		return buf, total > 0, err
	}
}

// writeDecision prints a decision for a person.
func writeDecision(w io.Writer, d *policy.Decision) {
	fmt.Fprintf(w, "%s: risk %d, %s (%s), %s\n", d.Action, d.Risk, d.Level, levelMeaning(d.Level), d.Category)
	fmt.Fprintf(w, "rule: %s\n", describeRef(d.Rule))
	if len(d.Reasons) > 0 {
		fmt.Fprintln(w, "reasons:")
		for _, r := range d.Reasons {
			fmt.Fprintf(w, "  - %s\n", r)
		}
	}
	if len(d.Commands) > 0 {
		fmt.Fprintln(w, "commands:")
	}
	for _, j := range d.Commands {
		indent := strings.Repeat("  ", j.Depth+1)
		fmt.Fprintf(w, "%s%-5s risk %d, %s, %s: %s\n", indent, j.Action, j.Risk, j.Level, j.Category, oneLine(j.Command))
		for _, r := range j.Reasons {
			fmt.Fprintf(w, "%s      - %s\n", indent, r)
		}
	}
	if d.Action == policy.Ask {
		fmt.Fprintf(w, "approvals offered: %s\n", joinScopes(d.Scopes))
	}
}

// describeRef renders the rule that decided, with its reason.
func describeRef(r *policy.RuleRef) string {
	if r == nil {
		return "none (the built-in judgement)"
	}
	s := r.String()
	if r.Reason != "" {
		s += ": " + r.Reason
	}
	return s
}

func joinScopes(scopes []policy.Scope) string {
	names := make([]string, len(scopes))
	for i, s := range scopes {
		names[i] = s.String()
	}
	return strings.Join(names, ", ")
}

// oneLine keeps a command on one line of output: a multi-line command
// (a here-document, a script in -c) shows its newlines escaped.
func oneLine(s string) string {
	return strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(truncate(s, 300))
}

// explained is a decision and what its explanation needs beside it.
type explained struct {
	d       *policy.Decision
	session string
	files   []runner.ConfigFile
}

// writeExplanation gives a readable account of a decision: each command
// the line would run, what was looked through, how risky it is and why,
// the rule that decided, and then what the person can do about it.
func writeExplanation(w io.Writer, t judgeTarget, x explained) {
	d := x.d
	fmt.Fprintf(w, "command: %s\n", oneLine(t.display()))
	if len(x.files) == 0 {
		fmt.Fprintln(w, "policy: the defaults (no configuration file)")
	}
	for _, f := range x.files {
		fmt.Fprintf(w, "policy: %s (%s)\n", f.Path, f.Role)
	}
	fmt.Fprintf(w, "\nverdict: %s. Risk %d of 10, level %s (%s), category %s.\n", d.Action, d.Risk, d.Level, levelMeaning(d.Level), d.Category)
	fmt.Fprintf(w, "decided by: %s\n", describeRef(d.Rule))
	if d.Interactive {
		fmt.Fprintln(w, "it waits for a person at a terminal: an agent should use a PTY session or a non-interactive form")
	}
	n := len(d.Commands)
	fmt.Fprintf(w, "\nthe line runs %d command%s (each judged on its own; the strictest verdict wins):\n", n, plural(n))
	for i, j := range d.Commands {
		indent := strings.Repeat("   ", j.Depth)
		fmt.Fprintf(w, "%s%d. %s\n", indent, i+1, oneLine(j.Command))
		var how []string
		if j.Program != "" && !strings.HasPrefix(j.Command, j.Program) {
			how = append(how, "looked through to the program "+j.Program)
		}
		if j.Depth > 0 {
			how = append(how, fmt.Sprintf("nested %d level%s deep (run by another command's code)", j.Depth, plural(j.Depth)))
		}
		if len(how) > 0 {
			fmt.Fprintf(w, "%s   %s\n", indent, strings.Join(how, "; "))
		}
		fmt.Fprintf(w, "%s   %s: risk %d, %s (%s), %s\n", indent, j.Action, j.Risk, j.Level, levelMeaning(j.Level), j.Category)
		for _, r := range j.Reasons {
			fmt.Fprintf(w, "%s   - %s\n", indent, r)
		}
		fmt.Fprintf(w, "%s   rule: %s\n", indent, describeRef(j.Rule))
	}
	fmt.Fprintln(w, "\nwhat you can do:")
	switch d.Action {
	case policy.Allow:
		fmt.Fprintln(w, "  nothing: forgebox run runs it without asking (inside the sandbox)")
	case policy.Deny:
		fmt.Fprintf(w, "  nothing makes forgebox run it: %s\n", denyHint(d))
		fmt.Fprintln(w, "  change the command, or run it yourself outside forgebox if you are sure")
	default:
		fmt.Fprintf(w, "  at a terminal, forgebox run asks you; it offers: %s\n", joinScopes(d.Scopes))
		fmt.Fprintf(w, "  without one: %s\n", approvalHint(d, t.line, t.argv, x.session))
		switch {
		case !d.Offers(policy.Session):
			fmt.Fprintln(w, "  it cannot be approved for a session or for good: it is asked every time")
		case !d.Offers(policy.Always):
			fmt.Fprintln(w, "  it cannot be approved for good: a rule of your configuration (an ask rule, or an allow rule of scope session) asks about it")
		}
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

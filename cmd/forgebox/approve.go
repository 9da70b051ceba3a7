package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/forgebox/forgebox/policy"
	"github.com/forgebox/forgebox/runner"
)

const approveUsage = `Usage:
  forgebox approve             list the commands agents are waiting on
  forgebox approve CODE        show the command behind CODE and answer it

An agent whose client cannot ask you (an MCP client without elicitation,
such as Gemini CLI, or codex exec) gets a code when a command needs your
approval, and tells you to run forgebox approve CODE. This shows the
command, the directory, why forgebox asks, and what the agent said it is
for, and asks you on this terminal: once, for the session (the agent's
server), always, or no. The agent's next identical call then runs (once)
or is refused. Requests wait 30 minutes; an answer waits 10 minutes for the
call it approves.

It needs a terminal: an answer comes from a person, never from a program's
input. Exit status: 0 when answered (yes or no), 125 on an error.
`

func (e env) approve(args []string) int {
	switch {
	case len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help"):
		fmt.Fprint(e.stdout, approveUsage)
		return 0
	case len(args) > 1:
		e.errorf("approve: give one code (forgebox approve CODE), or none to list the requests")
		return exitForgebox
	}
	h, err := runner.CurrentHost()
	if err != nil {
		e.errorf("approve: %v", err)
		return exitForgebox
	}
	if len(args) == 0 {
		return e.listRequests(h)
	}
	r, err := runner.LoadRequest(h, args[0])
	if err != nil {
		e.errorf("approve: %v", err)
		return exitForgebox
	}
	tty, err := personTerminal(e.stdin)
	if err != nil {
		e.errorf("approve: %v", err)
		return exitForgebox
	}
	if tty != e.stdin {
		defer tty.Close()
	}
	h.Cwd = r.Dir
	js, err := runner.LoadJudge(h, runner.PolicyOptions{File: r.Policy, Workspace: r.Workspace, Session: r.Session, Sandbox: r.Sandbox})
	if err != nil {
		e.errorf("approve: %v", err)
		return exitForgebox
	}
	d := js.Decide(r.Line, r.Argv)
	what := runner.Display(r.Line, r.Argv)
	at := env{stdin: tty, stdout: tty, stderr: tty}
	fmt.Fprintf(tty, "An agent asks to run a command in %s", printable(r.Dir))
	if r.Why != "" {
		fmt.Fprintf(tty, "\nIt says it is for: %s", printable(r.Why))
	}
	fmt.Fprintf(tty, "\n(request %s, %s ago)\n", runner.ShowCode(r.Code), time.Since(r.Created).Round(time.Second))
	scope, yes := policy.Once, false
	switch d.Next(false) {
	case policy.Proceed:
		fmt.Fprintf(tty, "forgebox's policy no longer asks about:\n  %s\nThe agent may run it.\n", printable(truncate(what, 400)))
		yes = true
	case policy.Refuse:
		fmt.Fprintf(tty, "forgebox's policy denies:\n  %s\nNo approval can let it run.\n", printable(truncate(what, 400)))
	default:
		scope, yes = at.approveAtTerminal(js, d, truncate(what, 400))
	}
	if err := r.Record(scope, yes); err != nil {
		e.errorf("approve: %v", err)
		return exitForgebox
	}
	if yes {
		fmt.Fprintf(tty, "forgebox: approved (%s); the agent's next identical call runs it\n", scope)
	} else {
		fmt.Fprintln(tty, "forgebox: refused; the agent is told you said no")
	}
	return 0
}

// personTerminal is the terminal to ask the person on: standard input if
// it is one, else the process's controlling terminal. A pipe or a file
// is a program talking, and is refused.
func personTerminal(stdin *os.File) (*os.File, error) {
	if term.IsTerminal(int(stdin.Fd())) {
		return stdin, nil
	}
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, errors.New("forgebox approve asks you on a terminal, and there is none: run it in a terminal (an answer must come from a person, not from a program's input)")
	}
	return tty, nil
}

func (e env) listRequests(h runner.Host) int {
	reqs, err := runner.PendingRequests(h)
	if err != nil {
		e.errorf("approve: %v", err)
		return exitForgebox
	}
	if len(reqs) == 0 {
		fmt.Fprintln(e.stdout, "No command waits for your approval.")
		return 0
	}
	for _, r := range reqs {
		what := runner.Display(r.Line, r.Argv)
		fmt.Fprintf(e.stdout, "%s  %6s ago  in %s\n    %s\n", runner.ShowCode(r.Code), time.Since(r.Created).Round(time.Second), printable(r.Dir), printable(truncate(what, 200)))
	}
	fmt.Fprintln(e.stdout, "Answer one with forgebox approve CODE.")
	return 0
}

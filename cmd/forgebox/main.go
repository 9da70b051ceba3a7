// Command forgebox runs an AI agent's shell commands in a sandbox.
//
// Exit codes of run: the command's own status; 128+N when signal N killed
// it; 124 on timeout; 125 for a forgebox error (bad flags, a malformed
// configuration, setup failure, missing kernel feature); 126 when the
// command cannot be executed, is denied, or needs an approval it did not
// get; 127 when it is not found. check exits 0 for allow, 1 for ask, 2 for
// deny and 125 for an error. hook claude answers Claude Code: 0 with its
// answer on stdout, 1 for an event it does not handle, 2 when misused
// (which blocks the command).
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/forgebox/forgebox/probe"
	"github.com/forgebox/forgebox/sandbox"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const (
	exitTimeout       = 124
	exitForgebox      = 125
	exitNotExecutable = 126
	exitNotFound      = 127
)

func main() {
	// The sandbox child is taken over by a C constructor before Go starts
	// (sandbox/init_linux.c). Arriving here with its verb means this
	// binary lacks it: refuse rather than run anything unsandboxed.
	if len(os.Args) > 1 && os.Args[1] == sandbox.ChildVerb {
		fmt.Fprintln(os.Stderr, "forgebox: this binary cannot start sandboxes (built without cgo); rebuild it with CGO_ENABLED=1")
		os.Exit(exitForgebox)
	}
	// The probe forgebox selftest runs inside its sandboxes.
	if len(os.Args) > 1 && os.Args[1] == probeVerb {
		if err := probe.Main(os.Args[2:], os.Stdout); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := dispatch(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	// A sandbox child forked for a run that never happened (refused
	// flags, --help) is ended and reaped, not left to our parent.
	sandbox.ReleasePrefork()
	os.Exit(code)
}

type env struct {
	stdin          *os.File
	stdout, stderr *os.File
}

func dispatch(args []string, stdin, stdout, stderr *os.File) int {
	e := env{stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		usage(stderr)
		return exitForgebox
	}
	switch args[0] {
	case "run":
		return e.run(args[1:])
	case "doctor":
		return e.doctor(args[1:])
	case "cache":
		return e.cacheCmd(args[1:])
	case "selftest":
		return e.selftest(args[1:])
	case "check":
		return e.check(args[1:])
	case "approve":
		return e.approve(args[1:])
	case "policy":
		return e.policyCmd(args[1:])
	case "history":
		return e.historyCmd(args[1:])
	case "hook":
		return e.hook(args[1:])
	case "undo":
		return e.undoCmd(args[1:])
	case "serve":
		return e.serve(args[1:])
	case "shell":
		return e.shell(args[1:])
	case "version", "--version":
		fmt.Fprintf(stdout, "forgebox %s\n", version)
		return 0
	case "help", "-h", "--help":
		usage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "forgebox: unknown command %q; run forgebox help\n", args[0])
	return exitForgebox
}

func usage(w io.Writer) {
	fmt.Fprint(w, `forgebox runs commands in a sandbox.

Usage:
  forgebox run [flags] -- PROGRAM [ARGS...]   run a program
  forgebox run [flags] -c 'COMMAND LINE'      run a command line with bash (or sh)
  forgebox doctor [--json]                    report what this host supports
  forgebox cache list|clear|limit             the private package caches of sandboxed runs
  forgebox selftest [run flags] [--json]      attack a sandbox with these flags and report what was blocked
  forgebox check [flags] (-c 'LINE' | -- PROGRAM [ARGS...] | --batch)
                                              judge a command without running it
  forgebox policy list [--json]               the rules in force, where they come from, the session's approvals
  forgebox policy explain (-c 'LINE' | -- PROGRAM [ARGS...])
                                              why a command is allowed, asked about or denied, and what you can do
  forgebox policy approve (--session ID | --always) (-c 'LINE' | -- PROGRAM [ARGS...])
                                              approve a command's asks without a terminal
  forgebox policy revoke [--session ID] (--all | PATTERN)
                                              remove approvals given for a session or for good
  forgebox approve [CODE]                     answer an agent's request for your approval, on this terminal
  forgebox history [--json] [--limit N] [--session ID] [--failed] [--denied] [--since WHEN] [--grep TEXT] [--cwd DIR]
                                              the runs recorded, newest first
  forgebox history show|stats|export|rerun|prune
                                              one run, counts, an audit export, a rerun, retention
  forgebox hook claude [--wrap] [flags] [-- RUN FLAGS...]
                                              a Claude Code PreToolUse hook: judge (or, with --wrap, sandbox) its Bash commands
  forgebox serve [run flags] [--timeout D] [--max-sessions N]
                                              serve forgebox's tools to an agent over MCP (stdio)
  forgebox shell [run flags]                  an interactive shell in the sandbox, on your terminal
  forgebox undo [--dry-run] [--force] [--to RUN | RUN | --list]
                                              put the workspace back as it was before a run
  forgebox version

run judges the command first: a denied one exits 126 without starting, one
that needs an approval is put to you at a terminal (or exits 126 with
approval_required without one); --yes approves it once, --no-policy skips the
judge (the sandbox still applies). check exits 0 for allow, 1 for ask, 2 for
deny, 125 for an error (bad flags, a malformed configuration). Every run, the
refused ones too, is recorded in the history unless --no-history.

Run forgebox run --help, forgebox check --help, forgebox policy --help,
forgebox history --help or forgebox hook --help for the flags.
`)
}

// errorf prints a message in forgebox's voice.
func (e env) errorf(format string, args ...any) {
	fmt.Fprintf(e.stderr, "forgebox: "+format+"\n", args...)
}

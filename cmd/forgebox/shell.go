package main

import (
	"os"
	"os/exec"
	"slices"
	"strings"
)

const shellUsage = `Usage:
  forgebox shell [run flags]

Starts an interactive shell in the sandbox, on your terminal: the same
sandbox forgebox run builds from the same flags (workspace writable, the
rest read-only, secrets hidden, no network unless --net says so). The
commands you type are not judged — you are the one typing them — but the
session is recorded in the history like any run. Exit the shell to leave.
`

// shell runs the user's shell (bash when $SHELL is not a shell this host
// has) interactively in the sandbox, as forgebox run would with --pty.
func (e env) shell(args []string) int {
	if slices.ContainsFunc(args, func(a string) bool { return a == "-h" || a == "--help" || a == "-help" }) {
		e.stdout.WriteString(shellUsage)
		return 0
	}
	for _, a := range args {
		if a == "--" || a == "-c" || strings.HasPrefix(a, "-c=") || a == "--no-pty" || a == "--json" {
			e.errorf("shell: %s does not apply: forgebox shell runs an interactive shell; use forgebox run for a command", a)
			return exitForgebox
		}
	}
	sh := "bash"
	if s := os.Getenv("SHELL"); s != "" && slices.Contains([]string{"bash", "zsh", "sh", "dash", "fish"}, baseName(s)) {
		if _, err := exec.LookPath(s); err == nil {
			sh = s
		}
	}
	run := append([]string{"--pty", "--no-policy"}, args...)
	return e.run(append(run, "--", sh, "-i"))
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

package main

import (
	"flag"
	"slices"
	"testing"
)

// A shell session is forgebox run --pty with the server's run flags, so it
// gets run's seccomp filter: Unix sockets refused unless the server was
// started with --allow-unix-sockets, which it then passes on.
func TestSessionsShareRunUnixSocketChoice(t *testing.T) {
	var rf runFlags
	if rf.flagSet().Lookup("allow-unix-sockets") == nil || !slices.Contains(forwardedRunFlags, "allow-unix-sockets") {
		t.Fatalf("--allow-unix-sockets is not a run flag that serve forwards")
	}
	for _, fwd := range [][]string{nil, {"--allow-unix-sockets=true"}} {
		b := &serveBackend{exe: "forgebox", forward: fwd, session: "s"}
		argv := b.sessionArgv("/ws")
		if argv[1] != "run" || !slices.Contains(argv, "--pty") {
			t.Fatalf("sessionArgv = %q, want forgebox run --pty ...", argv)
		}
		if got, want := slices.Contains(argv, "--allow-unix-sockets=true"), fwd != nil; got != want {
			t.Errorf("sessionArgv with server flags %q = %q: passes --allow-unix-sockets = %v, want %v", fwd, argv, got, want)
		}
	}
}

// Every flag of forgebox run is either taken by serve and passed on to
// each command and session, or left out on purpose: a new sandbox flag
// (--no-cache was one) cannot be forgotten by the server.
func TestServeTakesEveryRunFlag(t *testing.T) {
	var rf runFlags
	fs := rf.flagSet()
	rf.judgeFlags(fs)
	rf.historyFlags(fs)
	fs.VisitAll(func(fl *flag.Flag) {
		if !slices.Contains(forwardedRunFlags, fl.Name) && !slices.Contains(unforwardedRunFlags, fl.Name) {
			t.Errorf("run flag --%s is neither forwarded by serve nor left out on purpose", fl.Name)
		}
	})
}

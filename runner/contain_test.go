package runner

import (
	"runtime"
	"testing"

	"github.com/forgebox/forgebox/policy"
	"github.com/forgebox/forgebox/sandbox"
)

// One rule says what a run's sandbox contains, for every surface.
func TestContainment(t *testing.T) {
	if runtime.GOOS != "linux" {
		if Containment(sandbox.Spec{}).Contained {
			t.Errorf("forgebox on %s is counted as containing", runtime.GOOS)
		}
		return
	}
	for _, tc := range []struct {
		spec           sandbox.Spec
		contained, tmp bool
		how            string
	}{
		{sandbox.Spec{Workspace: "/srv/p"}, true, true, "the sandbox"},
		{sandbox.Spec{Workspace: "/srv/p", Network: sandbox.NetLoopback}, true, true, "the sandbox"},
		{sandbox.Spec{Workspace: "/srv/p", Network: sandbox.NetHost}, false, true, "--net host"},
		{sandbox.Spec{Workspace: "/srv/p", Network: sandbox.NetAllow}, false, true, "--net allow"},
		{sandbox.Spec{Workspace: "/srv/p", ReadWrite: []string{"/srv/p/sub"}}, true, true, "the sandbox"},
		{sandbox.Spec{Workspace: "/srv/p", ReadWrite: []string{"/srv/other"}}, false, true, "--rw /srv/other"},
		{sandbox.Spec{Workspace: "/srv/p", ReadWrite: []string{"/tmp/x"}}, false, false, "--rw /tmp/x"},
		{sandbox.Spec{Workspace: "/tmp/p"}, true, false, "the sandbox"},
		{sandbox.Spec{Workspace: "/srv/p", AllowUnixSockets: true}, false, true, "--allow-unix-sockets"},
		{sandbox.Spec{Workspace: "/srv/p", BestEffort: true}, false, true, "--best-effort"},
	} {
		c := Containment(tc.spec)
		if c.Contained != tc.contained || c.PrivateTmp != tc.tmp || c.How != tc.how {
			t.Errorf("Containment(%+v) = %+v; want contained %v, private tmp %v, how %q", tc.spec, c, tc.contained, tc.tmp, tc.how)
		}
	}
	if Unsandboxed.Contained || Unsandboxed.PrivateTmp {
		t.Errorf("Unsandboxed = %+v; nothing contains a command forgebox does not run", Unsandboxed)
	}
}

// One rule says whether a run mounts the private caches: only a judged
// line of readers on the workspace goes without them.
func TestCaches(t *testing.T) {
	e := policy.New(policy.Default())
	ctx := &policy.Context{Workspace: "/srv/p", Cwd: "/srv/p", Home: "/home/u"}
	reads, builds := e.DecideLine(ctx, "ls; cat f | grep x"), e.DecideLine(ctx, "go env GOCACHE")
	ws := sandbox.Spec{Workspace: "/srv/p", SetEnv: []string{"PATH=/usr/bin:/bin"}}
	for _, tc := range []struct {
		name string
		spec sandbox.Spec
		st   sandbox.Streams
		d    *policy.Decision
		want bool
	}{
		{"readers", ws, sandbox.Streams{}, reads, false},
		{"a build tool", ws, sandbox.Streams{}, builds, true},
		{"nothing judged it", ws, sandbox.Streams{}, nil, true},
		{"on a terminal", ws, sandbox.Streams{PTY: true}, reads, true},
		{"--no-cache", sandbox.Spec{Workspace: "/srv/p", NoCache: true}, sandbox.Streams{}, builds, false},
		{"PATH in the workspace", sandbox.Spec{Workspace: "/srv/p", SetEnv: []string{"PATH=/srv/p/bin:/usr/bin"}}, sandbox.Streams{}, reads, true},
		{"PATH in a --rw path", sandbox.Spec{Workspace: "/srv/p", ReadWrite: []string{"/opt/tools"}, SetEnv: []string{"PATH=/opt/tools/bin:/usr/bin"}}, sandbox.Streams{}, reads, true},
		{"a relative PATH entry", sandbox.Spec{Workspace: "/srv/p", SetEnv: []string{"PATH=bin:/usr/bin"}}, sandbox.Streams{}, reads, true},
	} {
		if got := Caches(tc.spec, tc.st, tc.d); got != tc.want {
			t.Errorf("Caches(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

package runner

import (
	"runtime"
	"testing"

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

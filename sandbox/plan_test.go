package sandbox

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/forgebox/forgebox/pathtree"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// baseFacts is a typical host: /var/tmp and /run present.
func baseFacts() hostFacts {
	return hostFacts{
		Dirs:   map[string]bool{"/var/tmp": true, "/run": true},
		Grants: map[string]bool{"/home/u/proj": true},
	}
}

// The mount plan is what the child executes; people review it, so it is
// kept as golden text.
func TestPlanGolden(t *testing.T) {
	tests := []struct {
		name   string
		layout layout
		facts  func(f *hostFacts)
	}{
		{name: "workspace", layout: layout{Profile: ProfileWorkspace, Network: NetNone, Workspace: "/home/u/proj", Writable: []string{"/home/u/proj"}}},
		{name: "secrets-and-sockets", layout: layout{Profile: ProfileWorkspace, Network: NetNone, Workspace: "/home/u/proj", Writable: []string{"/home/u/proj"}},
			facts: func(f *hostFacts) {
				f.Secrets = []hostPath{{"/home/u/.ssh", true}, {"/home/u/.netrc", false}, {"/etc/shadow", false}}
				// the second socket is inside a hidden directory, the
				// third inside the private /run: both need no cover
				f.Sockets = []string{"/home/u/app.sock", "/home/u/.ssh/agent.sock", "/run/docker.sock", "/home/u/proj/dev.sock"}
			}},
		{name: "protected", layout: layout{Profile: ProfileWorkspace, Network: NetNone, Workspace: "/home/u/proj", Writable: []string{"/home/u/proj"}},
			facts: func(f *hostFacts) {
				f.Protected = []protectedPath{
					{Path: "/home/u/proj/.git", Dir: true, Pin: true, Dev: 1, Ino: 2},
					{Path: "/home/u/proj/.git/hooks", Dir: true, Dev: 1, Ino: 3},
					{Path: "/home/u/proj/.git/config", Dev: 1, Ino: 4},
					{Path: "/home/u/proj/.vscode", Dir: true, Dev: 1, Ino: 5},
				}
			}},
		{name: "grant-beneath-secret-and-tmp", layout: layout{Profile: ProfileWorkspace, Network: NetNone, Workspace: "/tmp/ws",
			Writable: []string{"/tmp/ws"}, ReadOnly: []string{"/home/u/.ssh/known_hosts"}},
			facts: func(f *hostFacts) {
				f.Grants = map[string]bool{"/tmp/ws": true, "/home/u/.ssh/known_hosts": false}
				f.Secrets = []hostPath{{"/home/u/.ssh", true}}
			}},
		{name: "strict", layout: layout{Profile: ProfileStrict, Network: NetNone, Workspace: "/home/u/proj", Writable: []string{"/home/u/proj"}},
			facts: func(f *hostFacts) {
				f.Root = []hostPath{{"/usr", true}, {"/etc", true}, {"/home", true}, {"/var", true}, {"/root", true}, {"/srv", true},
					{"/tmp", true}, {"/proc", true}, {"/dev", true}, {"/run", true}, {"/sys", true}, {"/swapfile", false}}
				f.Secrets = []hostPath{{"/home/u/.ssh", true}, {"/etc/shadow", false}}
			}},
		{name: "readonly-host-net", layout: layout{Profile: ProfileReadOnly, Network: NetHost, Workspace: "/home/u/proj"},
			facts: func(f *hostFacts) {
				f.ResolvConf = "/run/systemd/resolve/stub-resolv.conf"
				f.Grants = map[string]bool{}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := baseFacts()
			if tt.facts != nil {
				tt.facts(&f)
			}
			items, _, err := buildView(tt.layout, f, newEnforced(tt.layout.Profile, tt.layout.Network, false))
			if err != nil {
				t.Fatalf("buildView: %v", err)
			}
			ops, _, err := planMounts(items)
			if err != nil {
				t.Fatalf("planMounts: %v", err)
			}
			var b strings.Builder
			for _, o := range ops {
				b.WriteString(o.String() + "\n")
			}
			checkPlan(t, ops)
			golden(t, filepath.Join("testdata", "plan", tt.name+".golden"), b.String())
		})
	}
}

// checkPlan asserts properties every plan must have, whatever the layout.
func checkPlan(t *testing.T, ops []mountOp) {
	t.Helper()
	ours := []string{"/dev", "/tmp", "/var/tmp", "/run", "/var/run"} // the base view's tmpfs
	placed := -1
	cloned := map[uint32]bool{}
	for i, o := range ops {
		if pathtree.Within(o.A, "/proc") {
			t.Errorf("op %d (%s) touches /proc", i, o)
		}
		switch o.Op {
		case opTmpfs:
			ours = append(ours, o.A)
		case opMkdir, opMkfile, opSymlink:
			// mount points are only ever made in tmpfs mounts of the run,
			// never on the host
			if !slices.ContainsFunc(ours, func(d string) bool { return pathtree.Beneath(o.A, d) }) {
				t.Errorf("op %d (%s) creates an entry outside the run's own tmpfs mounts", i, o)
			}
		case opClone:
			// host paths are cloned while nothing of the plan covers them
			if placed >= 0 {
				t.Errorf("op %d (%s) clones after op %d placed something", i, o, placed)
			}
			cloned[o.Slot] = true
		case opAttach:
			if !cloned[o.Slot] {
				t.Errorf("op %d (%s) attaches a slot never cloned", i, o)
			}
			delete(cloned, o.Slot)
			if o.Clr&attrRdonly != 0 && o.Set&attrRdonly != 0 {
				t.Errorf("op %d (%s) both sets and clears read-only", i, o)
			}
		}
		if o.Op != opClone && placed < 0 {
			placed = i
		}
	}
	if len(cloned) != 0 {
		t.Errorf("slots cloned but never attached: %v", cloned)
	}
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (run go test -update if the change is intended):\n--- got\n%s--- want\n%s", path, got, want)
	}
}

func TestPlanRejects(t *testing.T) {
	tests := []struct {
		name  string
		items []viewItem
	}{
		{"relative path", []viewItem{{Kind: kindTmpfs, Path: "tmp", Dir: true}}},
		{"unclean path", []viewItem{{Kind: kindTmpfs, Path: "/tmp/../etc", Dir: true}}},
		{"same path twice", []viewItem{{Kind: kindTmpfs, Path: "/tmp", Dir: true}, {Kind: kindCover, Path: "/tmp", Dir: true}}},
		{"symlink outside our tmpfs", []viewItem{{Kind: kindSymlink, Path: "/etc/x", Target: "/y"}}},
	}
	for _, tt := range tests {
		if _, _, err := planMounts(tt.items); err == nil {
			t.Errorf("planMounts(%s) = nil error; want a refusal", tt.name)
		}
	}
}

func TestBuildViewConflicts(t *testing.T) {
	f := baseFacts()
	f.Grants["/srv/data"] = true
	tests := []struct {
		name string
		l    layout
	}{
		{"granted and hidden", layout{Profile: ProfileWorkspace, Workspace: "/home/u/proj", Writable: []string{"/home/u/proj", "/srv/data"}, Hide: []hostPath{{"/srv/data", true}}}},
		{"read-write and read-only", layout{Profile: ProfileWorkspace, Workspace: "/home/u/proj", Writable: []string{"/home/u/proj", "/srv/data"}, ReadOnly: []string{"/srv/data"}}},
		{"grant under /proc", layout{Profile: ProfileWorkspace, Workspace: "/home/u/proj", Writable: []string{"/proc/1"}}},
		{"grant of /dev", layout{Profile: ProfileWorkspace, Workspace: "/home/u/proj", ReadOnly: []string{"/dev"}}},
	}
	for _, tt := range tests {
		f.Grants["/proc/1"], f.Grants["/dev"] = true, true
		if _, _, err := buildView(tt.l, f, newEnforced(tt.l.Profile, tt.l.Network, false)); err == nil {
			t.Errorf("buildView(%s) = nil error; want a refusal", tt.name)
		}
	}
}

// An explicit grant replaces a default secret cover at the same path.
func TestExplicitGrantBeatsSecret(t *testing.T) {
	f := baseFacts()
	f.Grants["/home/u/.aws"] = true
	f.Secrets = []hostPath{{"/home/u/.aws", true}}
	l := layout{Profile: ProfileWorkspace, Workspace: "/home/u/proj", Writable: []string{"/home/u/proj"}, ReadOnly: []string{"/home/u/.aws"}}
	items, enf, err := buildView(l, f, newEnforced(l.Profile, l.Network, false))
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.Path == "/home/u/.aws" && it.Kind != kindGrant {
			t.Errorf("/home/u/.aws is placed as kind %d; want the explicit grant", it.Kind)
		}
	}
	if len(enf.Writable) != 1 {
		t.Errorf("Enforced.Writable = %v; want only the workspace", enf.Writable)
	}
}

package selftest

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/forgebox/forgebox/probe"
	"github.com/forgebox/forgebox/sandbox"
)

// TestMain lets this test binary be the bait's host process, as the
// forgebox binary is for selftest.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == ProbeVerb {
		probe.Main(os.Args[2:], os.Stdout)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func plantTestBait(t *testing.T) *bait {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := plantBaitIn(t.TempDir(), exe)
	if err != nil {
		t.Fatalf("plantBaitIn: %v", err)
	}
	t.Cleanup(func() { b.remove() })
	return b
}

// The host check sees each attack that got through, made here on the host
// itself: changed files, a created protected name, connections to each
// listener, the bait process killed. Untouched, the bait shows nothing.
func TestBaitCheckSeesEscapes(t *testing.T) {
	quiet := plantTestBait(t)
	if f := quiet.check(&sandbox.Result{}); len(f.changed) != 0 {
		t.Errorf("untouched bait: check found changes %q", f.changed)
	}
	if alive, how := quiet.hostAlive(); !alive {
		t.Errorf("the bait process is not running: %s", how)
	}

	b := plantTestBait(t)
	time.Sleep(10 * time.Millisecond) // a change in the same clock tick must show too: the content does
	for _, attack := range []func() error{
		func() error { return os.WriteFile(b.path("outside/file.txt"), []byte("pwned"), 0o644) },
		func() error { return os.Chmod(b.path("outside/mode.txt"), 0) },
		func() error { return os.WriteFile(b.path("ws/.git/hooks/pre-commit"), []byte("pwned"), 0o755) },
		func() error { return os.WriteFile(b.path("ws/.envrc"), []byte("pwned"), 0o644) },
		func() error { return dial("unix", b.path(baitSocket)) },
		func() error { return dial("unix", "@"+b.abstract) },
		func() error { return dial("tcp", b.tcp) },
		func() error { return b.host.Process.Signal(syscall.SIGTERM) },
	} {
		if err := attack(); err != nil {
			t.Fatal(err)
		}
	}
	f := b.check(&sandbox.Result{Stderr: sandbox.Captured{Tail: []byte("x" + b.token)}})
	for _, class := range []string{classHostWrite, classHostChmod, classSecret, classProtected, classUnixSocket, classAbstractSocket, classNetwork} {
		if len(f.changed[class]) == 0 {
			t.Errorf("check after the attacks: nothing changed for %s; changed %q", class, f.changed)
		}
	}
	select {
	case <-b.hostDone:
	case <-time.After(5 * time.Second):
	}
	if alive, _ := b.hostAlive(); alive {
		t.Errorf("hostAlive after SIGTERM = true; want the bait process gone")
	}
}

func dial(network, addr string) error {
	c, err := net.Dial(network, addr)
	if err == nil {
		c.Close()
	}
	return err
}

// remove takes everything away, also what an attack made unwritable, and
// the bait process with it.
func TestBaitRemove(t *testing.T) {
	b := plantTestBait(t)
	if err := os.Chmod(b.path(baitOutside), 0); err != nil {
		t.Fatal(err)
	}
	if err := b.remove(); err != nil {
		t.Fatalf("remove: %v", err)
	}
	if _, err := os.Lstat(b.root); !os.IsNotExist(err) {
		t.Errorf("the bait directory is still there: %v", err)
	}
	if alive, _ := b.hostAlive(); alive {
		t.Errorf("the bait process survived remove")
	}
}

// The bait goes where the sandbox shows the host read-only: not below a
// --rw grant, a hidden path or a directory private to the sandbox.
func TestBaitDir(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	cache := filepath.Join(home, ".cache")
	if err := os.MkdirAll(cache, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", cache)
	for _, tc := range []struct {
		name    string
		spec    sandbox.Spec
		want    string
		refused bool
	}{
		{"cache without private caches", sandbox.Spec{NoCache: true}, cache, false},
		// Writes to ~/.cache land in the run's private cache.
		{"cache", sandbox.Spec{}, home, false},
		{"cache granted", sandbox.Spec{ReadWrite: []string{cache}}, home, false},
		{"cache hidden", sandbox.Spec{Hide: []string{cache}}, home, false},
		{"both granted", sandbox.Spec{ReadWrite: []string{cache}, Hide: []string{home}, NoCache: true}, "", true},
	} {
		got, err := baitDir(tc.spec, nil)
		if real, rerr := filepath.EvalSymlinks(tc.want); rerr == nil {
			tc.want = real
		}
		if (err != nil) != tc.refused || (err == nil && got != tc.want) {
			t.Errorf("baitDir(%s) = %q, %v; want %q (refused %v)", tc.name, got, err, tc.want, tc.refused)
		}
	}
	// Never where the sandbox has a private directory instead.
	if got, err := baitDir(sandbox.Spec{}, []string{filepath.Dir(home)}); err == nil {
		t.Errorf("baitDir with the home below a private directory = %q; want a refusal", got)
	}
}

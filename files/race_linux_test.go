package files

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestRaceSwapDirectoryForLink swaps, atomically and without pause, a
// directory of the workspace with a link to the host (RENAME_EXCHANGE),
// and a file with a link to a host file, while every operation works
// through them. Whatever the interleaving, nothing outside may be read,
// written, made or removed.
func TestRaceSwapDirectoryForLink(t *testing.T) {
	walkModes(t, func(t *testing.T, openat2 bool) {
		fx := newFixture(t, openat2)
		fx.mkdir("ws/d")
		fx.file("ws/d/victim.txt", "inside", 0o644)
		fx.link(fx.outside, "ws/l")
		fx.file("ws/t", "inside", 0o644)
		fx.link(filepath.Join(fx.outside, "victim.txt"), "ws/tl")
		fx.before = takeSnapshot(t, fx.base, fx.ws)

		stop := make(chan struct{})
		var swaps atomic.Int64
		var wg sync.WaitGroup
		swap := func(a, b string) {
			defer wg.Done()
			a, b = filepath.Join(fx.ws, a), filepath.Join(fx.ws, b)
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
					t.Errorf("exchange %s and %s: %v", a, b, err)
					return
				}
				swaps.Add(1)
			}
		}
		wg.Add(2)
		go swap("d", "l")
		go swap("t", "tl")

		var leaks atomic.Int64
		ops := []func(){
			func() { fx.fs.Write("d/victim.txt", "pwned", false) },
			func() { fx.fs.Write("d/new.txt", "pwned", true) },
			func() { fx.fs.Write("t", "pwned", false) },
			func() { fx.fs.Edit("d/victim.txt", []Edit{{Old: "inside", New: "pwned"}}) },
			func() { fx.fs.Edit("d/victim.txt", []Edit{{Old: "VICTIM", New: "pwned"}}) },
			func() { fx.fs.Edit("t", []Edit{{Old: "VICTIM", New: "pwned"}}) },
			func() { fx.fs.Mkdir("d/made/deeper") },
			func() { fx.fs.Delete("d/victim.txt", false) },
			func() { fx.fs.Copy("file.txt", "d/copy.txt") },
			func() { fx.fs.Move("d/new.txt", "moved.txt") },
			func() {
				for _, p := range []string{"d/victim.txt", "t", "d/secret.txt"} {
					if r, err := fx.fs.Read(p, 0, 0); err == nil && (r.Content == "VICTIM" || r.Content == "SECRET") {
						leaks.Add(1)
					}
				}
			},
			func() {
				if l, err := fx.fs.List("d"); err == nil {
					for _, e := range l.Entries {
						if e.Name == "secret.txt" || e.Name == "sub" {
							leaks.Add(1)
						}
					}
				}
			},
		}
		hammer(t, &swaps, 2000, ops...)
		close(stop)
		wg.Wait()
		if n := leaks.Load(); n > 0 {
			t.Fatalf("%d reads or listings saw host content", n)
		}
		fx.checkHost(t)
		t.Logf("%d swaps", swaps.Load())
	})
}

// TestRacePlantLinkWhileMaking plants a link to the host at a directory
// name that Mkdir and Write with parents are about to make, and removes it
// again, without pause: a made directory must never be entered through a
// link planted between making and opening it.
func TestRacePlantLinkWhileMaking(t *testing.T) {
	walkModes(t, func(t *testing.T, openat2 bool) {
		fx := newFixture(t, openat2)
		fx.mkdir("ws/p")
		fx.before = takeSnapshot(t, fx.base, fx.ws)
		made := filepath.Join(fx.ws, "p", "made")
		stop := make(chan struct{})
		var plants atomic.Int64
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case <-stop:
					return
				default:
				}
				if os.Symlink(fx.outside, made) == nil {
					plants.Add(1)
				}
				os.RemoveAll(made) // the link, or what Mkdir and Write made (RemoveAll follows no link)
			}
		}()
		hammer(t, &plants, 300,
			func() { fx.fs.Mkdir("p/made/x") },
			func() { fx.fs.Write("p/made/y.txt", "pwned", true) },
			func() { fx.fs.Delete("p/made/x", true); fx.fs.Delete("p/made/y.txt", false) },
		)
		close(stop)
		<-done
		fx.checkHost(t)
		t.Logf("%d links planted", plants.Load())
	})
}

// hammer runs each op in a goroutine of its own, over and over, until the
// attacker has made at least min moves and 300 ms have passed. On a loaded
// machine that takes longer; after 20 s the race counts as not run.
func hammer(t *testing.T, moves *atomic.Int64, min int64, ops ...func()) {
	t.Helper()
	start := time.Now()
	var done atomic.Bool
	var wg sync.WaitGroup
	for _, op := range ops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !done.Load() {
				op()
			}
		}()
	}
	for {
		time.Sleep(10 * time.Millisecond)
		elapsed := time.Since(start)
		if moves.Load() >= min && elapsed >= 300*time.Millisecond || elapsed >= 20*time.Second {
			break
		}
	}
	done.Store(true)
	wg.Wait()
	if n := moves.Load(); n < min {
		t.Fatalf("the attacker made only %d moves in %v: the race did not run", n, time.Since(start))
	}
}

// The workspace directory itself moved and replaced by a link to the host
// after New: the FS stays on the directory it opened.
func TestRootReplacedAfterNew(t *testing.T) {
	walkModes(t, func(t *testing.T, openat2 bool) {
		fx := newFixture(t, openat2)
		moved := filepath.Join(fx.base, "moved")
		if err := os.Rename(fx.ws, moved); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(fx.outside, fx.ws); err != nil {
			t.Fatal(err)
		}
		fx.before = takeSnapshot(t, fx.base, moved)
		fx.ws = moved
		if err := fx.fs.Write("victim.txt", "pwned", false); err != nil {
			t.Fatalf("Write = %v", err)
		}
		if _, err := fx.fs.Read("secret.txt", 0, 0); KindOf(err) != KindNotFound {
			t.Fatalf("Read(secret.txt) = %v, want not-found", err)
		}
		fx.checkHost(t)
		if got := readFile(t, filepath.Join(moved, "victim.txt")); got != "pwned" {
			t.Fatalf("the write went elsewhere: %q", got)
		}
	})
}

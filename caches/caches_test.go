package caches

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestLocate(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want map[string]string // entry name -> path; "" = absent
	}{
		{"defaults", nil, map[string]string{
			"xdg-cache": "/h/.cache", "go-build": "", "go-mod": "/h/go/pkg/mod", "npm": "/h/.npm",
			"pnpm-store": "/h/.local/share/pnpm/store", "yarn-berry": "/h/.yarn/berry/cache",
			"cargo-registry": "/h/.cargo/registry", "cargo-git": "/h/.cargo/git", "cargo-home": "/h/.cargo",
			"maven": "/h/.m2/repository", "gradle-caches": "/h/.gradle/caches", "gradle-dists": "/h/.gradle/wrapper/dists"}},
		{"go variables", map[string]string{"GOPATH": "/p:/q", "GOCACHE": "/c/gb"}, map[string]string{
			"go-mod": "/p/pkg/mod", "go-build": "/c/gb"}},
		{"GOMODCACHE beats GOPATH", map[string]string{"GOPATH": "/p", "GOMODCACHE": "/m"}, map[string]string{"go-mod": "/m"}},
		{"GOCACHE off", map[string]string{"GOCACHE": "off"}, map[string]string{"go-build": ""}},
		{"relative XDG_CACHE_HOME is not guessed", map[string]string{"XDG_CACHE_HOME": "rel"}, map[string]string{"xdg-cache": ""}},
		{"CARGO_HOME", map[string]string{"CARGO_HOME": "/ch"}, map[string]string{"cargo-registry": "/ch/registry", "cargo-home": "/ch"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]string{}
			for _, p := range Locate(func(k string) string { return tt.env[k] }, "/h") {
				got[p.Name] = p.Path
			}
			for name, want := range tt.want {
				if got[name] != want {
					t.Errorf("Locate: %s = %q, want %q", name, got[name], want)
				}
			}
		})
	}
}

// The table must never offer Cargo's configuration or binaries, nor a
// whole home, as a cache to overlay.
func TestTableKeepsConfigurationOut(t *testing.T) {
	for _, e := range Table {
		if e.Default == "" && len(e.Env) == 0 {
			t.Errorf("%s: no way to locate it", e.Name)
		}
		if e.Default == ".cargo" && !e.OnlyRedirect {
			t.Errorf("%s: ~/.cargo holds config and bin: it may only be a redirect for a missing ~/.cargo", e.Name)
		}
		if e.Default == "." || e.Default == "" && e.Name != "go-build" {
			t.Errorf("%s: default %q", e.Name, e.Default)
		}
	}
	names := map[string]bool{}
	for _, e := range Table {
		if names[e.Name] {
			t.Errorf("%s twice in the table", e.Name)
		}
		names[e.Name] = true
	}
}

func TestRedirection(t *testing.T) {
	m := Table[slices.IndexFunc(Table, func(e Entry) bool { return e.Name == "maven" })]
	if n, v, _ := m.Redirection("/run/x", func(string) string { return "-Xmx1g" }); n != "MAVEN_OPTS" || v != "-Xmx1g -Dmaven.repo.local=/run/x" {
		t.Errorf("Redirection = %s=%q", n, v)
	}
	if n, v, _ := Table[0].Redirection("/run/x", func(string) string { return "old" }); n != "XDG_CACHE_HOME" || v != "/run/x" {
		t.Errorf("Redirection = %s=%q", n, v)
	}
}

func TestKey(t *testing.T) {
	if Key("/a/b") != Key("/a/b/") || Key("/a/b") == Key("/a/c") || len(Key("/x")) != 16 {
		t.Errorf("Key: not stable, distinct and 16 hex digits: %q %q", Key("/a/b"), Key("/a/c"))
	}
}

func TestPlanEvictsLeastRecentlyUsed(t *testing.T) {
	now := time.Now()
	list := []Info{
		{Key: "old", Bytes: 40, LastUsed: now.Add(-3 * time.Hour)},
		{Key: "new", Bytes: 50, LastUsed: now},
		{Key: "mid", Bytes: 30, LastUsed: now.Add(-time.Hour)},
	}
	keep, evict := plan(list, 100)
	var k, e []string
	for _, in := range keep {
		k = append(k, in.Key)
	}
	for _, in := range evict {
		e = append(e, in.Key)
	}
	if !slices.Equal(k, []string{"new", "mid"}) || !slices.Equal(e, []string{"old"}) {
		t.Errorf("plan = keep %v evict %v, want keep [new mid] evict [old]", k, e)
	}
}

func TestMaintainEvictsAndSkipsHeld(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	mk := func(ws string, size int, used time.Time) Workspace {
		t.Helper()
		if ws != "/ws/gone" {
			ws = filepath.Join(root, ws)
			os.MkdirAll(ws, 0o700)
		}
		w := For(root, ws)
		if err := w.Prepare(ws, []string{"npm"}, used); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(w.Upper("npm"), "blob"), make([]byte, size), 0o600); err != nil {
			t.Fatal(err)
		}
		return w
	}
	old := mk("/ws/old", 64<<10, now.Add(-2*time.Hour))
	held := mk("/ws/held", 64<<10, now.Add(-3*time.Hour))
	fresh := mk("/ws/fresh", 64<<10, now)
	gone := mk("/ws/gone", 1, now)
	// Make the overlay work directory's worst case: mode 0, and a
	// read-only module cache.
	os.MkdirAll(filepath.Join(old.Entry("npm"), "work", "work"), 0o700)
	os.Chmod(filepath.Join(old.Entry("npm"), "work", "work"), 0)
	os.Chmod(old.Upper("npm"), 0o500)
	if err := SetLimit(root, 100<<10); err != nil {
		t.Fatal(err)
	}
	h, _, err := held.Hold()
	if err != nil {
		t.Fatal(err)
	}
	evicted, err := Maintain(root, now)
	h.Close()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/ws/gone", filepath.Join(root, "/ws/old")}; !slices.Equal(evicted, want) {
		t.Errorf("Maintain evicted %v, want %v (gone does not exist, held is busy, fresh fits)", evicted, want)
	}
	for w, want := range map[Workspace]bool{old: false, held: true, fresh: true, gone: false} {
		if _, err := os.Stat(w.Dir()); (err == nil) != want {
			t.Errorf("%s exists = %v, want %v", w.Key, err == nil, want)
		}
	}
	// Measured just now: the next run's end does nothing.
	mk("/ws/other", 1<<20, now)
	if ev, _ := Maintain(root, now.Add(time.Minute)); len(ev) != 0 {
		t.Errorf("Maintain within MeasureEvery evicted %v", ev)
	}
	u, ok := LastUsage(root)
	if !ok || u.Bytes[fresh.Key] == 0 {
		t.Errorf("usage = %+v, want fresh measured", u)
	}
}

func TestClear(t *testing.T) {
	root := t.TempDir()
	w := For(root, "/ws/a")
	if err := w.Prepare("/ws/a", []string{"go-mod"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	h, shared, _ := w.Hold()
	h2, shared2, _ := w.Hold()
	if shared || !shared2 {
		t.Errorf("Hold twice: shared %v then %v, want false then true", shared, shared2)
	}
	if d, err := w.WorkDir("go-mod", shared2, 42); err != nil || d != "work-42" {
		t.Errorf("WorkDir of a shared run = %q, %v; want work-42", d, err)
	}
	h2.Close()
	if err := w.Clear(); err != ErrBusy {
		t.Errorf("Clear while held = %v, want ErrBusy", err)
	}
	h.Close()
	if err := w.Clear(); err != nil {
		t.Fatal(err)
	}
	if list, _ := List(root); len(list) != 0 {
		t.Errorf("List after Clear = %v", list)
	}
}

// A volatile overlay's mark is removed within a boot, and the entry is
// discarded when the boot changed (a crash may have lost its writes).
func TestPrepareVolatileMarks(t *testing.T) {
	if _, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err != nil {
		t.Skip("no boot id on this system")
	}
	root := t.TempDir()
	w := For(root, "/ws/v")
	mark := func() {
		t.Helper()
		m := w.volatileMark("npm")
		if err := os.MkdirAll(filepath.Join(m, "x"), 0o700); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(w.Upper("npm"), "kept"), nil, 0o600)
		for _, d := range []string{m, filepath.Dir(m), filepath.Dir(filepath.Dir(m))} {
			os.Chmod(d, 0) // as overlay leaves them
		}
	}
	if err := w.Prepare("/ws/v", []string{"npm"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	mark()
	if err := w.Prepare("/ws/v", []string{"npm"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Dir(w.volatileMark("npm"))); err == nil {
		t.Errorf("the volatile mark is still there after Prepare in the same boot")
	}
	if _, err := os.Lstat(filepath.Join(w.Upper("npm"), "kept")); err != nil {
		t.Errorf("Prepare in the same boot lost the cache: %v", err)
	}
	mark()
	os.WriteFile(filepath.Join(w.Dir(), bootFile), []byte("another boot\n"), 0o600)
	if err := w.Prepare("/ws/v", []string{"npm"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(w.Upper("npm"), "kept")); err == nil {
		t.Errorf("after a reboot, a cache mounted volatile was kept")
	}
}

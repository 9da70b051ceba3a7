package landlock

import (
	"path"
	"slices"
	"strings"
	"testing"
)

// fakeTree is a directory tree: each directory maps to its entries, where a
// trailing / marks a directory and a trailing @ a symbolic link.
type fakeTree map[string][]string

func (t fakeTree) list(dir string) ([]Entry, error) {
	var out []Entry
	for _, n := range t[dir] {
		switch {
		case strings.HasSuffix(n, "/"):
			out = append(out, Entry{Name: strings.TrimSuffix(n, "/"), Type: TypeDir})
		case strings.HasSuffix(n, "@"):
			out = append(out, Entry{Name: strings.TrimSuffix(n, "@"), Type: TypeSymlink})
		default:
			out = append(out, Entry{Name: n})
		}
	}
	return out, nil
}

func TestRulesLeaveOutExcludedPaths(t *testing.T) {
	tree := fakeTree{
		"/":              {"bin@", "etc/", "home/", "proc/", "tmp/", "usr/"},
		"/etc":           {"hostname", "shadow", "ssl/"},
		"/home":          {"ann/", "bob/"},
		"/home/ann":      {".bashrc", ".ssh/", "proj/"},
		"/home/ann/proj": {"x"},
	}
	fs := HandledAt(7, false).FS
	p := Policy{
		ReadRoots:  []string{"/"},
		WriteRoots: []string{"/home/ann/proj"},
		Exclude:    []string{"/proc", "/tmp", "/etc/shadow", "/home/ann/.ssh"},
	}
	rules, err := p.Rules(fs, tree.list)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Rights{}
	for _, r := range rules {
		got[r.Path] |= r.Access
	}
	want := map[string]Rights{
		"/etc/hostname":     Read &^ Rights(1<<3), // a file: no read-dir right
		"/etc/ssl":          Read,
		"/home/bob":         Read,
		"/home/ann/.bashrc": Read &^ Rights(1<<3),
		"/home/ann/proj":    Read | fs,
		"/usr":              Read,
	}
	for p, acc := range want {
		if got[p] != acc {
			t.Errorf("rules for %s = %#x, want %#x", p, got[p], acc)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("unexpected rule for %s (%#x)", p, got[p])
		}
	}
	for _, x := range []string{"/", "/etc", "/home", "/home/ann", "/etc/shadow", "/home/ann/.ssh", "/proc", "/tmp", "/bin"} {
		if _, ok := got[x]; ok {
			t.Errorf("Rules granted %s, which holds or is an excluded path (or is a link)", x)
		}
	}
}

func TestRulesWithoutExclusionsGrantRoots(t *testing.T) {
	p := Policy{ReadRoots: []string{"/usr", "/etc"}, WriteRoots: []string{"/w"}}
	rules, err := p.Rules(HandledAt(1, false).FS, func(string) ([]Entry, error) {
		t.Fatal("listed a directory without an excluded path beneath it")
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, r := range rules {
		paths = append(paths, r.Path)
	}
	if !slices.Equal(paths, []string{"/usr", "/etc", "/w"}) {
		t.Errorf("rule paths = %q", paths)
	}
}

func TestHandledAt(t *testing.T) {
	for _, tc := range []struct {
		abi         int
		deny        bool
		fsBits      int
		net, scoped bool
	}{
		{0, true, 0, false, false},
		{1, true, 13, false, false},
		{2, true, 14, false, false},
		{3, true, 15, false, false},
		{4, true, 15, true, false},
		{4, false, 15, false, false},
		{5, true, 16, true, false},
		{6, true, 16, true, true},
		{7, true, 16, true, true},
		{9, true, 17, true, true},
		{99, true, 17, true, true},
	} {
		h := HandledAt(tc.abi, tc.deny)
		if want := Rights(1)<<tc.fsBits - 1; h.FS != want {
			t.Errorf("HandledAt(%d).FS = %#x, want %#x", tc.abi, h.FS, want)
		}
		if (h.Net == 3) != tc.net || (h.Net != 0 && h.Net != 3) {
			t.Errorf("HandledAt(%d, %v).Net = %#x", tc.abi, tc.deny, h.Net)
		}
		if (h.Scoped == 3) != tc.scoped || (h.Scoped != 0 && h.Scoped != 3) {
			t.Errorf("HandledAt(%d).Scoped = %#x", tc.abi, h.Scoped)
		}
	}
}

func TestChildRulesStayWithinHandled(t *testing.T) {
	fs := HandledAt(2, false).FS
	for _, r := range ChildRules([]string{"/tmp", "/dev/shm"}, "/home/a/.ssh", "/home/a/.netrc", fs) {
		if r.Access&^fs != 0 || r.Access == 0 || !path.IsAbs(r.Path) {
			t.Errorf("child rule %s %#x outside handled %#x", r.Path, r.Access, fs)
		}
	}
}

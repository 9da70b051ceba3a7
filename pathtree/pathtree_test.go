package pathtree

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestWithinBeneath(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the table is written in slash-separated names")
	}
	tests := []struct {
		p, dir          string
		within, beneath bool
	}{
		{"/", "/", true, false},
		{"/a", "/", true, true},
		{"/a/b", "/", true, true},
		{"/a", "/a", true, false},
		{"/a/b", "/a", true, true},
		{"/a/b/c", "/a", true, true},
		{"/ab", "/a", false, false},
		{"/a/..b", "/a", true, true},
		{"/a", "/ab", false, false},
		{"/a", "/a/b", false, false},
		{"/", "/a", false, false},
		// Trailing slashes and dots name the same directory.
		{"/a/", "/a", true, false},
		{"/a", "/a/", true, false},
		{"/a/b/", "/a/", true, true},
		{"/a/.", "/a", true, false},
		{"/a/./b", "/a", true, true},
		{"//a//b", "/a", true, true},
		// ".." is folded before judging, and never climbs back in.
		{"/a/../b", "/a", false, false},
		{"/a/../a/b", "/a", true, true},
		{"/a/b/..", "/a", true, false},
		{"/..", "/", true, false},
		{"/../a", "/a", true, false},
		// Relative names.
		{".", ".", true, false},
		{"a", ".", true, true},
		{"a/b", "a", true, true},
		{"ab", "a", false, false},
		{"a/../b", "a", false, false},
		{"a/../b", "b", true, false},
		{"..", ".", false, false},
		{"../a", ".", false, false},
		{"..", "..", true, false},
		{"../a", "..", true, true},
		{"../..", "..", false, false},
		{"../../a", "..", false, false},
		{"a", "..", false, false},
		{"./a", "a", true, false},
		// Absolute and relative never contain each other.
		{"/a", ".", false, false},
		{"a", "/", false, false},
		{"/a", "a", false, false},
		// The empty string names nothing.
		{"", "", false, false},
		{"", ".", false, false},
		{"a", "", false, false},
		{"/a", "", false, false},
		// On Linux a backslash is a byte like any other.
		{`C:\a\b`, `C:\a`, false, false},
		{`/a\b`, "/a", false, false},
		{`/a/b\c`, "/a", true, true},
		{`/a\`, `/a\`, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.p+" in "+tt.dir, func(t *testing.T) {
			if got := Within(tt.p, tt.dir); got != tt.within {
				t.Errorf("Within(%q, %q) = %v, want %v", tt.p, tt.dir, got, tt.within)
			}
			if got := Beneath(tt.p, tt.dir); got != tt.beneath {
				t.Errorf("Beneath(%q, %q) = %v, want %v", tt.p, tt.dir, got, tt.beneath)
			}
		})
	}
}

// byRel is the slow, obvious answer: p is within dir when the way from dir
// to p does not begin by climbing out.
func byRel(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func FuzzWithin(f *testing.F) {
	for _, s := range [][2]string{
		{"/", "/"}, {"/a", "/"}, {"/a", "/ab"}, {"/ab", "/a"}, {"/a/b", "/a"}, {"/a/../b", "/a"},
		{"a", "."}, {"..", "."}, {"../..", ".."}, {"a/../b", "b"}, {"/a/", "/a"}, {"", "/"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, p, dir string) {
		if p == "" || dir == "" {
			if Within(p, dir) || Beneath(p, dir) {
				t.Fatalf("Within/Beneath(%q, %q) = true for an empty name", p, dir)
			}
			return
		}
		cp, cd := filepath.Clean(p), filepath.Clean(dir)
		want := byRel(cp, cd)
		if filepath.IsAbs(cp) != filepath.IsAbs(cd) {
			// Rel refuses to mix them (and so must Within).
			want = false
		}
		if got := Within(p, dir); got != want {
			t.Fatalf("Within(%q, %q) = %v, want %v (Rel of %q from %q)", p, dir, got, want, cp, cd)
		}
		if got, want := Beneath(p, dir), want && cp != cd; got != want {
			t.Fatalf("Beneath(%q, %q) = %v, want %v", p, dir, got, want)
		}
	})
}

package files

import (
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	f := &FS{root: "/ws/real", roots: [][]string{{"ws", "real"}, {"ws", "link"}}}
	for _, tc := range []struct {
		in      string
		want    []string
		dirOnly bool
		kind    Kind
	}{
		{in: "a/b", want: []string{"a", "b"}},
		{in: "./a//b/.", want: []string{"a", "b"}, dirOnly: true},
		{in: "a/../b", want: []string{"a", "..", "b"}}, // ".." is left to the walk
		{in: ".", want: nil},
		{in: "a/", want: []string{"a"}, dirOnly: true},
		{in: "/ws/real/a", want: []string{"a"}},
		{in: "/ws/link/a", want: []string{"a"}},
		{in: "/ws/real", want: nil},
		{in: "//ws/./real/a", want: []string{"a"}},
		{in: "/ws/realx/a", kind: KindOutside},
		{in: "/ws/../ws/real/a", kind: KindOutside},
		{in: "/etc/passwd", kind: KindOutside},
		{in: "", kind: KindInvalid},
		{in: "a\x00b", kind: KindInvalid},
		{in: "a\xffb", kind: KindInvalid},
		{in: strings.Repeat("a/", 2049), kind: KindInvalid},
		{in: strings.Repeat("é", 128), kind: KindInvalid}, // 256 bytes in one name
	} {
		r, err := f.parse("read", tc.in)
		if tc.kind != "" {
			if KindOf(err) != tc.kind {
				t.Errorf("parse(%q) = %v, want kind %s", shorten(tc.in), err, tc.kind)
			}
			continue
		}
		if err != nil || !slices.Equal(r.comps, tc.want) || r.dirOnly != tc.dirOnly {
			t.Errorf("parse(%q) = %q (dirOnly %v), %v; want %q (dirOnly %v)", tc.in, r.comps, r.dirOnly, err, tc.want, tc.dirOnly)
		}
	}
}

func TestShortenKeepsUTF8(t *testing.T) {
	s := shorten(strings.Repeat("é", 100))
	if !strings.HasSuffix(s, "...") || strings.ContainsRune(s, '\uFFFD') || len(s) > 67 {
		t.Errorf("shorten = %q", s)
	}
}

func TestGuards(t *testing.T) {
	g := &guards{
		protected: []guard{{name: ".git/hooks", forms: [][]string{{".git", "hooks"}}}, {name: ".vscode", forms: [][]string{{".vscode"}, {"cfg", "vscode"}}}},
		hidden:    []guard{{name: "/ws/.env", forms: [][]string{{".env"}}}},
	}
	for _, tc := range []struct {
		path             []string
		changes, creates bool
	}{
		{[]string{".git", "hooks"}, true, true},
		{[]string{".git", "hooks", "pre-commit"}, true, true},
		{[]string{".git"}, true, false}, // holds .git/hooks
		{nil, true, false},              // the root holds everything
		{[]string{".git", "objects"}, false, false},
		{[]string{".git", "hooksx"}, false, false},
		{[]string{".GIT", "hooks"}, false, false}, // case-sensitive, as Linux is
		{[]string{"cfg", "vscode", "s.json"}, true, true},
		{[]string{"cfg"}, true, false},
		{[]string{"src", ".git", "hooks"}, false, false},
	} {
		if _, got := g.changes(tc.path); got != tc.changes {
			t.Errorf("changes(%q) = %v, want %v", tc.path, got, tc.changes)
		}
		if _, got := g.creates(tc.path); got != tc.creates {
			t.Errorf("creates(%q) = %v, want %v", tc.path, got, tc.creates)
		}
	}
	if _, ok := g.hides([]string{".env"}, false); !ok {
		t.Error("hides(.env) = false")
	}
	if _, ok := g.hides(nil, false); ok {
		t.Error("hides(root, not subtree) = true")
	}
	if _, ok := g.hides(nil, true); !ok {
		t.Error("hides(root, subtree) = false")
	}
	if !g.hidesName(nil, ".env") || g.hidesName(nil, ".envrc") {
		t.Error("hidesName wrong")
	}
}

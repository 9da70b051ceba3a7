package shellquote

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"ls", "ls"},
		{"--x=1", "--x=1"},
		{"/usr/bin/forgebox", "/usr/bin/forgebox"},
		{"a@b:c,d+e%f", "a@b:c,d+e%f"},
		{"", "''"},
		{"a b", "'a b'"},
		{"it's", `'it'\''s'`},
		{"'", `''\'''`},
		{"$(id)", "'$(id)'"},
		{"`id`", "'`id`'"},
		{`a\b`, `'a\b'`},
		{"a\nb", "'a\nb'"},
		{"!!", "'!!'"},
		{"*", "'*'"},
		{"~", "'~'"},
		{"#x", "'#x'"},
		{"héllo", "'héllo'"},
		{"\xff", "'\xff'"},
	}
	for _, tt := range tests {
		if got := Quote(tt.in); got != tt.want {
			t.Errorf("Quote(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestJoin(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"ls", "-la", "my dir"}, "ls -la 'my dir'"},
		{[]string{""}, "''"},
		{[]string{"A=1", "B=2"}, "'A=1' B=2"},
		{[]string{"_a1=x"}, "'_a1=x'"},
		{[]string{"--x=1"}, "--x=1"},
		{[]string{"1A=x"}, "1A=x"},
		{[]string{"=x"}, "=x"},
		{[]string{"if", "x"}, "'if' x"},
		{[]string{"time", "ls"}, "'time' ls"},
		{[]string{"ls", "if", "time"}, "ls if time"},
	}
	for _, tt := range tests {
		if got := Join(tt.in); got != tt.want {
			t.Errorf("Join(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// roundTripCases are the strings a shell is most likely to read as something
// else. NUL is not among them: argv cannot carry it.
var roundTripCases = []string{
	"", "plain", "a b", "  lead and trail  ", "it's", "''", `"`, `\`, `a\'b`, `\\n`,
	"a\nb", "\n", "a\tb", "\r", "$HOME", "${x:-y}", "$(id)", "`id`", "!", "!!", "!$",
	"*", "?", "[a]", "{a,b}", "~", "~root", "#c", "-n", "-e", "--", "-", "a;b", "a|b",
	"a&b", "a>b", "<", "(x)", "A=1", "héllo", "日本", "\xff", "\xc3", "a\xffb", "\x01\x7f",
	"%s", "%", "=", "^", "'\\''",
}

// shells are the POSIX shells present here; the test needs at least one.
func shells(t *testing.T) []string {
	t.Helper()
	var found []string
	for _, sh := range []string{"bash", "sh", "dash"} {
		p, err := exec.LookPath(sh)
		if err != nil {
			continue
		}
		// sh is often dash under another name; test each shell once.
		if r, err := filepath.EvalSymlinks(p); err == nil && !slices.Contains(found, r) {
			found = append(found, r)
		}
	}
	if len(found) == 0 {
		t.Skip("no POSIX shell on PATH")
	}
	return found
}

// echo has sh print every word of Join(args) after printf, NUL-terminated.
func echo(t *testing.T, sh string, args []string) []byte {
	t.Helper()
	out, err := exec.Command(sh, "-c", `printf '%s\0' `+Join(args)).Output()
	if err != nil {
		t.Fatalf("%s -c printf %s: %v", sh, Join(args), err)
	}
	return out
}

func nulJoined(args []string) []byte {
	var b bytes.Buffer
	for _, a := range args {
		b.WriteString(a)
		b.WriteByte(0)
	}
	return b.Bytes()
}

func TestRoundTrip(t *testing.T) {
	for _, sh := range shells(t) {
		t.Run(sh, func(t *testing.T) {
			for _, c := range roundTripCases {
				if got, want := echo(t, sh, []string{c}), nulJoined([]string{c}); !bytes.Equal(got, want) {
					t.Errorf("%s -c printf %s printed %q, want %q", sh, Quote(c), got, want)
				}
			}
			// All at once: words stay apart.
			if got, want := echo(t, sh, roundTripCases), nulJoined(roundTripCases); !bytes.Equal(got, want) {
				t.Errorf("%s -c printf %s printed %q, want %q", sh, Join(roundTripCases), got, want)
			}
		})
	}
}

// Join's first word, when run, is the command: not an assignment, not a
// reserved word.
func TestJoinFirstWordIsCommand(t *testing.T) {
	for _, sh := range shells(t) {
		for _, first := range []string{"A=1", "if", "do"} {
			line := Join([]string{first, "x"})
			out, err := exec.Command(sh, "-c", line+` 2>/dev/null; echo "$?"`).Output()
			if err != nil {
				t.Fatalf("%s -c %s: %v", sh, line, err)
			}
			if got := strings.TrimSpace(string(out)); got != "127" {
				t.Errorf("%s -c %s: exit %s; want 127, no command named %s", sh, line, got, first)
			}
		}
	}
}

func FuzzQuote(f *testing.F) {
	for _, c := range roundTripCases {
		f.Add(c)
	}
	sh, err := exec.LookPath("bash")
	if err != nil {
		f.Skip("no bash on PATH")
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.IndexByte(s, 0) >= 0 {
			t.Skip("argv cannot carry a NUL byte")
		}
		args := []string{s, s + "x"}
		if got, want := echo(t, sh, args), nulJoined(args); !bytes.Equal(got, want) {
			t.Errorf("bash -c printf %s printed %q, want %q", Join(args), got, want)
		}
	})
}

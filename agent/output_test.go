package agent

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestShares(t *testing.T) {
	for _, tc := range []struct{ a, b, budget, wa, wb int }{
		{10, 20, 100, 10, 20},
		{1000, 10, 100, 90, 10},
		{10, 1000, 100, 10, 90},
		{1000, 1000, 100, 50, 50},
	} {
		if a, b := shares(tc.a, tc.b, tc.budget); a != tc.wa || b != tc.wb {
			t.Errorf("shares(%d, %d, %d) = %d, %d; want %d, %d", tc.a, tc.b, tc.budget, a, b, tc.wa, tc.wb)
		}
	}
}

// clip keeps a head and a tail of valid UTF-8 and names exactly the bytes
// it left out.
func TestClip(t *testing.T) {
	s := strings.Repeat("héllo wörld ✓ ", 500)
	got, cut := clip(s, 1000, "stdout", "k1")
	if !cut || !utf8.ValidString(got) {
		t.Fatalf("clip: cut %v, valid %v", cut, utf8.ValidString(got))
	}
	head, rest, _ := strings.Cut(got, "\n[forgebox: ")
	marker, tail, _ := strings.Cut(rest, "]\n")
	if !strings.HasPrefix(s, head) || !strings.HasSuffix(s, tail) || len(head)+len(tail) > 1000 || len(head)+len(tail) < 990 {
		t.Errorf("head %d + tail %d bytes of %d; want about 1000 from the ends", len(head), len(tail), len(s))
	}
	if want := "bytes " + itoa(len(head)) + " to " + itoa(len(s)-len(tail)) + " of " + itoa(len(s)); !strings.HasPrefix(marker, want) {
		t.Errorf("marker %q; want it to start %q", marker, want)
	}
	// Lines are kept whole where one ends near the cut.
	var lines strings.Builder
	for i := range 2000 {
		lines.WriteString(strconv.Itoa(100000+i) + "\n")
	}
	got, _ = clip(lines.String(), 1000, "stdout", "k")
	head, rest, _ = strings.Cut(got, "\n[forgebox: ")
	_, tail, _ = strings.Cut(rest, "]\n")
	if !strings.HasSuffix(head, "\n") || len(tail)%7 != 0 || !strings.HasPrefix(lines.String(), head) || !strings.HasSuffix(lines.String(), tail) {
		t.Errorf("clip cut a line: head ends %q, tail starts %q", head[max(0, len(head)-10):], tail[:min(10, len(tail))])
	}
	if got, cut := clip("short", 1000, "stdout", "k"); cut || got != "short" {
		t.Errorf("clip of a short output: %q, %v", got, cut)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

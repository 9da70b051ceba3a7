package sandbox

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestHeadTail(t *testing.T) {
	tests := []struct {
		name   string
		limit  int64
		writes []string
		head   string
		tail   string
		omit   int64
	}{
		{"fits", 10, []string{"abc", "def"}, "abcdef", "", 0},
		{"exact", 6, []string{"abcdef"}, "abcdef", "", 0},
		{"one big write", 6, []string{"0123456789"}, "012", "789", 4},
		{"many small writes", 6, []string{"01", "23", "45", "67", "89"}, "012", "789", 4},
		{"wraps the ring", 4, []string{"abcdefghij", "k", "lm"}, "ab", "lm", 9},
	}
	for _, tt := range tests {
		b := newHeadTail(tt.limit)
		for _, w := range tt.writes {
			b.Write([]byte(w))
		}
		c := b.result()
		if string(c.Head) != tt.head || string(c.Tail) != tt.tail || c.Omitted != tt.omit {
			t.Errorf("%s: head %q tail %q omitted %d; want %q %q %d", tt.name, c.Head, c.Tail, c.Omitted, tt.head, tt.tail, tt.omit)
		}
		if c.Total != int64(len(strings.Join(tt.writes, ""))) {
			t.Errorf("%s: total %d", tt.name, c.Total)
		}
	}
}

// Cutting inside a multi-byte character would turn valid text into
// replacement characters: the cut moves to a character boundary.
func TestHeadTailKeepsUTF8Whole(t *testing.T) {
	text := strings.Repeat("é€😀", 1000)
	for limit := int64(4); limit < 40; limit++ {
		b := newHeadTail(limit)
		b.Write([]byte(text))
		c := b.result()
		if !utf8.Valid(c.Head) || !utf8.Valid(c.Tail) {
			t.Fatalf("limit %d: head %q tail %q are not valid UTF-8", limit, c.Head, c.Tail)
		}
		if int64(len(c.Head)+len(c.Tail))+c.Omitted != int64(len(text)) {
			t.Fatalf("limit %d: kept+omitted = %d; want %d", limit, int64(len(c.Head)+len(c.Tail))+c.Omitted, len(text))
		}
	}
}

// Memory stays bounded however much is written.
func TestHeadTailBounded(t *testing.T) {
	b := newHeadTail(1024)
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for i := 0; i < 1000; i++ {
		b.Write(chunk)
	}
	if cap(b.head)+len(b.tail) > 1024 {
		t.Errorf("buffers hold %d bytes for a 1024 byte limit", cap(b.head)+cap(b.tail))
	}
}

func TestLimitedStream(t *testing.T) {
	var out bytes.Buffer
	l := newLimitedStream(&out, 8)
	l.Write([]byte("0123456789"))
	l.Write([]byte("abcdef"))
	if err := l.finish(); err != nil {
		t.Fatal(err)
	}
	if want := "0123\n[forgebox: 8 bytes omitted]\ncdef"; out.String() != want {
		t.Errorf("limited stream wrote %q; want %q", out.String(), want)
	}
	out.Reset()
	l = newLimitedStream(&out, 100)
	l.Write([]byte("short"))
	l.finish()
	if out.String() != "short" {
		t.Errorf("limited stream under its limit wrote %q; want %q", out.String(), "short")
	}
}

// Any sequence of writes keeps exactly the first and last bytes of what a
// plain buffer would hold (a partly filled ring met by a large write once
// spun forever).
func TestHeadTailMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 2000; round++ {
		head, tail := rng.IntN(40), 1+rng.IntN(40)
		b := newHeadTailSplit(head, tail)
		var all []byte
		for w := rng.IntN(12); w >= 0; w-- {
			p := make([]byte, rng.IntN(3*tail+2))
			for i := range p {
				p[i] = byte('a' + rng.IntN(26))
			}
			b.Write(p)
			all = append(all, p...)
		}
		c := b.result()
		wantHead := all[:min(head, len(all))]
		rest := all[len(wantHead):]
		wantTail := rest[max(0, len(rest)-tail):]
		got := append(append([]byte{}, c.Head...), c.Tail...)
		if c.Omitted == 0 {
			if string(got) != string(all) {
				t.Fatalf("round %d: kept %q; want everything %q", round, got, all)
			}
			continue
		}
		if string(c.Head) != string(wantHead) || string(c.Tail) != string(wantTail) || c.Total != int64(len(all)) {
			t.Fatalf("round %d (head %d, tail %d): got %q | %q; want %q | %q", round, head, tail, c.Head, c.Tail, wantHead, wantTail)
		}
	}
}

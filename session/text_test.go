package session

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSanitizer(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "hello\n", "hello\n"},
		{"crlf", "a\r\nb\r\n", "a\nb\n"},
		{"cr cr lf", "a\r\r\nb", "a\nb"},
		{"lone cr kept", "10%\r20%\n", "10%\r20%\n"},
		{"cr at line start dropped", "\ra\n\r\x1b[?2004l\rb", "a\nb"},
		{"cr then control", "a\r\x07\nb", "a\nb"},
		{"colour", "\x1b[1;31mred\x1b[0m\n", "red\n"},
		{"cursor motion", "\x1b[5;10HX", "X"},
		{"private mode", "\x1b[?2004hA\x1b[?2004l", "A"},
		{"osc bel", "\x1b]0;title\x07text", "text"},
		{"osc st", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"charset", "\x1b(Bok", "ok"},
		{"two char esc", "\x1b=\x1b>ok", "ok"},
		{"controls dropped", "a\x00b\x07c\x08d\x7fe\tf", "abcde\tf"},
		{"control aborts csi", "\x1b[1\nx", "\nx"},
		{"control aborts esc", "a\x1b\nb\x1b(\nc", "a\nb\nc"},
		{"newline ends osc", "\x1b]garbage\nnext\n", "\nnext\n"},
		{"utf8 kept", "héllo ✓\n", "héllo ✓\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c sanitizer
			if got := string(c.clean(nil, []byte(tt.in))); got != tt.want {
				t.Errorf("clean(%q) = %q, want %q", tt.in, got, tt.want)
			}
			// Byte by byte: state must carry across writes.
			var c2 sanitizer
			var got []byte
			for i := 0; i < len(tt.in); i++ {
				got = c2.clean(got, []byte{tt.in[i]})
			}
			if string(got) != tt.want {
				t.Errorf("clean(%q) byte by byte = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSanitizerUnterminatedStringEnds(t *testing.T) {
	var c sanitizer
	in := "\x1b]" + strings.Repeat("x", maxStringSequence+10) + "visible"
	if got := string(c.clean(nil, []byte(in))); !strings.HasSuffix(got, "visible") {
		t.Errorf("clean(unterminated OSC) = ...%q, want it to end in %q", got[max(0, len(got)-20):], "visible")
	}
}

func TestBoundedBuffer(t *testing.T) {
	tests := []struct {
		name          string
		limit         int
		writes        []string
		want          string
		wantTruncated bool
	}{
		{"fits", 16, []string{"abc", "def"}, "abcdef", false},
		{"exactly", 8, []string{"12345678"}, "12345678", false},
		{"head and tail", 8, []string{"0123456789"}, "01\n[... 2 bytes omitted ...]\n456789", true},
		{"many writes", 8, []string{"01", "23", "45", "67", "89", "ab"}, "01\n[... 4 bytes omitted ...]\n6789ab", true},
		{"utf8 at cut", 8, []string{"aé", "xxxxxxxxx", "é✓"}, "a\n[... 10 bytes omitted ...]\nxé✓", true},
		{"tail starts mid rune", 8, []string{"ab", "xxxxxxx", "✓✓y"}, "ab\n[... 10 bytes omitted ...]\n✓y", true},
		{"invalid utf8", 16, []string{"a\xffb"}, "a\uFFFDb", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBoundedBuffer(tt.limit)
			for _, w := range tt.writes {
				b.write([]byte(w))
			}
			got, truncated := b.take()
			if got != tt.want || truncated != tt.wantTruncated {
				t.Errorf("take() = %q, %v, want %q, %v", got, truncated, tt.want, tt.wantTruncated)
			}
			if !utf8.ValidString(got) {
				t.Errorf("take() = %q: not valid UTF-8", got)
			}
			if again, _ := b.take(); again != "" {
				t.Errorf("second take() = %q, want empty", again)
			}
		})
	}
}

func TestBoundedBufferLarge(t *testing.T) {
	b := newBoundedBuffer(DefaultOutputLimit)
	chunk := []byte(strings.Repeat("a", 4095))
	for range 1300 {
		b.write(chunk)
	}
	got, truncated := b.take()
	if !truncated || len(got) > DefaultOutputLimit+64 {
		t.Fatalf("take() after 5 MB = %d bytes, truncated %v; want at most %d, truncated", len(got), truncated, DefaultOutputLimit+64)
	}
	if !strings.Contains(got, "bytes omitted ...]") {
		t.Errorf("take() after 5 MB has no omission note")
	}
	if cap(b.tail) > 3*DefaultOutputLimit {
		t.Errorf("tail grew to %d bytes", cap(b.tail))
	}
}

func TestIncompleteRuneSuffix(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0}, {"abc", 0}, {"a\xc3", 1}, {"a\xe2\x9c", 2}, {"a✓", 0}, {"\xf0\x9f\x98", 3}, {"\xff", 0},
	}
	for _, tt := range tests {
		if got := incompleteRuneSuffix([]byte(tt.in)); got != tt.want {
			t.Errorf("incompleteRuneSuffix(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

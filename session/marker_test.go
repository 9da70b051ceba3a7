package session

import (
	"fmt"
	"strings"
	"testing"
)

type recorder struct {
	events []string
}

func (r *recorder) text(p []byte) {
	if n := len(r.events); n > 0 && strings.HasPrefix(r.events[n-1], "T:") {
		r.events[n-1] += string(p)
		return
	}
	r.events = append(r.events, "T:"+string(p))
}

func (r *recorder) marker(m marker) {
	r.events = append(r.events, fmt.Sprintf("M:%c:%s:%d", m.kind, m.id, m.status))
}

func TestMarkerScanner(t *testing.T) {
	nonce := strings.Repeat("ab", 16)
	other := strings.Repeat("cd", 16)
	start := "\x1b]6973;S;" + nonce + "\x07"
	prompt := "\x1b]6973;P;" + nonce + ";3\x07"
	tests := []struct {
		name, in string
		want     []string
	}{
		{"text only", "hello", []string{"T:hello"}},
		{"start and prompt", "echo" + start + "out\n" + prompt + "rest",
			[]string{"T:echo", "M:S:" + nonce + ":0", "T:out\n", "M:P:" + nonce + ":3", "T:rest"}},
		{"unknown id is text", "\x1b]6973;P;" + other + ";0\x07x",
			[]string{"T:\x1b]6973;P;" + other + ";0\x07x"}},
		{"malformed is text", "\x1b]6973;P;" + nonce + ";x\x07", []string{"T:\x1b]6973;P;" + nonce + ";x\x07"}},
		{"other osc untouched", "\x1b]0;t\x07a", []string{"T:\x1b]0;t\x07a"}},
		{"echo of the typed line", `__fb_begin ` + nonce + `; eval $'printf \033]6973;S;%s\007'`,
			[]string{`T:__fb_begin ` + nonce + `; eval $'printf \033]6973;S;%s\007'`}},
		{"unterminated too long", "\x1b]6973;" + strings.Repeat("z", 100),
			[]string{"T:\x1b]6973;" + strings.Repeat("z", 100)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Every way of splitting the input in two must give the same events.
			for cut := 0; cut <= len(tt.in); cut++ {
				sc := markerScanner{known: func(id string) bool { return id == nonce }}
				var r recorder
				sc.scan([]byte(tt.in[:cut]), &r)
				sc.scan([]byte(tt.in[cut:]), &r)
				if tt.name == "unterminated too long" {
					// Held bytes are released once it cannot be a marker.
					sc.scan([]byte("!"), &r)
					r.events[len(r.events)-1] = strings.TrimSuffix(r.events[len(r.events)-1], "!")
				}
				if fmt.Sprint(r.events) != fmt.Sprint(tt.want) {
					t.Fatalf("scan(%q split at %d) = %q, want %q", tt.in, cut, r.events, tt.want)
				}
			}
		})
	}
}

func TestAnsiCQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"echo hi", `$'echo hi'`},
		{"it's", `$'it\'s'`},
		{`a\b`, `$'a\\b'`},
		{"a\nb\tc", `$'a\nb\tc'`},
		{"echo hi!", `$'echo hi\x21'`},
		{"é", `$'\xc3\xa9'`},
		{"\x1b[0m", `$'\x1b[0m'`},
	}
	for _, tt := range tests {
		got := ansiCQuote(tt.in)
		if got != tt.want {
			t.Errorf("ansiCQuote(%q) = %s, want %s", tt.in, got, tt.want)
		}
		for _, c := range []byte(got) {
			if c < 0x20 || c >= 0x7f {
				t.Errorf("ansiCQuote(%q) = %q contains byte %#x: readline would not self-insert it", tt.in, got, c)
			}
		}
	}
}

func TestExecLineHoldsNoMarker(t *testing.T) {
	nonce := strings.Repeat("0f", 16)
	line := execLine(nonce, `printf '\033]6973;P;%s;0\007' x`) + setupLine(nonce, nonce)
	if strings.Contains(line, "\x1b") || strings.Contains(line, "\x07") {
		t.Errorf("typed lines contain ESC or BEL: their echo could be read as a marker: %q", line)
	}
}

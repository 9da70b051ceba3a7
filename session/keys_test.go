package session

import (
	"errors"
	"strings"
	"testing"
)

func TestParseKeys(t *testing.T) {
	tests := []struct {
		in         string
		app        bool
		want       string
		wantErrKey string
	}{
		{in: "ls -l{Enter}", want: "ls -l\r"},
		{in: "echo hi\n", want: "echo hi\r"},
		{in: "a\r\nb", want: "a\rb"},
		{in: "{Ctrl-C}", want: "\x03"},
		{in: "{ctrl-d}{CTRL-Z}{Ctrl-x}", want: "\x04\x1a\x18"},
		{in: "{Ctrl-[}{Ctrl-\\}{Ctrl-Space}", want: "\x1b\x1c\x00"},
		{in: "itext here{Esc}:wq{Enter}", want: "itext here\x1b:wq\r"},
		{in: "{Up}{Down}{Left}{Right}", want: "\x1b[A\x1b[B\x1b[D\x1b[C"},
		{in: "{Up}{Home}{PageUp}", app: true, want: "\x1bOA\x1bOH\x1b[5~"},
		{in: "{F1}{F5}{F12}", want: "\x1bOP\x1b[15~\x1b[24~"},
		{in: "{Tab}{BackTab}{Backspace}{Delete}", want: "\t\x1b[Z\x7f\x1b[3~"},
		{in: "{Alt-b}{Alt-B}", want: "\x1bb\x1bB"},
		{in: "{{Enter}", want: "{Enter}"},
		{in: `{{"a": 1}`, want: `{"a": 1}`},
		{in: "a}b", want: "a}b"},
		{in: "", want: ""},
		{in: "ok{Nope}", wantErrKey: "Nope"},
		{in: `{"a": 1}`, wantErrKey: `"a": 1`},
		{in: "{Ctrl-1}", wantErrKey: "Ctrl-1"},
		{in: "{Alt-}", wantErrKey: "Alt-"},
		{in: "{a-b}", wantErrKey: "a-b"},
	}
	for _, tt := range tests {
		k, err := parseKeys(tt.in)
		if tt.wantErrKey != "" {
			var uk *UnknownKeyError
			if !errors.As(err, &uk) || uk.Name != tt.wantErrKey {
				t.Errorf("parseKeys(%q) error = %v, want unknown key %q", tt.in, err, tt.wantErrKey)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseKeys(%q) error = %v", tt.in, err)
			continue
		}
		if got := string(k.encode(tt.app)); got != tt.want {
			t.Errorf("parseKeys(%q).encode(%v) = %q, want %q", tt.in, tt.app, got, tt.want)
		}
	}
}

func TestParseKeysErrors(t *testing.T) {
	_, err := parseKeys("{Enter")
	if err == nil || !strings.Contains(err.Error(), "{{") {
		t.Errorf("parseKeys(unterminated) error = %v, want advice on {{", err)
	}
	_, err = parseKeys("{Bogus}")
	for _, name := range []string{"{Enter}", "{Esc}", "{Ctrl-C}", "{F12}", "{PageDown}", "{{"} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("parseKeys({Bogus}) error = %v, want it to list %s", err, name)
		}
	}
}

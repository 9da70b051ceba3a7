package sandbox

import (
	"encoding/base64"
	"testing"
)

func TestText(t *testing.T) {
	tests := []struct {
		name      string
		c         Captured
		text, b64 string
	}{
		{"utf8", Captured{Head: []byte("héllo\n"), Total: 7}, "héllo\n", ""},
		{"invalid bytes", Captured{Head: []byte("a\xff\xfeb"), Total: 4}, "a\uFFFD\uFFFDb", base64.StdEncoding.EncodeToString([]byte("a\xff\xfeb"))},
		{"nul", Captured{Head: []byte("a\x00b"), Total: 3}, "a\x00b", ""},
		{"truncated", Captured{Head: []byte("head"), Tail: []byte("tail"), Omitted: 92, Total: 100}, "head\n[forgebox: 92 bytes omitted]\ntail", ""},
	}
	for _, tt := range tests {
		text, b64 := tt.c.Text()
		if text != tt.text || b64 != tt.b64 {
			t.Errorf("Text(%s) = %q, %q; want %q, %q", tt.name, text, b64, tt.text, tt.b64)
		}
	}
}

// Whatever the command printed, the result is valid JSON with stable,
// always-present fields.

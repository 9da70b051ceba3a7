package files

import (
	"encoding/base64"
	"testing"
)

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name   string
		buf    string
		offset int64
		eof    bool
		want   chunk
	}{
		{"ascii", "hello", 0, true, chunk{content: "hello", used: 5}},
		{"empty", "", 0, true, chunk{content: "", used: 0}},
		{"cut character at end", "h\xc3\xa9\xc3", 0, false, chunk{content: "hé", used: 3}},
		{"cut 4-byte character", "a\xf0\x9f\x98", 0, false, chunk{content: "a", used: 1}},
		{"complete at end", "h\xc3\xa9", 0, false, chunk{content: "hé", used: 3}},
		{"offset inside character", "\xa9llo", 2, true, chunk{content: "llo", skip: 1, used: 4}},
		{"offset inside 4-byte character", "\x9f\x98\x80x", 1, true, chunk{content: "x", skip: 3, used: 4}},
		{"NUL byte", "a\x00b", 0, true, chunk{content: b64("a\x00b"), used: 3, binary: true}},
		{"invalid UTF-8", "a\xffb", 0, true, chunk{content: b64("a\xffb"), used: 3, binary: true}},
		{"cut character at end of file", "h\xc3", 0, true, chunk{content: b64("h\xc3"), used: 2, binary: true}},
		{"single partial character", "\xc3", 0, false, chunk{content: b64("\xc3"), used: 1, binary: true}},
		{"continuation bytes at offset 0", "\xa9llo", 0, true, chunk{content: b64("\xa9llo"), used: 4, binary: true}},
	} {
		got := decode([]byte(tc.buf), tc.offset, tc.eof)
		if got != tc.want {
			t.Errorf("%s: decode(%q, %d, %v) = %+v, want %+v", tc.name, tc.buf, tc.offset, tc.eof, got, tc.want)
		}
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

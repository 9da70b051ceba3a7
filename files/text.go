package files

import (
	"bytes"
	"encoding/base64"
	"unicode/utf8"
)

// chunk is what Read returns for the bytes it read.
type chunk struct {
	content string
	skip    int  // bytes at the start that belong to a character begun before the offset
	used    int  // bytes of the read consumed, skip included
	binary  bool // content is base64
}

// decode turns bytes read at offset into text when they are text: valid
// UTF-8 without NUL bytes. A character cut by the offset or by the end of
// the read (when the file goes on) is left out, so that consecutive reads
// join into the file without mangling it. Anything else is binary and
// returned whole as base64: an agent without a shell still gets to see the
// bytes, and MaxRead bounds what that costs.
func decode(buf []byte, offset int64, eof bool) chunk {
	skip := 0
	if offset > 0 {
		for skip < utf8.UTFMax-1 && skip < len(buf) && !utf8.RuneStart(buf[skip]) {
			skip++
		}
	}
	text := buf[skip:]
	if !eof {
		if end := completeRunes(text); end > 0 {
			text = text[:end]
		}
	}
	if isText(text) {
		return chunk{content: string(text), skip: skip, used: skip + len(text)}
	}
	return chunk{content: base64.StdEncoding.EncodeToString(buf), used: len(buf), binary: true}
}

// completeRunes returns the length of b without a final character that
// b holds only the beginning of.
func completeRunes(b []byte) int {
	start := len(b) - 1
	for start > 0 && start > len(b)-utf8.UTFMax && !utf8.RuneStart(b[start]) {
		start--
	}
	if start >= 0 && !utf8.FullRune(b[start:]) {
		return start
	}
	return len(b)
}

// isText is what counts as text, for Read and Edit: valid UTF-8 without
// NUL bytes.
func isText(b []byte) bool {
	return bytes.IndexByte(b, 0) < 0 && utf8.Valid(b)
}

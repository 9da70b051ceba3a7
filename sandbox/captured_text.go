package sandbox

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"
)

// Text renders the captured output as a JSON-safe string: valid UTF-8 passes
// unchanged, each byte that is not part of valid UTF-8 becomes U+FFFD, and
// a dropped middle is marked "[forgebox: N bytes omitted]". When any byte
// was replaced, the exact kept bytes are returned in base64 as well.
func (c Captured) Text() (text, b64 string) {
	kept := append(append([]byte{}, c.Head...), c.Tail...)
	var b strings.Builder
	valid := writeValid(&b, c.Head)
	if c.Omitted > 0 {
		b.WriteString(OmissionMarker(c.Omitted))
	}
	if !writeValid(&b, c.Tail) {
		valid = false
	}
	if !valid {
		b64 = base64.StdEncoding.EncodeToString(kept)
	}
	return b.String(), b64
}

func writeValid(b *strings.Builder, p []byte) bool {
	if utf8.Valid(p) {
		b.Write(p)
		return true
	}
	for len(p) > 0 {
		r, n := utf8.DecodeRune(p)
		if r == utf8.RuneError && n <= 1 {
			b.WriteRune(utf8.RuneError)
			p = p[1:]
			continue
		}
		b.Write(p[:n])
		p = p[n:]
	}
	return false
}

package netproxy

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// toASCII converts a host name to lower-case ASCII, international labels to
// Punycode A-labels ("bücher" -> "xn--bcher-kva").
//
// golang.org/x/net/idna would do the full UTS #46 mapping, but it needs
// golang.org/x/text, which this module does not require; this is the subset
// that matters here: case folding, fullwidth forms and ideographic full
// stops, and RFC 3492 encoding. It does not apply Unicode normalization (NFC):
// a decomposed name becomes a different A-label than its composed form. That
// costs usability, not safety: the proxy resolves exactly the name it
// checked.
func toASCII(name string) (string, error) {
	if strings.ContainsRune(name, '\u0130') {
		// İ lower-cases to two runes (i and a combining dot), which a
		// per-rune mapping cannot express.
		return "", errors.New("İ (U+0130) cannot be mapped here: write the label in its ASCII (xn--) form")
	}
	name = strings.Map(func(r rune) rune {
		switch {
		case r == '\u3002' || r == '\uff0e' || r == '\uff61':
			return '.'
		case r >= '\uff01' && r <= '\uff5e': // fullwidth ASCII
			r -= 0xfee0
		}
		return unicode.ToLower(r)
	}, name)
	labels := strings.Split(name, ".")
	for i, l := range labels {
		if isASCII(l) {
			if err := checkALabel(l); err != nil {
				return "", err
			}
			continue
		}
		if !utf8.ValidString(l) {
			return "", errors.New("host name is not valid UTF-8")
		}
		if err := checkULabel(l); err != nil {
			return "", err
		}
		enc, err := punyEncode([]rune(l))
		if err != nil {
			return "", err
		}
		labels[i] = "xn--" + enc
	}
	return strings.Join(labels, "."), nil
}

// checkULabel refuses what no registry would register: symbols, spaces and
// punctuation, and a label starting with a combining mark.
func checkULabel(l string) error {
	if strings.HasPrefix(l, "xn--") {
		return fmt.Errorf("label %q mixes Punycode and Unicode", l)
	}
	for i, r := range l {
		if i == 0 && unicode.IsMark(r) {
			return fmt.Errorf("label %q starts with a combining mark", l)
		}
		if !(unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r) || r == '-' || r == '_') {
			return fmt.Errorf("character %q not allowed in a host name", r)
		}
		if unicode.ToLower(r) != r {
			return fmt.Errorf("label %q is not in lower case", l)
		}
	}
	return nil
}

// checkALabel verifies an "xn--" label is canonical Punycode of a valid
// international label, so one name has one spelling.
func checkALabel(l string) error {
	rest, ok := strings.CutPrefix(l, "xn--")
	if !ok {
		return nil
	}
	u, err := punyDecode(rest)
	if err != nil {
		return fmt.Errorf("label %q: %w", l, err)
	}
	if isASCII(string(u)) {
		return fmt.Errorf("label %q: Punycode of a plain ASCII label", l)
	}
	if err := checkULabel(string(u)); err != nil {
		return fmt.Errorf("label %q: %w", l, err)
	}
	if enc, err := punyEncode(u); err != nil || enc != rest {
		return fmt.Errorf("label %q: not canonical Punycode", l)
	}
	return nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// RFC 3492 parameters.
const (
	punyBase        = 36
	punyTMin        = 1
	punyTMax        = 26
	punySkew        = 38
	punyDamp        = 700
	punyInitialBias = 72
	punyInitialN    = 128
	punyMaxLen      = 63 // a DNS label; also bounds the work
)

func punyAdapt(delta, numPoints int, first bool) int {
	if first {
		delta /= punyDamp
	} else {
		delta /= 2
	}
	delta += delta / numPoints
	k := 0
	for delta > ((punyBase-punyTMin)*punyTMax)/2 {
		delta /= punyBase - punyTMin
		k += punyBase
	}
	return k + (punyBase-punyTMin+1)*delta/(delta+punySkew)
}

func punyDigit(d int) byte {
	if d < 26 {
		return byte('a' + d)
	}
	return byte('0' + d - 26)
}

func punyEncode(in []rune) (string, error) {
	if len(in) > punyMaxLen {
		return "", errors.New("label too long")
	}
	var out []byte
	for _, r := range in {
		if r < 0x80 {
			out = append(out, byte(r))
		}
	}
	b := len(out)
	h := b
	if b > 0 {
		out = append(out, '-')
	}
	n, delta, bias := punyInitialN, 0, punyInitialBias
	for h < len(in) {
		m := int(unicode.MaxRune) + 1
		for _, r := range in {
			if int(r) >= n && int(r) < m {
				m = int(r)
			}
		}
		delta += (m - n) * (h + 1)
		n = m
		for _, r := range in {
			if int(r) < n {
				delta++
			}
			if int(r) != n {
				continue
			}
			q := delta
			for k := punyBase; ; k += punyBase {
				t := k - bias
				t = min(max(t, punyTMin), punyTMax)
				if q < t {
					break
				}
				out = append(out, punyDigit(t+(q-t)%(punyBase-t)))
				q = (q - t) / (punyBase - t)
			}
			out = append(out, punyDigit(q))
			bias = punyAdapt(delta, h+1, h == b)
			delta = 0
			h++
		}
		delta++
		n++
	}
	if len(out) > punyMaxLen {
		return "", errors.New("label too long")
	}
	return string(out), nil
}

func punyDecode(s string) ([]rune, error) {
	if len(s) > punyMaxLen {
		return nil, errors.New("label too long")
	}
	var out []rune
	pos := 0
	if i := strings.LastIndexByte(s, '-'); i >= 0 {
		for _, c := range []byte(s[:i]) {
			if c >= 0x80 {
				return nil, errors.New("invalid Punycode")
			}
			out = append(out, rune(c))
		}
		pos = i + 1
	}
	n, bias, i := punyInitialN, punyInitialBias, 0
	for pos < len(s) {
		oldi, w := i, 1
		for k := punyBase; ; k += punyBase {
			if pos == len(s) {
				return nil, errors.New("invalid Punycode")
			}
			c := s[pos]
			pos++
			var d int
			switch {
			case 'a' <= c && c <= 'z':
				d = int(c - 'a')
			case 'A' <= c && c <= 'Z':
				d = int(c - 'A')
			case '0' <= c && c <= '9':
				d = int(c-'0') + 26
			default:
				return nil, errors.New("invalid Punycode")
			}
			if d > (1<<31-1-i)/w {
				return nil, errors.New("invalid Punycode (overflow)")
			}
			i += d * w
			t := min(max(k-bias, punyTMin), punyTMax)
			if d < t {
				break
			}
			if w > (1<<31-1)/(punyBase-t) {
				return nil, errors.New("invalid Punycode (overflow)")
			}
			w *= punyBase - t
		}
		x := len(out) + 1
		bias = punyAdapt(i-oldi, x, oldi == 0)
		if i/x > int(unicode.MaxRune)-n {
			return nil, errors.New("invalid Punycode (overflow)")
		}
		n += i / x
		i %= x
		if n > unicode.MaxRune || (n >= 0xd800 && n <= 0xdfff) {
			return nil, errors.New("invalid Punycode (not a character)")
		}
		out = append(out, 0)
		copy(out[i+1:], out[i:])
		out[i] = rune(n)
		i++
	}
	return out, nil
}

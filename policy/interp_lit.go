package policy

import (
	"strings"
)

// litKind says what an argument of a call is, as far as reading tells.
type litKind uint8

const (
	litOther  litKind = iota // a variable, an expression: computed at run time
	litString                // a string literal without interpolation
	litList                  // a list of string literals
)

// litArg is one argument of a call.
type litArg struct {
	kind litKind
	name string // the keyword of a keyword argument: mode in mode='w'
	s    string
	list []string
}

// callArgs reads the arguments of a call from code[i:]: just after the
// opening parenthesis, or after the name for a call without one (perl,
// ruby). It returns them and where they end.
func callArgs(code string, i int, lang string, paren bool) ([]litArg, int) {
	var out []litArg
	for len(out) < maxArgs {
		i = skipSpace(code, i, paren)
		if i >= len(code) || strings.IndexByte(");]}", code[i]) >= 0 || !paren && code[i] == '\n' {
			break
		}
		var a litArg
		if name, k := keyword(code, i, lang); name != "" {
			a.name, i = name, skipSpace(code, k, paren)
		}
		i = literal(code, i, lang, paren, &a)
		k := skipSpace(code, i, paren)
		// "rm -rf " + path is not the literal: what follows decides.
		if k < len(code) && strings.IndexByte(",);]}\n", code[k]) < 0 && !((lang == "perl" || lang == "ruby") && isWordByte(code[k])) {
			a = litArg{kind: litOther, name: a.name}
			k = skipExpr(code, k, paren)
		}
		out = append(out, a)
		i = k
		if i >= len(code) || code[i] != ',' {
			break
		}
		i++
	}
	return out, i
}

func skipSpace(code string, i int, paren bool) int {
	for i < len(code) {
		switch c := code[i]; {
		case c == ' ' || c == '\t' || c == '\r' || paren && c == '\n':
			i++
		case c == '\\' && i+1 < len(code) && code[i+1] == '\n':
			i += 2
		default:
			return i
		}
	}
	return i
}

// keyword reads name= at the start of a python or R argument.
func keyword(code string, i int, lang string) (string, int) {
	if lang != "python" && lang != "R" {
		return "", i
	}
	k := i
	for k < len(code) && isWordByte(code[k]) {
		k++
	}
	if k == i || code[i] >= '0' && code[i] <= '9' {
		return "", i
	}
	e := skipSpace(code, k, true)
	if e < len(code) && code[e] == '=' && (e+1 >= len(code) || code[e+1] != '=') {
		return code[i:k], e + 1
	}
	return "", i
}

// literal reads one argument into a: a string, a list of strings, or
// anything else, which it skips.
func literal(code string, i int, lang string, paren bool, a *litArg) int {
	if i >= len(code) {
		return i
	}
	switch c := code[i]; {
	case c == '[' || lang == "php" && strings.HasPrefix(code[i:], "array(") || lang == "R" && strings.HasPrefix(code[i:], "c("):
		open := strings.IndexByte(code[i:], c)
		if c != '[' {
			open = strings.IndexByte(code[i:], '(')
		}
		return list(code, i+open+1, lang, a)
	case (lang == "perl" && strings.HasPrefix(code[i:], "qw") || lang == "ruby" && (strings.HasPrefix(code[i:], "%w") || strings.HasPrefix(code[i:], "%W"))) &&
		i+2 < len(code) && !isWordByte(code[i+2]) && code[i+2] != ' ':
		body, end := delimited(code, i+2)
		a.kind, a.list = litList, strings.Fields(body)
		return end
	}
	if s, end, ok := stringLit(code, i, lang); end > i {
		if ok {
			a.kind, a.s = litString, s
		}
		return end
	}
	if home := homeExpr(code[i:]); home > 0 {
		a.kind, a.s = litString, "~"
		return i + home
	}
	return skipExpr(code, i, paren)
}

// homeExpr recognizes the python spellings of the home directory, which
// code passes to rmtree as often as a literal: os.path.expanduser('~'),
// Path.home(), os.environ['HOME'].
func homeExpr(s string) int {
	for _, p := range [...]string{`os.path.expanduser('~')`, `os.path.expanduser("~")`, `Path.home()`, `pathlib.Path.home()`,
		`os.environ['HOME']`, `os.environ["HOME"]`, `os.getenv('HOME')`, `os.getenv("HOME")`, `os.homedir()`, `require('os').homedir()`,
		`ENV['HOME']`, `ENV["HOME"]`, `Dir.home`, `$ENV{HOME}`, `$ENV{'HOME'}`} {
		if strings.HasPrefix(s, p) {
			return len(p)
		}
	}
	return 0
}

// list reads string literals up to the closing bracket.
func list(code string, i int, lang string, a *litArg) int {
	a.kind = litList
	for {
		i = skipSpace(code, i, true)
		if i >= len(code) {
			a.kind = litOther
			return i
		}
		if code[i] == ']' || code[i] == ')' {
			return i + 1
		}
		s, end, ok := stringLit(code, i, lang)
		if end == i || !ok {
			a.kind = litOther
			return skipExpr(code, i, true)
		}
		a.list = append(a.list, s)
		i = skipSpace(code, end, true)
		if i < len(code) && code[i] == ',' {
			i++
		}
	}
}

// stringLit reads a string literal at code[i:]. end is past it (i when
// there is none there); ok is false when it interpolates, so that its
// value is known only at run time.
func stringLit(code string, i int, lang string) (s string, end int, ok bool) {
	k := i
	raw, format := false, false
	if lang == "python" {
		for k < len(code) && k-i < 2 && strings.IndexByte("rRbBuUfF", code[k]) >= 0 {
			raw = raw || code[k] == 'r' || code[k] == 'R'
			format = format || code[k] == 'f' || code[k] == 'F'
			k++
		}
	}
	if lang == "perl" && (strings.HasPrefix(code[k:], "qq") || strings.HasPrefix(code[k:], "q")) || lang == "ruby" && (strings.HasPrefix(code[k:], "%q") || strings.HasPrefix(code[k:], "%Q")) {
		n := 1
		if strings.HasPrefix(code[k:], "qq") || code[k] == '%' {
			n = 2
		}
		if k+n < len(code) && !isWordByte(code[k+n]) && code[k+n] != ' ' && code[k+n] != '=' && code[k+n] != ',' {
			body, e := delimited(code, k+n)
			interp := code[k+n-1] == 'q' && n == 2 || code[k+n-1] == 'Q'
			return body, e, !interp || !strings.ContainsAny(body, "$@#")
		}
	}
	if k >= len(code) {
		return "", i, false
	}
	q := code[k]
	if q != '\'' && q != '"' && !(q == '`' && lang == "node") {
		return "", i, false
	}
	quote := code[k : k+1]
	if lang == "python" && strings.HasPrefix(code[k:], strings.Repeat(quote, 3)) {
		quote = code[k : k+3]
	}
	var b strings.Builder
	for k += len(quote); k < len(code); k++ {
		c := code[k]
		if strings.HasPrefix(code[k:], quote) {
			end = k + len(quote)
			break
		}
		if c == '\\' && !raw && k+1 < len(code) {
			k++
			switch e := code[k]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case '\\', '\'', '"', '`', '$':
				b.WriteByte(e)
			case '\n':
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
			}
			continue
		}
		b.WriteByte(c)
	}
	if end == 0 {
		return "", len(code), false
	}
	s = b.String()
	switch {
	case format && strings.Contains(strings.ReplaceAll(s, "{{", ""), "{"),
		q == '`' && strings.Contains(s, "${"),
		q == '"' && (lang == "perl" || lang == "php") && strings.ContainsAny(s, "$@"),
		q == '"' && lang == "ruby" && strings.Contains(s, "#{"):
		return s, end, false
	}
	return s, end, true
}

// delimited reads perl's and ruby's q{...}, qw(...), %x[...] bodies.
func delimited(code string, i int) (string, int) {
	i = skipSpace(code, i, true)
	if i >= len(code) {
		return "", i
	}
	open := code[i]
	closing := open
	switch open {
	case '(':
		closing = ')'
	case '[':
		closing = ']'
	case '{':
		closing = '}'
	case '<':
		closing = '>'
	}
	end := strings.IndexByte(code[i+1:], closing)
	if end < 0 {
		return code[i+1:], len(code)
	}
	return code[i+1 : i+1+end], i + 2 + end
}

// skipExpr skips an expression up to the comma, closing bracket or end of
// statement that ends it, minding nested brackets and strings.
func skipExpr(code string, i int, paren bool) int {
	depth := 0
	for i < len(code) {
		c := code[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			e := i + 1
			for e < len(code) && code[e] != c {
				if code[e] == '\\' {
					e++
				}
				e++
			}
			i = e + 1
			continue
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			if depth == 0 {
				return i
			}
			depth--
		case depth == 0 && (c == ',' || c == ';' || !paren && c == '\n'):
			return i
		}
		i++
	}
	return len(code)
}

// shellLiterals finds the commands perl, ruby and php run with backticks,
// qx{} and %x{}.
func shellLiterals(code, lang string) []litArg {
	var out []litArg
	add := func(body string) {
		a := litArg{kind: litString, s: body}
		if strings.Contains(body, "#{") || lang != "ruby" && strings.ContainsAny(body, "$@") {
			a.kind = litOther
		}
		out = append(out, a)
	}
	for i := 0; i < len(code) && len(out) < maxCalls; i++ {
		switch {
		case code[i] == '`':
			end := strings.IndexByte(code[i+1:], '`')
			if end < 0 {
				return out
			}
			add(code[i+1 : i+1+end])
			i += end + 1
		case lang == "perl" && strings.HasPrefix(code[i:], "qx") && (i == 0 || !isWordByte(code[i-1])) && i+2 < len(code) && !isWordByte(code[i+2]),
			lang == "ruby" && strings.HasPrefix(code[i:], "%x") && i+2 < len(code) && !isWordByte(code[i+2]):
			body, end := delimited(code, i+2)
			add(body)
			i = end - 1
		}
	}
	return out
}

package policy

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// maxBraceWords bounds what one word's brace expansion may produce; a
// larger expansion is judged as a dynamic word.
const maxBraceWords = 64

// maxBraces bounds the brace expressions of a word that are expanded; a
// word with more is judged as dynamic (splitting them costs more than
// linear time).
const maxBraces = 8

// words turns a word into the args the shell would pass: brace expansion
// first ({rm,-rf,/} is three words), then quote removal.
func (p *parse) words(w *syntax.Word) []Arg {
	n := braces(w)
	if n > maxBraces {
		return []Arg{{Value: p.source(w), IfEmpty: ""}}
	}
	if n > 0 && syntax.SplitBraces(w) {
		var out []Arg
		for bw, err := range expand.BracesSeq(nil, w) {
			if err != nil || len(out) == maxBraceWords {
				return []Arg{{Value: p.source(w), IfEmpty: ""}}
			}
			out = append(out, p.word(bw))
		}
		return out
	}
	return []Arg{p.word(w)}
}

// braces counts the opening braces in a word's unquoted literals.
func braces(w *syntax.Word) int {
	n := 0
	for _, part := range w.Parts {
		if l, ok := part.(*syntax.Lit); ok {
			n += strings.Count(l.Value, "{")
		}
	}
	return n
}

// word evaluates one word without expanding anything that needs the
// running shell: variables other than HOME and PWD, command substitutions,
// arithmetic and globs stay as written and make the word dynamic.
func (p *parse) word(w *syntax.Word) Arg {
	if len(w.Parts) == 1 {
		// The common case: one plain literal.
		if l, ok := w.Parts[0].(*syntax.Lit); ok && !strings.ContainsAny(l.Value, "~*?[\\") {
			return Arg{Value: l.Value, Static: true, IfEmpty: l.Value}
		}
	}
	var val, empty strings.Builder
	a := Arg{Static: true}
	for i, part := range w.Parts {
		switch x := part.(type) {
		case *syntax.Lit:
			v := x.Value
			if i == 0 && strings.HasPrefix(v, "~") {
				v = p.tilde(v)
			}
			if strings.ContainsAny(v, "*?[") {
				a.Glob = true
			}
			v = unescapeUnquoted(v)
			val.WriteString(v)
			empty.WriteString(v)
		case *syntax.SglQuoted:
			v := x.Value
			if x.Dollar {
				v = ansiC(v)
			}
			val.WriteString(v)
			empty.WriteString(v)
		case *syntax.DblQuoted:
			for _, dp := range x.Parts {
				if l, ok := dp.(*syntax.Lit); ok {
					v := unescapeDouble(l.Value)
					val.WriteString(v)
					empty.WriteString(v)
					continue
				}
				p.dynamicPart(dp, &a, &val, &empty)
			}
		case *syntax.BraceExp:
			// A brace expansion left after BracesSeq is one that was too
			// large; keep it as written.
			a.Static = false
			val.WriteString(p.source(x))
		default:
			p.dynamicPart(part, &a, &val, &empty)
		}
	}
	a.Value = val.String()
	a.IfEmpty = empty.String()
	if !a.Static {
		a.Value = p.source(w)
	}
	return a
}

// dynamicPart adds a part the shell computes at run time. $HOME and $PWD
// are known: a careful user expects rm -rf $HOME to be judged as rm -rf ~.
func (p *parse) dynamicPart(part syntax.WordPart, a *Arg, val, empty *strings.Builder) {
	if pe, ok := part.(*syntax.ParamExp); ok && pe.Param != nil && pe.Exp == nil && pe.Index == nil &&
		pe.Repl == nil && pe.Slice == nil && !pe.Length && !pe.Excl && !pe.Width {
		if v := p.known(pe.Param.Value); v != "" {
			val.WriteString(v)
			empty.WriteString(v)
			return
		}
	}
	if ext, ok := part.(*syntax.ExtGlob); ok {
		a.Glob = true
		val.WriteString(p.source(ext))
		empty.WriteString(p.source(ext))
		return
	}
	a.Static = false
	val.WriteString(p.source(part))
	var stmts []*syntax.Stmt
	switch x := part.(type) {
	case *syntax.CmdSubst:
		stmts = x.Stmts
	case *syntax.ProcSubst:
		stmts = x.Stmts
	}
	for _, st := range stmts {
		syntax.Walk(st, func(n syntax.Node) bool {
			if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 {
				if name := c.Args[0].Lit(); name != "" {
					a.Runs = append(a.Runs, name[strings.LastIndexByte(name, '/')+1:])
				}
			}
			return true
		})
	}
}

func (p *parse) known(name string) string {
	switch name {
	case "HOME":
		return p.ctx.Home
	case "PWD":
		return p.ctx.Cwd
	}
	return ""
}

// tilde expands ~ and ~/ at the start of an unquoted word; ~user is left
// as written (it names another user's home, outside the workspace).
func (p *parse) tilde(v string) string {
	if p.ctx.Home == "" {
		return v
	}
	if v == "~" {
		return p.ctx.Home
	}
	if strings.HasPrefix(v, "~/") {
		return p.ctx.Home + v[1:]
	}
	return v
}

// unescapeUnquoted removes the backslashes of an unquoted literal: \x is
// x, and a backslash-newline disappears.
func unescapeUnquoted(s string) string { return unescape(s, "") }

// unescapeDouble removes the backslashes that are special inside double
// quotes: before $ ` " \ and newline.
func unescapeDouble(s string) string { return unescape(s, "$`\"\\\n") }

// unescape drops each backslash before one of special (any byte when
// special is empty), and a backslash-newline altogether.
func unescape(s, special string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (special == "" || strings.IndexByte(special, s[i+1]) >= 0) {
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ansiC decodes the escapes of a $'...' string, as bash does.
func ansiC(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case 'c':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i] & 0x1f)
			}
		case 'x', 'u', 'U':
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			j := i + 1
			for j < len(s) && j-i-1 < max && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			n, _ := strconv.ParseUint(s[i+1:j], 16, 32)
			if e == 'x' {
				b.WriteByte(byte(n))
			} else if utf8.ValidRune(rune(n)) {
				b.WriteRune(rune(n))
			}
			i = j - 1
		default:
			if e >= '0' && e <= '7' {
				j := i
				for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
					j++
				}
				n, _ := strconv.ParseUint(s[i:j], 8, 16)
				b.WriteByte(byte(n))
				i = j - 1
				continue
			}
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

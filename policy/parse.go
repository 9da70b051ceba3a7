package policy

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// parse turns one shell line into the simple commands it would run.
type parse struct {
	ctx   *Context
	src   string
	depth int

	stmt   map[*syntax.CallExpr]*syntax.Stmt
	from   map[*syntax.CallExpr]*syntax.CallExpr
	calls  []*syntax.CallExpr
	loose  []*syntax.Stmt // compound commands with redirections
	funcs  map[string]bool
	bombs  []string // functions that call themselves in a pipe or background
	pipes  []string // the text of each pipeline, for rules that span one
	decls  []*syntax.DeclClause
	inPipe map[*syntax.BinaryCmd]bool
	cmdFor map[*syntax.CallExpr]*Command
}

func newParse(ctx *Context, src string, depth int) *parse {
	return &parse{
		ctx: ctx, src: src, depth: depth,
		stmt:   map[*syntax.CallExpr]*syntax.Stmt{},
		from:   map[*syntax.CallExpr]*syntax.CallExpr{},
		funcs:  map[string]bool{},
		inPipe: map[*syntax.BinaryCmd]bool{},
		cmdFor: map[*syntax.CallExpr]*Command{},
	}
}

// source returns the text of n as written.
func (p *parse) source(n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(p.src) || start > end {
		return ""
	}
	return p.src[start:end]
}

// walk visits the whole tree, substitutions and function bodies included:
// a command inside $(...) or a function runs as surely as one at the top.
func (p *parse) walk(f *syntax.File) []*Command {
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.Stmt:
			if c, ok := x.Cmd.(*syntax.CallExpr); ok {
				p.stmt[c] = x
			} else if len(x.Redirs) > 0 {
				p.loose = append(p.loose, x)
			}
		case *syntax.BinaryCmd:
			if x.Op == syntax.Pipe || x.Op == syntax.PipeAll {
				if prod, cons := lastCall(x.X), firstCall(x.Y); prod != nil && cons != nil {
					p.from[cons] = prod
				}
				// a | b | c nests (a | b) | c: keep the whole pipeline only.
				if !p.inPipe[x] {
					p.pipes = append(p.pipes, p.source(x))
				}
				for _, s := range []*syntax.Stmt{x.X, x.Y} {
					if b, ok := s.Cmd.(*syntax.BinaryCmd); ok {
						p.inPipe[b] = true
					}
				}
			}
		case *syntax.FuncDecl:
			if x.Name != nil {
				p.funcs[x.Name.Value] = true
				if callsItselfConcurrently(x) {
					p.bombs = append(p.bombs, x.Name.Value)
				}
			}
		case *syntax.CallExpr:
			p.calls = append(p.calls, x)
		case *syntax.DeclClause:
			p.decls = append(p.decls, x)
		}
		return true
	})
	out := make([]*Command, 0, len(p.calls)+len(p.loose))
	for _, call := range p.calls {
		c := p.command(call)
		p.cmdFor[call] = c
		out = append(out, c)
	}
	for _, call := range p.calls {
		if prod, ok := p.from[call]; ok {
			p.cmdFor[call].Stdin.From = p.cmdFor[prod]
		}
	}
	for _, st := range p.loose {
		c := &Command{Source: p.source(st), Depth: p.depth, Background: st.Background}
		c.Redirs, c.Stdin = p.redirs(st.Redirs)
		out = append(out, c)
	}
	for _, d := range p.decls {
		out = append(out, p.decl(d))
	}
	return out
}

// command builds the Command of one call.
func (p *parse) command(call *syntax.CallExpr) *Command {
	c := &Command{Depth: p.depth}
	for _, as := range call.Assigns {
		c.Assigns = append(c.Assigns, p.source(as))
	}
	c.Args = make([]Arg, 0, len(call.Args))
	for _, w := range call.Args {
		c.Args = append(c.Args, p.words(w)...)
	}
	src := call
	c.Source = p.source(src)
	if st, ok := p.stmt[call]; ok {
		c.Background = st.Background
		c.Redirs, c.Stdin = p.redirs(st.Redirs)
		if len(st.Redirs) > 0 {
			end := int(st.Redirs[len(st.Redirs)-1].End().Offset())
			if start := int(call.Pos().Offset()); end > start && end <= len(p.src) {
				c.Source = p.src[start:end]
			}
		}
	}
	if len(c.Args) > 0 {
		c.Name = programName(c.Args[0])
		c.Function = p.funcs[c.Args[0].Value]
	}
	return c
}

// decl turns declare/export/local/readonly into a command: the builtin
// itself only sets variables (substitutions in the values are visited by
// the walk like any other).
func (p *parse) decl(d *syntax.DeclClause) *Command {
	c := &Command{Source: p.source(d), Depth: p.depth}
	c.Args = append(c.Args, staticArg(d.Variant.Value))
	for _, as := range d.Args {
		if as.Name != nil {
			c.Assigns = append(c.Assigns, p.source(as))
			continue
		}
		if as.Value != nil {
			c.Args = append(c.Args, p.words(as.Value)...)
		}
	}
	c.Name = d.Variant.Value
	return c
}

func (p *parse) redirs(rs []*syntax.Redirect) ([]Redir, Stdin) {
	var out []Redir
	var in Stdin
	for _, r := range rs {
		rd := Redir{Op: r.Op.String()}
		if r.N != nil {
			rd.Fd = r.N.Value
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			in = Stdin{HasDoc: true}
			if r.Hdoc != nil {
				in.Doc, in.DocStatic = p.heredoc(r.Hdoc)
			} else {
				in.DocStatic = true
			}
			continue
		case syntax.WordHdoc:
			a := p.word(r.Word)
			in = Stdin{HasDoc: true, Doc: a.Value + "\n", DocStatic: a.Static}
			continue
		}
		if r.Word != nil {
			rd.Target = p.word(r.Word)
		}
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.ClbOut, syntax.RdrInOut:
			rd.Write = true
		case syntax.DplOut:
			// >&2 duplicates a descriptor; >&file (a word that is not a
			// number or -) writes a file, as &> does.
			rd.Write = !isFd(rd.Target.Value)
		}
		out = append(out, rd)
	}
	return out, in
}

func isFd(s string) bool {
	if s == "-" {
		return true
	}
	s = strings.TrimSuffix(s, "-")
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// heredoc returns the body of a here-document and whether it is static.
func (p *parse) heredoc(w *syntax.Word) (string, bool) {
	var b strings.Builder
	static := true
	for _, part := range w.Parts {
		if l, ok := part.(*syntax.Lit); ok {
			b.WriteString(l.Value)
			continue
		}
		static = false
		b.WriteString(p.source(part))
	}
	return b.String(), static
}

// programName is the name the built-in knowledge knows a program by.
func programName(a Arg) string {
	v := a.Value
	if i := strings.LastIndexByte(v, '/'); i >= 0 && a.Static {
		v = v[i+1:]
	}
	return v
}

// firstCall is the command that reads the stdin of stmt; lastCall the one
// that writes its stdout.
func firstCall(s *syntax.Stmt) *syntax.CallExpr {
	switch x := s.Cmd.(type) {
	case *syntax.CallExpr:
		return x
	case *syntax.BinaryCmd:
		return firstCall(x.X)
	case *syntax.Block:
		if len(x.Stmts) > 0 {
			return firstCall(x.Stmts[0])
		}
	case *syntax.Subshell:
		if len(x.Stmts) > 0 {
			return firstCall(x.Stmts[0])
		}
	case *syntax.TimeClause:
		if x.Stmt != nil {
			return firstCall(x.Stmt)
		}
	}
	return nil
}

func lastCall(s *syntax.Stmt) *syntax.CallExpr {
	switch x := s.Cmd.(type) {
	case *syntax.CallExpr:
		return x
	case *syntax.BinaryCmd:
		return lastCall(x.Y)
	case *syntax.Block:
		if len(x.Stmts) > 0 {
			return lastCall(x.Stmts[len(x.Stmts)-1])
		}
	case *syntax.Subshell:
		if len(x.Stmts) > 0 {
			return lastCall(x.Stmts[len(x.Stmts)-1])
		}
	case *syntax.TimeClause:
		if x.Stmt != nil {
			return lastCall(x.Stmt)
		}
	}
	return nil
}

// callsItselfConcurrently reports whether a function calls itself in a
// pipeline or in the background: the shape of a fork bomb (:(){ :|:& };:).
func callsItselfConcurrently(fn *syntax.FuncDecl) bool {
	name := fn.Name.Value
	calls := func(s *syntax.Stmt) bool {
		c, ok := s.Cmd.(*syntax.CallExpr)
		return ok && len(c.Args) > 0 && c.Args[0].Lit() == name
	}
	found := false
	syntax.Walk(fn.Body, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.Stmt:
			if x.Background && calls(x) {
				found = true
			}
		case *syntax.BinaryCmd:
			if (x.Op == syntax.Pipe || x.Op == syntax.PipeAll) && (calls(x.X) || calls(x.Y)) {
				found = true
			}
		}
		return !found
	})
	return found
}

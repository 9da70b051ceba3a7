package policy

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// Limits past which a line is not judged but asked about.
const (
	MaxLineBytes = 64 << 10
	MaxDepth     = 8
	MaxCommands  = 1024
	// MaxNesting bounds brackets inside brackets: the parser's time grows
	// faster than the input past a few hundred levels, and no command an
	// agent writes nests so deep.
	MaxNesting = 64
	// MaxWords bounds the words of one line: judging is linear, but 60 KB
	// of one-letter words would still take tens of milliseconds.
	MaxWords = 4096
	// maxWork bounds the bytes parsed for one line, nested code included.
	maxWork = 2 * MaxLineBytes
)

// Engine judges command lines under one policy. It is safe for concurrent
// use.
type Engine struct {
	pol     *Policy
	parsers sync.Pool
	// spanning is true when rules match whole lines and pipelines: only
	// then are their texts collected.
	spanning bool
}

// New returns an engine for p (Default() when nil).
func New(p *Policy) *Engine {
	if p == nil {
		p = Default()
	}
	// Compile every pattern now: the engine is shared between goroutines
	// and must not write to its rules while judging. A rule that does not
	// compile never matches (ParseConfig refuses such rules).
	for _, list := range [][]Rule{p.Allow, p.Ask, p.Deny, p.Tighter} {
		for i := range list {
			if list[i].m == nil {
				_ = list[i].compile()
			}
		}
	}
	e := &Engine{pol: p}
	e.spanning = len(spanRules(p.Deny))+len(spanRules(p.Ask))+len(spanRules(p.Tighter)) > 0
	e.parsers.New = func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }
	return e
}

// Policy returns the policy the engine applies.
func (e *Engine) Policy() *Policy { return e.pol }

// state is the judging of one line.
type state struct {
	e      *Engine
	ctx    *Context
	work   int
	count  int
	capped bool
	shaped bool // some code of the line is not plainSyntax
	out    []Judgement
	spans  []string // whole lines and pipelines, for rules with operators
}

// DecideLine judges a shell command line (forgebox run -c).
func (e *Engine) DecideLine(ctx *Context, line string) *Decision {
	st := e.newState(ctx)
	switch {
	case len(line) > MaxLineBytes:
		st.unjudgeable(fmt.Sprintf("(%d bytes)", len(line)), 0, fmt.Sprintf("the line is longer than %d bytes", MaxLineBytes))
	case strings.IndexByte(line, 0) >= 0:
		st.unjudgeable(line, 0, "the line holds a NUL byte, which no shell passes on")
	default:
		if !utf8.ValidString(line) {
			st.unjudgeable(line, 0, "the line is not valid UTF-8")
		}
		st.line(line, 0, "")
	}
	d := st.decision()
	d.Command = line
	if len(line) > MaxLineBytes {
		d.Command = strings.ToValidUTF8(line[:256], "") + "..."
	}
	if e.pol.Mode == Allowlist {
		d.deny(&RuleRef{Kind: "mode", Source: "policy", Reason: "allowlist mode runs listed programs in exec form only; a shell command line is not allowed"})
	}
	return d
}

// DecideArgv judges a program and its arguments (forgebox run -- ARGV):
// no shell parses them, but wrappers and nested code are looked through
// as on a line.
func (e *Engine) DecideArgv(ctx *Context, argv []string) *Decision {
	st := e.newState(ctx)
	total := 0
	for _, a := range argv {
		total += len(a)
	}
	switch {
	case len(argv) == 0:
		// No judgement: the decision says there is no command (Empty).
	case total > MaxLineBytes:
		st.unjudgeable(fmt.Sprintf("(%d bytes)", total), 0, fmt.Sprintf("the arguments are longer than %d bytes", MaxLineBytes))
	default:
		args := staticArgs(argv...)
		c := &Command{Args: args, Name: programName(args[0]), Source: quoteArgv(argv)}
		st.spans = append(st.spans, c.Source)
		st.command(c, "")
	}
	d := st.decision()
	d.Argv = argv
	if e.pol.Mode == Allowlist {
		for _, j := range d.Commands {
			if j.Action != Deny && !j.listed {
				d.deny(&RuleRef{Kind: "mode", Source: "policy", Reason: fmt.Sprintf("allowlist mode: %q is not on the allow list", j.Command)})
				break
			}
		}
	}
	return d
}

func (e *Engine) newState(ctx *Context) *state {
	if ctx == nil {
		ctx = &Context{}
	}
	return &state{e: e, ctx: ctx}
}

// line judges shell code at a nesting depth.
func (st *state) line(src string, depth int, how string) {
	if depth > MaxDepth {
		st.unjudgeable(src, depth, fmt.Sprintf("the code is nested more than %d levels deep", MaxDepth))
		return
	}
	st.work += len(src)
	if st.work > maxWork {
		st.unjudgeable(src, depth, "there is too much nested code to judge")
		return
	}
	if reason := prescan(src); reason != "" {
		st.unjudgeable(src, depth, reason)
		return
	}
	p := st.e.parsers.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(src), "")
	st.e.parsers.Put(p)
	if err != nil {
		st.unjudgeable(src, depth, "forgebox cannot parse it: "+err.Error())
		return
	}
	ps := newParse(st.ctx, src, depth)
	cmds := ps.walk(f)
	if st.e.spanning {
		if depth == 0 {
			st.spans = append(st.spans, normalize(src))
		}
		for _, pipe := range ps.pipes {
			st.spans = append(st.spans, normalize(pipe))
		}
	}
	for _, name := range ps.bombs {
		j := &judge{st: st, ctx: st.ctx, cmd: &Command{Source: name + "()", Depth: depth}}
		j.add(Forbidden, 10, "a fork bomb: function %s calls itself in a pipe or in the background", name)
		st.out = append(st.out, st.rule(j, nil))
	}
	// A cd moves the commands after it: cd ~ && rm -rf x removes ~/x.
	// The judge follows cd through the line in order (a cd inside a
	// subshell is followed too, which can only make it stricter or lose
	// the directory); the caller's directory is back after the line.
	outer := st.ctx
	defer func() { st.ctx = outer }()
	for _, c := range cmds {
		inner := st.command(c, how)
		if inner != nil && changesDir(c, inner) {
			st.ctx = st.ctx.chdir(inner)
		}
		if inner != nil && inner.Name == "popd" && onlyBuiltins(c) {
			next := *st.ctx
			next.lost = true
			st.ctx = &next
		}
	}
	// Only a line whose commands are all cache-free needs its shape
	// looked at (Decision.CacheFree).
	if !st.shaped && !slices.ContainsFunc(st.out, func(j Judgement) bool { return !j.cacheFree }) {
		st.shaped = !plainSyntax(f)
	}
}

// changesDir reports whether a command moves the shell: cd and pushd, also
// as builtin cd and command cd. sudo cd or env cd run a program in a
// child, which moves nothing.
func changesDir(c, inner *Command) bool {
	return (inner.Name == "cd" || inner.Name == "pushd") && onlyBuiltins(c)
}

func onlyBuiltins(c *Command) bool {
	for _, w := range c.Wrappers {
		if w != "builtin" && w != "command" {
			return false
		}
	}
	return true
}

// prescan refuses, before parsing, code whose parse would take long: deep
// nesting, or far more commands than MaxCommands. It reads bytes without
// regard to quoting, so it may refuse a quoted string that only looks deep:
// that costs an "ask", never an "allow".
func prescan(src string) string {
	depth, deepest, seps := 0, 0, 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '(', '{', '[', '`':
			depth++
			deepest = max(deepest, depth)
		case ')', '}', ']':
			depth = max(depth-1, 0)
		case ';', '|', '&', '\n':
			seps++
		}
	}
	switch {
	case deepest > MaxNesting:
		return fmt.Sprintf("brackets nest more than %d levels deep", MaxNesting)
	case seps > 4*MaxCommands:
		return fmt.Sprintf("the code has more than %d command separators", 4*MaxCommands)
	case len(src) > 16<<10 && strings.Count(src, " ") > MaxWords:
		return fmt.Sprintf("the code has more than %d words", MaxWords)
	}
	return ""
}

// unjudgeable records code forgebox cannot judge: it is asked about, every
// time, whatever the rules say (a rule cannot match what was not read).
func (st *state) unjudgeable(src string, depth int, reason string) {
	if len(src) > 200 {
		src = strings.ToValidUTF8(src[:200], "") + "..."
	}
	t := st.e.pol.Thresholds
	risk := t.SessionApprove + 1
	j := Judgement{Command: src, Action: Ask, Risk: risk, Level: t.level(risk), Category: Caution, Depth: depth,
		Reasons: []string{reason}, Rule: &RuleRef{Kind: "unjudgeable", Source: "builtin", Reason: reason}}
	if risk >= t.Block {
		j.Action, j.Level = Deny, R4
	}
	st.out = append(st.out, j)
}

// command judges one simple command and, through the knowledge, what it
// runs in turn. It returns the command found behind the wrappers, if any.
func (st *state) command(c *Command, how string) *Command {
	st.count++
	if st.count > MaxCommands {
		if !st.capped {
			st.capped = true
			st.unjudgeable(c.Source, c.Depth, fmt.Sprintf("the line runs more than %d commands", MaxCommands))
		}
		return nil
	}
	at := len(st.out)
	st.out = append(st.out, Judgement{})
	j := &judge{st: st, ctx: st.ctx, cmd: c}
	inner := unwrap(j, c)
	// A wrapper may have moved the command (env -C, sudo -D); the shell
	// opens the redirections where it stands.
	moved := j.ctx
	j.ctx = st.ctx
	for _, r := range c.Redirs {
		// The shell opens redirections before any wrapper runs: only a rule
		// that names them (one matching the full text) covers them.
		j.layer = -1
		if r.Write {
			j.write(r.Target, "the redirection "+r.Op)
		}
	}
	j.ctx = moved
	j.layer = len(c.Wrappers)
	j.assigns(c)
	switch {
	case inner == nil || len(inner.Args) == 0:
		if len(j.findings) == 0 {
			j.add(ReadOnly, 0, "sets variables or redirections only")
		}
	default:
		j.cmd = inner
		// A function defined on the line but named like a known program
		// is judged as the program: the call may come before the
		// definition (rm -rf /; rm() { :; }).
		if k := knowledge(inner.Name); k != nil && printsUsage(inner) {
			j.add(ReadOnly, 0, "%s prints its usage or version", strings.Join(argValues(inner.Args), " "))
		} else if k != nil {
			k(j, inner)
		} else {
			j.unknown(inner)
		}
		j.cmd = c
	}
	if how != "" && c.Depth > 0 {
		for i := range j.findings {
			if !strings.Contains(j.findings[i].Reason, how) {
				j.findings[i].Reason += " (run by " + how + ")"
			}
		}
	}
	st.out[at] = st.rule(j, inner)
	st.out[at].cacheFree = j.cacheFreeCommand(c, inner)
	return inner
}

// unknown judges a program the knowledge does not cover.
func (j *judge) unknown(c *Command) {
	switch {
	case c.Function:
		j.add(ReadOnly, 0, "calls the function %s defined on this line (its body is judged on its own)", c.Name)
	case !c.Args[0].Static:
		j.add(Caution, 5, "the program name %s is computed at run time", c.Args[0].Value)
	case c.Args[0].Glob:
		j.add(Caution, 5, "the program name %s is a pattern the shell expands", c.Args[0].Value)
	case strings.Contains(c.Args[0].Value, "/"):
		switch p := j.place(c.Args[0]); p {
		case PlaceWorkspace:
			j.projectCode("runs %s from the workspace", c.Args[0].Value)
		case PlaceSystem, PlaceSystemRoot:
			j.reach(Caution, 3, "forgebox does not know what %s does", c.Name)
			j.embedded(c)
		default:
			j.reach(Caution, 4, "runs %s from the %s", c.Args[0].Value, p)
			j.embedded(c)
		}
	default:
		j.reach(Caution, 3, "forgebox does not know what %s does", c.Name)
		j.embedded(c)
	}
}

// embedded judges the worse reading of a program forgebox does not know:
// that it runs its arguments as a command, as wrappers do (firejail,
// proxychains, a task runner), from the first argument that names a
// program forgebox knows. The reading only adds judgements: a sandbox
// that contains the unknown program does not contain the rm -rf it may
// hand its arguments to, which destroys the workspace all the same.
func (j *judge) embedded(c *Command) {
	for i := 1; i < len(c.Args); i++ {
		a := c.Args[i]
		if !a.Static || strings.HasPrefix(a.Value, "-") || strings.ContainsAny(a.Value, "=/ ") {
			continue
		}
		if knowledge(a.Value) != nil {
			j.argv(c.Args[i:], c.Name+", if it runs its arguments")
			return
		}
	}
}

// quoteArgv renders an argv as a shell would read it back.
func quoteArgv(argv []string) string {
	var b strings.Builder
	for i, a := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		q, err := syntax.Quote(a, syntax.LangBash)
		if err != nil {
			q = fmt.Sprintf("%q", a)
		}
		b.WriteString(q)
	}
	return b.String()
}

// subcommandPrograms take a subcommand first; PROGRAM SUB --help prints
// the subcommand's usage.
var subcommandPrograms = map[string]bool{
	"git": true, "npm": true, "pnpm": true, "yarn": true, "cargo": true, "go": true, "docker": true, "kubectl": true,
	"helm": true, "terraform": true, "tofu": true, "gh": true, "pip": true, "pip3": true, "uv": true, "apt": true,
	"apt-get": true, "systemctl": true, "brew": true, "aws": true, "gcloud": true, "az": true, "rustup": true,
}

// printsUsage reports whether a known program is asked only for its usage
// or version: PROGRAM --help, PROGRAM --version, or PROGRAM SUB --help for
// programs with subcommands, and nothing else on the command.
func printsUsage(c *Command) bool {
	a := c.Args
	for _, x := range a {
		if !x.Static {
			return false
		}
	}
	switch {
	case len(a) == 2:
		return a[1].Value == "--help" || a[1].Value == "--version"
	case len(a) == 3 && subcommandPrograms[c.Name]:
		sub := a[1].Value
		return a[2].Value == "--help" && sub != "" && !strings.HasPrefix(sub, "-") && !strings.ContainsAny(sub, "/=")
	}
	return false
}

func argValues(args []Arg) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a.Value
	}
	return out
}

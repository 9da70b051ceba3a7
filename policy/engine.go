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
		st.unjudgeable("", 0, "there is no command")
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
	for _, c := range cmds {
		st.command(c, how)
	}
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
// runs in turn.
func (st *state) command(c *Command, how string) {
	st.count++
	if st.count > MaxCommands {
		if !st.capped {
			st.capped = true
			st.unjudgeable(c.Source, c.Depth, fmt.Sprintf("the line runs more than %d commands", MaxCommands))
		}
		return
	}
	at := len(st.out)
	st.out = append(st.out, Judgement{})
	j := &judge{st: st, ctx: st.ctx, cmd: c}
	inner := unwrap(j, c)
	for _, r := range c.Redirs {
		// The shell opens redirections before any wrapper runs: only a rule
		// that names them (one matching the full text) covers them.
		j.layer = -1
		if r.Write {
			j.write(r.Target, "the redirection "+r.Op)
		}
	}
	j.layer = len(c.Wrappers)
	j.assigns(c)
	switch {
	case inner == nil || len(inner.Args) == 0:
		if len(j.findings) == 0 {
			j.add(ReadOnly, 0, "sets variables or redirections only")
		}
	default:
		j.cmd = inner
		if k := knowledge(inner.Name); k != nil && !(inner.Function && !known(inner.Name)) {
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
}

// known reports whether the knowledge has an entry for a program.
func known(name string) bool { return knowledge(name) != nil }

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
			j.add(SafeWrite, 2, "runs %s from the workspace", c.Args[0].Value)
		case PlaceSystem, PlaceSystemRoot:
			j.add(Caution, 3, "forgebox does not know what %s does", c.Name)
		default:
			j.add(Caution, 4, "runs %s from the %s", c.Args[0].Value, p)
		}
	default:
		j.add(Caution, 3, "forgebox does not know what %s does", c.Name)
	}
}

// rule turns a judge's findings into a judgement: built-in forbidden
// first, then deny, ask and allow rules, then the thresholds, then the
// session's approvals and the workspace's tightening.
func (st *state) rule(j *judge, inner *Command) Judgement {
	pol, t := st.e.pol, st.e.pol.Thresholds
	c := j.cmd
	out := Judgement{Command: strings.TrimSpace(c.Source), Depth: c.Depth}
	if inner != nil {
		out.Program = inner.Name
	}
	worst := layered{Finding: Finding{Category: ReadOnly}}
	for _, f := range j.findings {
		if f.Risk > worst.Risk || f.Risk == worst.Risk && f.Category > worst.Category && f.Category != Interactive {
			worst = f
		}
		if f.Category == Interactive && worst.Category != Interactive && f.Risk >= worst.Risk {
			worst = f
		}
	}
	for _, f := range j.findings {
		out.Reasons = append(out.Reasons, f.Reason)
	}
	if out.Reasons == nil {
		out.Reasons = []string{}
	}
	out.Risk, out.Category = worst.Risk, worst.Category
	for _, f := range j.findings {
		out.Interactive = out.Interactive || f.Category == Interactive
	}
	forms := c.Forms
	if len(forms) == 0 && c.Source != "" {
		forms = []string{normalize(c.Source)}
	}
	// full is the command with its redirections: what an approval records
	// and what a rule must match to cover the redirections too.
	full := c.full(forms)
	approve := full
	all := append([]string{full}, forms...)
	set := func(a Action, r *RuleRef) { out.Action, out.Rule = a, r }

	for _, f := range j.findings {
		if f.Category == Forbidden {
			out.Category = Forbidden
			out.Risk = max(out.Risk, f.Risk)
			set(Deny, &RuleRef{Kind: "builtin", Source: "builtin", Reason: f.Reason})
			return st.finish(out, nil, all)
		}
	}
	if r := firstMatch(pol.Deny, all, true); r != nil {
		out.Risk = max(out.Risk, ruleRisk(r, t.Block))
		set(Deny, ref("deny", r))
		return st.finish(out, nil, all)
	}
	if r := firstMatch(pol.Ask, all, true); r != nil {
		out.Risk = ruleRisk(r, max(out.Risk, t.AutoApprove+1))
		set(Ask, ref("ask", r))
		scopes := []Scope{Once}
		if out.Risk <= t.SessionApprove {
			scopes = append(scopes, Session)
		}
		return st.finish(out, st.session(&out, scopes, approve, all), all)
	}
	// An allow rule matching form i covers the findings of the command
	// from that unwrapping step in; wrappers outside it are still judged.
	for i, form := range all {
		r := firstMatch(pol.Allow, []string{form}, false)
		if r == nil || i == 0 && r.Command == "" {
			// Only a rule naming one exact command covers its redirections:
			// "frob *" must not allow frob > ~/.bashrc.
			continue
		}
		out.listed = true
		rest := 0
		for _, f := range j.findings {
			if f.layer < i-1 {
				rest = max(rest, f.Risk)
			}
		}
		if rest > t.AutoApprove {
			break
		}
		set(Allow, ref("allow", r))
		if r.Scope == Session {
			set(Ask, ref("allow", r))
			return st.finish(out, st.session(&out, []Scope{Once, Session}, r.Text(), all), all)
		}
		return st.finish(out, nil, all)
	}
	var scopes []Scope
	switch {
	case out.Risk <= t.AutoApprove:
		set(Allow, nil)
	case out.Risk <= t.SessionApprove:
		set(Ask, &RuleRef{Kind: "threshold", Source: "default", Reason: fmt.Sprintf("risk %d is above autoApprove %d", out.Risk, t.AutoApprove)})
		scopes = []Scope{Once, Session, Always}
	case out.Risk < t.Block:
		set(Ask, &RuleRef{Kind: "threshold", Source: "default", Reason: fmt.Sprintf("risk %d is above sessionApprove %d: asked every time", out.Risk, t.SessionApprove)})
		scopes = []Scope{Once}
	default:
		set(Deny, &RuleRef{Kind: "threshold", Source: "default", Reason: fmt.Sprintf("risk %d reaches block %d", out.Risk, t.Block)})
	}
	return st.finish(out, st.session(&out, scopes, approve, all), all)
}

// session applies the session's approvals to an ask; it returns the scopes
// the ask offers.
func (st *state) session(out *Judgement, scopes []Scope, approve string, forms []string) []Scope {
	if out.Action != Ask {
		return nil
	}
	out.Approve = approve
	if slices.Contains(scopes, Session) && out.Risk <= st.e.pol.Thresholds.SessionApprove {
		for _, r := range st.ctx.Session {
			if r.m == nil && r.compile() != nil { // r is a copy: compiling it writes nothing shared
				continue
			}
			if r.Text() == approve || firstMatch([]Rule{r}, forms, false) != nil {
				out.Action, out.Rule = Allow, &RuleRef{Kind: "allow", Source: "session", Pattern: r.Text()}
				return nil
			}
		}
	}
	return scopes
}

// finish applies the tightening rules of a workspace configuration and
// sets the level.
func (st *state) finish(out Judgement, scopes []Scope, forms []string) Judgement {
	t := st.e.pol.Thresholds
	if out.Action == Allow {
		if r := firstMatch(st.e.pol.Tighter, forms, true); r != nil {
			out.Risk = max(out.Risk, t.AutoApprove+1, ruleRisk(r, 0))
			out.Action, out.Rule = Ask, ref("ask", r)
			if out.Approve == "" {
				out.Approve = forms[0]
			}
		}
	}
	out.Level = t.level(out.Risk)
	if out.Action == Deny {
		out.Level = R4
	}
	out.texts = forms
	return out
}

func ruleRisk(r *Rule, def int) int {
	if r.Risk != nil {
		return clampRisk(*r.Risk)
	}
	return def
}

func ref(kind string, r *Rule) *RuleRef {
	return &RuleRef{Kind: kind, Source: r.Source, Pattern: r.Text(), Reason: r.Reason}
}

// firstMatch returns the first rule matching one of the texts. Rules that
// span operators (curl * | sh) are matched against lines instead, by the
// caller; spanning reports whether they may match a single command too.
func firstMatch(rules []Rule, texts []string, spanning bool) *Rule {
	for i := range rules {
		r := &rules[i]
		if r.m == nil || r.m.spans {
			continue
		}
		for _, t := range texts {
			if r.matches(t) {
				return r
			}
		}
	}
	return nil
}

// decision combines the judgements: the strictest wins.
func (st *state) decision() *Decision {
	d := &Decision{Commands: st.out, Reasons: []string{}}
	if d.Commands == nil {
		d.Commands = []Judgement{}
	}
	// Rules with operators match the line and its pipelines.
	pol := st.e.pol
	for _, r := range spanRules(pol.Deny) {
		if matchAny(r, st.spans) {
			d.Commands = append(d.Commands, Judgement{Command: r.Text(), Action: Deny, Risk: ruleRisk(r, pol.Thresholds.Block),
				Level: R4, Category: Dangerous, Reasons: []string{nonEmpty(r.Reason, "matches a deny rule")}, Rule: ref("deny", r)})
		}
	}
	for _, r := range append(spanRules(pol.Ask), spanRules(pol.Tighter)...) {
		if matchAny(r, st.spans) {
			risk := ruleRisk(r, pol.Thresholds.SessionApprove+1)
			d.Commands = append(d.Commands, Judgement{Command: r.Text(), Action: Ask, Risk: risk,
				Level: pol.Thresholds.level(risk), Category: Caution, Reasons: []string{nonEmpty(r.Reason, "matches an ask rule")}, Rule: ref("ask", r)})
		}
	}
	var scopes []Scope
	first := true
	var decider *Judgement
	for i := range d.Commands {
		j := &d.Commands[i]
		d.Interactive = d.Interactive || j.Interactive
		if decider == nil || j.Action > decider.Action || j.Action == decider.Action && stricter(j, decider) {
			decider = j
		}
		d.Risk = max(d.Risk, j.Risk)
		if j.Action == Ask {
			s := askScopes(j, pol.Thresholds)
			if first {
				scopes, first = s, false
			} else {
				scopes = slices.DeleteFunc(scopes, func(x Scope) bool { return !slices.Contains(s, x) })
			}
		}
	}
	if decider == nil {
		d.Action, d.Category = Ask, Caution
		d.Risk = pol.Thresholds.SessionApprove + 1
		d.Reasons = []string{"there is no command"}
		d.Level = pol.Thresholds.level(d.Risk)
		return d
	}
	d.Action, d.Category, d.Rule = decider.Action, decider.Category, decider.Rule
	d.Level = pol.Thresholds.level(d.Risk)
	if d.Action == Deny {
		d.Level = R4
	}
	for _, j := range d.Commands {
		if j.Action == d.Action && (j.Action != Allow || j.Risk > 0) {
			for _, r := range j.Reasons {
				if !slices.Contains(d.Reasons, r) {
					d.Reasons = append(d.Reasons, r)
				}
			}
		}
	}
	if d.Action == Ask {
		d.Scopes = scopes
	}
	return d
}

// stricter orders two judgements of the same action: a denial by a
// built-in or a rule explains more than one by the thresholds; otherwise
// the higher risk wins.
func stricter(a, b *Judgement) bool {
	if a.Action == Deny && kindRank(a.Rule) != kindRank(b.Rule) {
		return kindRank(a.Rule) > kindRank(b.Rule)
	}
	return a.Risk > b.Risk
}

func kindRank(r *RuleRef) int {
	if r == nil {
		return 0
	}
	switch r.Kind {
	case "builtin":
		return 3
	case "deny", "mode":
		return 2
	}
	return 1
}

// askScopes are the approvals an asking judgement offers.
func askScopes(j *Judgement, t Thresholds) []Scope {
	switch {
	case j.Rule != nil && j.Rule.Kind == "allow": // a session-scoped allow rule
		return []Scope{Once, Session}
	case j.Rule != nil && j.Rule.Kind == "ask":
		if j.Risk <= t.SessionApprove {
			return []Scope{Once, Session}
		}
		return []Scope{Once}
	case j.Risk <= t.SessionApprove:
		return []Scope{Once, Session, Always}
	}
	return []Scope{Once}
}

// deny turns the decision into a denial by a mode or a line-wide rule.
func (d *Decision) deny(r *RuleRef) {
	d.Action, d.Level, d.Rule, d.Scopes = Deny, R4, r, nil
	d.Reasons = append([]string{r.Reason}, d.Reasons...)
}

func spanRules(rules []Rule) []*Rule {
	var out []*Rule
	for i := range rules {
		r := &rules[i]
		if r.m == nil {
			continue
		}
		if r.m.spans || r.m.re != nil && strings.HasPrefix(r.Pattern, "re:") {
			out = append(out, r)
		}
	}
	return out
}

func matchAny(r *Rule, texts []string) bool {
	for _, t := range texts {
		if r.matches(t) {
			return true
		}
	}
	return false
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
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

package policy

import (
	"fmt"
	"slices"
	"strings"
)

// rule turns a judge's findings into a judgement: built-in forbidden
// first, then deny, ask and allow rules, then the thresholds, then the
// session's approvals and the workspace's tightening.
func (st *state) rule(j *judge, inner *Command) Judgement {
	pol, t := st.e.pol, st.e.pol.Thresholds
	c := j.cmd
	out := Judgement{Command: strings.TrimSpace(c.Source), Depth: c.Depth, Writes: j.writes}
	if inner != nil {
		out.Program = inner.Name
	}
	contain(j.findings, st.ctx.Sandbox, t)
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
		out.Contained = out.Contained || f.sandboxed
		out.NeedsUndo = out.NeedsUndo || f.byUndo
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

// contain applies the sandbox to the findings that only reach out: when
// it contains the command their risk is at most what runs unasked, and the
// reason says so; when it does not, the reason says what reaches out. With
// undo, what only destroys the workspace's content runs unasked too.
func contain(findings []layered, c Containment, t Thresholds) {
	for i := range findings {
		f := &findings[i]
		if f.Undoable && c.Undo && f.Risk < t.Block {
			// What would be blocked anyway (rm -rf . of the whole
			// workspace) stays blocked: undo is a way back, not a licence.
			f.byUndo = f.Risk > t.AutoApprove
			f.Risk, f.sandboxed = min(f.Risk, t.AutoApprove), true
			f.Reason += "; forgebox undo can put it back"
			continue
		}
		if !f.Reach {
			continue
		}
		if c.Contained {
			if f.Risk > t.AutoApprove {
				f.Risk, f.sandboxed = t.AutoApprove, true
				f.Reason += "; contained by " + c.How + " (no network, only the workspace writable)"
			}
			continue
		}
		if c.How != "" {
			f.Reason += "; not contained: " + c.How
		}
	}
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
	d := &Decision{Commands: st.out, Reasons: []string{}, shaped: st.shaped}
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
		d.Contained = d.Contained || j.Contained
		d.NeedsUndo = d.NeedsUndo || j.NeedsUndo
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
		d.Rule = &RuleRef{Kind: "empty", Source: "builtin", Reason: "there is no command"}
		d.Level = pol.Thresholds.level(d.Risk)
		return d
	}
	d.Action, d.Category, d.Rule = decider.Action, decider.Category, decider.Rule
	d.Level = pol.Thresholds.level(d.Risk)
	switch {
	case d.Action == Deny:
		d.Level = R4
	case d.Action == Ask && d.Level == R4:
		// The one gate: R4 is never approvable, whatever asked for it (a
		// user's ask rule with risk 9, say). Every surface reads Action.
		d.Action = Deny
		d.Reasons = append(d.Reasons, "its risk is R4, which is never approved")
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

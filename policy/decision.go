package policy

import (
	"encoding/json"
	"fmt"
)

// Action is what forgebox does with a command line.
type Action int

// Actions, from the most permissive to the strictest.
const (
	Allow Action = iota
	Ask
	Deny
)

func (a Action) String() string {
	switch a {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	}
	return "deny"
}

// MarshalText renders the action as its name.
func (a Action) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText reads an action's name, so that a decision printed by
// forgebox (run --json, check --json) reads back.
func (a *Action) UnmarshalText(b []byte) error {
	for _, c := range []Action{Allow, Ask, Deny} {
		if string(b) == c.String() {
			*a = c
			return nil
		}
	}
	return fmt.Errorf("unknown action %q", b)
}

// Category says what kind of thing a command does.
type Category int

// Categories. Interactive commands are not dangerous in themselves; they
// wait for a person at a terminal, so an agent should use a PTY session or
// a non-interactive form.
const (
	ReadOnly Category = iota
	SafeWrite
	Caution
	Dangerous
	Forbidden
	Interactive
)

var categoryNames = [...]string{"read_only", "safe_write", "caution", "dangerous", "forbidden", "interactive"}

func (c Category) String() string {
	if int(c) < len(categoryNames) {
		return categoryNames[c]
	}
	return fmt.Sprintf("category(%d)", int(c))
}

// MarshalText renders the category as its name.
func (c Category) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText reads a category's name.
func (c *Category) UnmarshalText(b []byte) error {
	for i, n := range categoryNames {
		if string(b) == n {
			*c = Category(i)
			return nil
		}
	}
	return fmt.Errorf("unknown category %q", b)
}

// Level is the band a risk score falls in.
type Level int

// Levels: R0 runs without asking, R1 and R2 are approved once per session,
// R3 is asked every time, R4 is blocked.
const (
	R0 Level = iota
	R1
	R2
	R3
	R4
)

func (l Level) String() string { return fmt.Sprintf("R%d", int(l)) }

// MarshalText renders the level as R0..R4.
func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText reads R0..R4.
func (l *Level) UnmarshalText(b []byte) error {
	for v := R0; v <= R4; v++ {
		if string(b) == v.String() {
			*l = v
			return nil
		}
	}
	return fmt.Errorf("unknown level %q", b)
}

// Scope is how long an approval lasts.
type Scope int

// Scopes of an approval.
const (
	Once Scope = iota
	Session
	Always
)

var scopeNames = [...]string{"once", "session", "always"}

func (s Scope) String() string {
	if int(s) < len(scopeNames) {
		return scopeNames[s]
	}
	return fmt.Sprintf("scope(%d)", int(s))
}

// MarshalText renders the scope as its name.
func (s Scope) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads once, session or always.
func (s *Scope) UnmarshalText(b []byte) error {
	v, err := ParseScope(string(b))
	if err == nil {
		*s = v
	}
	return err
}

// ParseScope reads once, session or always.
func ParseScope(s string) (Scope, error) {
	for i, n := range scopeNames {
		if s == n {
			return Scope(i), nil
		}
	}
	return 0, fmt.Errorf("unknown scope %q (want once, session or always)", s)
}

// Finding is one reason a command is risky.
type Finding struct {
	Category Category `json:"category"`
	Risk     int      `json:"risk"`
	Reason   string   `json:"reason"`
	// Reach: the finding's risk lies only in what the command could reach
	// outside the workspace (a program forgebox does not know, the network,
	// a remote system); a sandbox that contains the command takes it away.
	Reach bool `json:"reach,omitempty"`
	// Undoable: all the finding destroys is content of the workspace
	// (files, uncommitted work, its .git): forgebox undo can put it back
	// when the run keeps undo (Containment.Undo).
	Undoable bool `json:"undoable,omitempty"`
	// sandboxed: the finding is this low only because of the run's
	// sandbox (a reach it contains, a removal in its private /tmp).
	sandboxed bool
	// byUndo: the finding is this low only because undo can put back
	// what it destroys.
	byUndo bool
}

// RuleRef names the rule that decided.
type RuleRef struct {
	Kind    string `json:"kind"`   // allow, ask, deny, builtin, threshold, mode
	Source  string `json:"source"` // a file, "session", "builtin" or "default"
	Pattern string `json:"pattern,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

func (r *RuleRef) String() string {
	if r == nil {
		return ""
	}
	s := r.Kind
	if r.Pattern != "" {
		s += fmt.Sprintf(" %q", r.Pattern)
	}
	if r.Source != "" && r.Source != r.Kind {
		s += " (" + r.Source + ")"
	}
	return s
}

// Judgement is the verdict on one simple command of the line.
type Judgement struct {
	Command  string   `json:"command"`
	Program  string   `json:"program,omitempty"`
	Action   Action   `json:"action"`
	Risk     int      `json:"risk"`
	Level    Level    `json:"level"`
	Category Category `json:"category"`
	// Interactive is true when the command waits for a person at a
	// terminal (an editor, a pager, a REPL, ssh without a command).
	Interactive bool `json:"interactive,omitempty"`
	// Contained: the verdict counts on the run's sandbox: what the
	// command may reach, the sandbox contains (no network, a private
	// /tmp), or what it may destroy, forgebox undo puts back. Run where
	// nothing contains it (--net host, the hook without --wrap, --no-undo),
	// the command would be judged riskier or would lose work for good.
	Contained bool `json:"contained,omitempty"`
	// NeedsUndo: the verdict counts on undo (Containment.Undo): with
	// undo off, the command would be asked about. A run whose undo then
	// cannot be set up must not start.
	NeedsUndo bool     `json:"needs_undo,omitempty"`
	Reasons   []string `json:"reasons"`
	Rule      *RuleRef `json:"rule"`
	// Approve is the pattern an approval of this command records: the
	// command itself, or the session-scoped rule that matched it.
	Approve string `json:"approve,omitempty"`
	// Depth is how deeply the command is nested (bash -c, eval, $(...)).
	Depth int `json:"depth,omitempty"`
	// Writes are the paths the command writes as the judge read them
	// (redirections, cp's and tee's targets...), absolute; those computed
	// at run time are not known. For whoever explains a failure: a write
	// the sandbox keeps read-only is one the command line names.
	Writes []Write `json:"-"`

	texts  []string // the texts rules were matched against
	listed bool     // an allow rule of the configuration matched
	// cacheFree: the command cannot tell the private package caches from
	// none (judge.cacheFreeCommand, Decision.CacheFree).
	cacheFree bool
}

// Decision is the verdict on a whole command line: the strictest verdict
// of its simple commands.
type Decision struct {
	Command     string   `json:"command,omitempty"`
	Argv        []string `json:"argv,omitempty"`
	Action      Action   `json:"action"`
	Risk        int      `json:"risk"`
	Level       Level    `json:"level"`
	Category    Category `json:"category"`
	Interactive bool     `json:"interactive"`
	// Contained: the verdict counts on the run's sandbox (Judgement.Contained).
	Contained bool `json:"contained,omitempty"`
	// NeedsUndo: the verdict counts on undo (Judgement.NeedsUndo).
	NeedsUndo bool        `json:"needs_undo,omitempty"`
	Rule      *RuleRef    `json:"rule"`
	Reasons   []string    `json:"reasons"`
	Scopes    []Scope     `json:"scopes,omitempty"` // the approvals an ask offers
	Commands  []Judgement `json:"commands"`

	// shaped: the line holds shell constructs beside its simple commands
	// ([[ ]], for, case, ...): never cache-free (plainSyntax).
	shaped bool
}

// Empty reports whether the line holds no command at all (nothing, blanks,
// comments): a usage error for the caller, not a question for a person.
func (d *Decision) Empty() bool {
	return d.Rule != nil && d.Rule.Kind == "empty" && d.Rule.Source == "builtin"
}

// ApprovalRules are the allow rules an approval of the decision with a
// session or always scope records: the exact command for an ask of the
// thresholds or an ask rule, the pattern for a session-scoped allow rule.
// added stamps them (a date).
func (d *Decision) ApprovalRules(added string) []Rule {
	var out []Rule
	seen := map[string]bool{}
	for _, j := range d.Commands {
		if j.Action != Ask || j.Approve == "" || seen[j.Approve] {
			continue
		}
		seen[j.Approve] = true
		r := Rule{Command: j.Approve, Added: added}
		if j.Rule != nil && j.Rule.Kind == "allow" {
			r = Rule{Pattern: j.Approve, Added: added}
		}
		out = append(out, r)
	}
	return out
}

// Offers reports whether an ask of this decision may be approved with s.
func (d *Decision) Offers(s Scope) bool {
	for _, o := range d.Scopes {
		if o == s {
			return true
		}
	}
	return false
}

// String renders the decision on one line, for logs.
func (d *Decision) String() string {
	b, _ := json.Marshal(struct {
		A Action   `json:"action"`
		R int      `json:"risk"`
		C Category `json:"category"`
	}{d.Action, d.Risk, d.Category})
	return string(b)
}

// Write is a path a command writes, and the place it is in.
type Write struct {
	Path  string
	Place Place
}

package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Rule is one allow, ask or deny rule. Exactly one of Pattern (a pattern)
// and Command (one exact command) is set.
type Rule struct {
	Pattern string `json:"pattern,omitempty"`
	Command string `json:"command,omitempty"`
	// Scope is how long an allow lasts: always (the default) or session (asked
	// once per session).
	Scope    Scope    `json:"scope,omitempty"`
	Reason   string   `json:"reason,omitempty"`
	Risk     *int     `json:"risk,omitempty"`
	Match    []string `json:"match,omitempty"`
	NotMatch []string `json:"not_match,omitempty"`
	// Added records when an approval wrote the rule.
	Added string `json:"added,omitempty"`

	// Source is where the rule came from: a file name, "session".
	Source   string `json:"-"`
	m        *matcher
	scopeSet bool
}

// UnmarshalJSON reads a rule and remembers whether it named a scope.
func (r *Rule) UnmarshalJSON(b []byte) error {
	type plain Rule
	var v struct {
		plain
		Scope *string `json:"scope,omitempty"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return err
	}
	*r = Rule(v.plain)
	if v.Scope != nil {
		s, err := ParseScope(*v.Scope)
		if err != nil {
			return err
		}
		r.Scope, r.scopeSet = s, true
	}
	return nil
}

// MarshalJSON writes a rule; an allow rule's scope is always written.
func (r Rule) MarshalJSON() ([]byte, error) {
	type plain Rule
	v := struct {
		plain
		Scope string `json:"scope,omitempty"`
	}{plain: plain(r)}
	if r.Scope != Once {
		v.Scope = r.Scope.String()
	}
	return json.Marshal(v)
}

// Text is the rule's pattern as the person wrote it.
func (r *Rule) Text() string {
	if r.Command != "" {
		return r.Command
	}
	return r.Pattern
}

// matcher is a compiled pattern.
type matcher struct {
	exact string         // the whole text, when the pattern has no wildcard
	re    *regexp.Regexp // otherwise
	// spans is true for a pattern with shell operators (curl * | sh): it is
	// matched against whole lines and pipelines, not single commands.
	spans bool
}

// errPattern marks a pattern that does not compile.
var errPattern = errors.New("bad pattern")

// compile prepares a rule's pattern. The forms are:
//
//	git status        exactly this command (runs of spaces count as one)
//	git *             the program and anything after it, or nothing
//	* --help          anything ending so
//	git push * main   a glob: * is any text, ? one character
//	re:^git (a|b)$    a regular expression (RE2), matched against the whole text
//	Bash(npm run:*)   Claude Code's spelling, read as "npm run *"
func (r *Rule) compile() error {
	if r.Command != "" {
		if r.Pattern != "" {
			return fmt.Errorf("%w: give pattern or command, not both", errPattern)
		}
		r.m = &matcher{exact: normalize(r.Command)}
		return nil
	}
	p := strings.TrimSpace(r.Pattern)
	if p == "" {
		return fmt.Errorf("%w: empty pattern", errPattern)
	}
	if rest, ok := strings.CutPrefix(p, "re:"); ok {
		re, err := regexp.Compile(`^(?:` + rest + `)$`)
		if err != nil {
			return fmt.Errorf("%w: %v", errPattern, err)
		}
		r.m = &matcher{re: re}
		return nil
	}
	if inner, ok := strings.CutPrefix(p, "Bash("); ok && strings.HasSuffix(inner, ")") {
		p = strings.TrimSuffix(inner, ")")
		p = strings.ReplaceAll(p, ":*", " *")
	}
	p = normalize(p)
	m := &matcher{spans: strings.Contains(p, "|") || strings.Contains(p, "&&") || strings.Contains(p, ";")}
	if !strings.ContainsAny(p, "*?") {
		m.exact = p
		r.m = m
		return nil
	}
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(p); i++ {
		switch {
		case p[i] == '*':
			// "git *" also matches "git", "* --help" also "--help".
			switch {
			case i > 0 && p[i-1] == ' ' && i == len(p)-1:
				s := b.String()
				b.Reset()
				b.WriteString(strings.TrimSuffix(s, " ") + "(?: .*)?")
			case i == 0 && len(p) > 1 && p[1] == ' ':
				b.WriteString("(?:.* )?")
				i++
			default:
				b.WriteString(".*")
			}
		case p[i] == '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(p[i : i+1]))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return fmt.Errorf("%w: %v", errPattern, err)
	}
	m.re = re
	r.m = m
	return nil
}

// matches reports whether the rule's pattern matches one text.
func (r *Rule) matches(text string) bool {
	if r.m == nil {
		return false
	}
	if r.m.re != nil {
		return r.m.re.MatchString(text)
	}
	return r.m.exact == text
}

// normalize folds runs of white space into one space.
func normalize(s string) string {
	if !strings.ContainsAny(s, "\t\n\r\v\f") && !strings.Contains(s, "  ") {
		return strings.TrimSpace(s)
	}
	return strings.Join(strings.Fields(s), " ")
}

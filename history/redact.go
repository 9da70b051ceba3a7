package history

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"sync"
)

// minSecretLen is the shortest caller-named secret value that is replaced
// wherever it appears: shorter ones ("1", "true", "dev") would shred
// ordinary text and hide nothing worth hiding.
const minSecretLen = 6

// Redactor hides secrets in what is about to be stored: the values the
// caller filtered as secret, replaced wherever they appear, and well-known
// secret shapes (see shapeRules). It is safe for concurrent use. A nil
// *Redactor redacts nothing.
type Redactor struct {
	values []string // longest first, so a secret containing another goes whole
	rules  []rule
	block  uint64 // bits of the rules that span lines
	// scan is built on first use (~30 µs): a process that never redacts
	// (history off, say) pays nothing for having a Redactor.
	scan func() *scanner
}

// NewRedactor returns a Redactor for these secret values (values shorter
// than 6 bytes are ignored) and the built-in shapes.
func NewRedactor(secretValues []string) *Redactor {
	r := &Redactor{rules: shapeRules()}
	seen := map[string]bool{}
	for _, v := range secretValues {
		if len(v) >= minSecretLen && !seen[v] {
			seen[v] = true
			r.values = append(r.values, v)
		}
	}
	sort.Slice(r.values, func(i, j int) bool { return len(r.values[i]) > len(r.values[j]) })
	triggers := make([][]string, len(r.rules))
	for i, ru := range r.rules {
		triggers[i] = ru.triggers
		if ru.block {
			r.block |= 1 << i
		}
	}
	r.scan = sync.OnceValue(func() *scanner { return newScanner(triggers) })
	return r
}

// String returns s with every secret replaced by "[REDACTED]". Rules run
// only over the lines that hold one of their triggers.
func (r *Redactor) String(s string) string {
	if r == nil || s == "" {
		return s
	}
	for _, v := range r.values {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, redacted)
		}
	}
	sc := r.scan()
	hits := sc.lines(s)
	var fired uint64
	for _, h := range hits {
		fired |= h.rules
	}
	if fired&r.block != 0 {
		for i, ru := range r.rules {
			if fired&r.block&(1<<i) != 0 {
				s = ru.re().ReplaceAllString(s, ru.repl)
			}
		}
		hits = sc.lines(s)
	}
	if len(hits) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, h := range hits {
		line := s[h.start:h.end]
		for i, ru := range r.rules {
			if h.rules&^r.block&(1<<i) != 0 && (ru.needs == "" || strings.ContainsAny(line, ru.needs)) {
				line = ru.re().ReplaceAllString(line, ru.repl)
			}
		}
		b.WriteString(s[last:h.start])
		b.WriteString(line)
		last = h.end
	}
	b.WriteString(s[last:])
	return b.String()
}

// Run redacts run in place: Command, Argv, Args, Stdout, Stderr, the values
// of Env, and the strings inside Decision, Enforced and Network. It assigns new
// slices rather than writing into the old ones, so a copy of a Run can be
// redacted while the caller still reads the original (Store does exactly
// that while the sandbox starts).
func (r *Redactor) Run(run *Run) {
	if r == nil || run == nil {
		return
	}
	run.Command = r.String(run.Command)
	run.Argv = r.args(run.Argv)
	run.Args = r.args(run.Args)
	run.Env = r.env(run.Env)
	run.Decision = r.json(run.Decision)
	r.output(run)
}

// output redacts what is known only when a run ends (Finish).
func (r *Redactor) output(run *Run) {
	run.Stdout = r.String(run.Stdout)
	run.Stderr = r.String(run.Stderr)
	run.Enforced = r.json(run.Enforced)
	run.Network = r.json(run.Network)
}

// args redacts each argument, and the one after a secret-naming flag
// ("--password", "hunter2"), which no pattern could tell from any word.
func (r *Redactor) args(list []string) []string {
	if len(list) == 0 {
		return list
	}
	out := make([]string, len(list))
	for i, a := range list {
		if i > 0 && isSecretFlag(list[i-1]) && !strings.HasPrefix(a, "-") {
			out[i] = redacted
			continue
		}
		out[i] = r.String(a)
	}
	return out
}

// env keeps names, and values only of variables that neither the caller
// nor their name marks as secret.
func (r *Redactor) env(vars []EnvVar) []EnvVar {
	if len(vars) == 0 {
		return vars
	}
	out := make([]EnvVar, len(vars))
	for i, v := range vars {
		switch {
		case v.Secret || isSecretName(v.Name):
			out[i] = EnvVar{Name: v.Name, Secret: true}
		default:
			out[i] = EnvVar{Name: v.Name, Value: r.String(v.Value)}
		}
	}
	return out
}

// json redacts the strings inside a JSON document, and the whole value of
// any member whose name marks it secret. A document that is not JSON is
// redacted as text.
func (r *Redactor) json(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber() // keep numbers exactly as written
	var v any
	if err := d.Decode(&v); err != nil {
		return json.RawMessage(r.String(string(raw)))
	}
	v, changed := r.walk(v)
	if !changed {
		return raw
	}
	out, err := marshalJSON(v)
	if err != nil {
		return json.RawMessage(r.String(string(raw)))
	}
	return out
}

func (r *Redactor) walk(v any) (any, bool) {
	switch t := v.(type) {
	case string:
		s := r.String(t)
		return s, s != t
	case []any:
		changed := false
		for i, e := range t {
			var c bool
			t[i], c = r.walk(e)
			changed = changed || c
		}
		return t, changed
	case map[string]any:
		changed := false
		for k, e := range t {
			if _, isStr := e.(string); isStr && isSecretName(k) && e != "" {
				t[k], changed = redacted, true
				continue
			}
			var c bool
			t[k], c = r.walk(e)
			changed = changed || c
		}
		return t, changed
	}
	return v, false
}

// secretWords mark a variable, JSON member or flag as holding a secret.
func secretWords() []string {
	return []string{"password", "passwd", "passphrase", "secret", "token", "apikey", "api_key",
		"api-key", "access_key", "access-key", "private_key", "private-key", "credential"}
}

// isSecretName reports whether a variable or member name says its value is
// a secret: GITHUB_TOKEN, DB_PASSWORD, OPENAI_API_KEY, GPG_KEY.
func isSecretName(name string) bool {
	n := asciiLower(name)
	for _, w := range secretWords() {
		if strings.Contains(n, w) {
			return true
		}
	}
	return n == "key" || strings.HasSuffix(n, "_key") || strings.HasSuffix(n, "_pat")
}

// isSecretFlag reports whether a command-line word is a flag whose next
// word is a secret: --password, --api-key, -token.
func isSecretFlag(a string) bool {
	if !strings.HasPrefix(a, "-") || strings.Contains(a, "=") {
		return false
	}
	n := asciiLower(a)
	for _, w := range secretWords() {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// asciiLower lowers A-Z only, so that byte offsets in the result are those
// of s (strings.ToLower may change lengths).
func asciiLower(s string) string {
	i := 0
	for i < len(s) && (s[i] < 'A' || s[i] > 'Z') {
		i++
	}
	if i == len(s) {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if c := b[i]; 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"path/filepath"
	"strings"
)

// MaxConfigBytes bounds a configuration file.
const MaxConfigBytes = 1 << 20

// ConfigError locates a problem in a configuration file.
type ConfigError struct {
	File         string
	Line, Column int // 1-based; 0 when unknown
	Msg          string
}

func (e *ConfigError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
}

// The file's shape: {"forgebox": {"mode": ..., "rules": {...}, "riskThresholds": {...}}}.
type fileConfig struct {
	Forgebox *fileForgebox `json:"forgebox"`
}

type fileForgebox struct {
	Mode       string          `json:"mode,omitempty"`
	History    *History        `json:"history,omitempty"`
	Network    *Network        `json:"network,omitempty"`
	Rules      *fileRules      `json:"rules,omitempty"`
	Thresholds *fileThresholds `json:"riskThresholds,omitempty"`
}

type fileRules struct {
	Allow []Rule `json:"allow,omitempty"`
	Ask   []Rule `json:"ask,omitempty"`
	Deny  []Rule `json:"deny,omitempty"`
}

type fileThresholds struct {
	AutoApprove    *int `json:"autoApprove,omitempty"`
	SessionApprove *int `json:"sessionApprove,omitempty"`
	AlwaysAsk      *int `json:"alwaysAsk,omitempty"`
	Block          *int `json:"block,omitempty"`
}

// ParseConfig reads a configuration file's contents. name is used in
// errors and as the rules' source. Unknown keys, bad patterns, examples a
// rule does not match, and thresholds out of order are errors.
func ParseConfig(name string, data []byte) (*Policy, error) {
	fail := func(off int64, format string, args ...any) error {
		e := &ConfigError{File: name, Msg: fmt.Sprintf(format, args...)}
		if off >= 0 {
			e.Line, e.Column = position(data, off)
		}
		return e
	}
	if len(data) > MaxConfigBytes {
		return nil, fail(-1, "the file is larger than %d bytes", MaxConfigBytes)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fail(-1, `the file is empty; an empty configuration is {}`)
	}
	var fc fileConfig
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&fc); err != nil {
		return nil, decodeError(name, data, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fail(dec.InputOffset(), "unexpected data after the configuration object")
	}
	p := Default()
	p.Files = []string{name}
	fb := fc.Forgebox
	if fb == nil {
		return p, nil
	}
	if h := fb.History; h != nil {
		if h.KeepDays < 0 || h.KeepRows < 0 {
			return nil, fail(locate(data, "forgebox", "history"), "history: keepDays and keepRows must not be negative")
		}
		p.History = *h
	}
	if n := fb.Network; n != nil {
		if err := n.check(); err != nil {
			return nil, fail(locate(data, "forgebox", "network"), "network: %v", err)
		}
		p.Network = *n
	}
	switch fb.Mode {
	case "", "normal":
	case "allowlist":
		p.Mode = Allowlist
	default:
		return nil, fail(locate(data, "forgebox", "mode"), `unknown mode %q (want "normal" or "allowlist")`, fb.Mode)
	}
	if t := fb.Thresholds; t != nil {
		set := func(dst *int, v *int) {
			if v != nil {
				*dst = *v
			}
		}
		set(&p.Thresholds.AutoApprove, t.AutoApprove)
		set(&p.Thresholds.SessionApprove, t.SessionApprove)
		set(&p.Thresholds.AlwaysAsk, t.AlwaysAsk)
		set(&p.Thresholds.Block, t.Block)
		if err := p.Thresholds.validate(); err != nil {
			return nil, fail(locate(data, "forgebox", "riskThresholds"), "%v", err)
		}
	}
	if fb.Rules == nil {
		return p, nil
	}
	lists := []struct {
		kind  string
		rules []Rule
		dst   *[]Rule
	}{{"allow", fb.Rules.Allow, &p.Allow}, {"ask", fb.Rules.Ask, &p.Ask}, {"deny", fb.Rules.Deny, &p.Deny}}
	for _, l := range lists {
		for i := range l.rules {
			r := l.rules[i]
			r.Source = name
			if err := r.check(l.kind); err != nil {
				return nil, fail(locate(data, "forgebox", "rules", l.kind, i), "%s rule %d (%q): %v", l.kind, i+1, r.Text(), err)
			}
			*l.dst = append(*l.dst, r)
		}
	}
	return p, nil
}

// check validates the network section's ranges and the hosts file's path
// (the file itself is read when a run uses it). The host patterns are the
// proxy's to check: policy imports no forgebox package but the leaf pathtree.
func (n *Network) check() error {
	if _, err := n.Prefixes(); err != nil {
		return err
	}
	if n.Hosts != "" && !filepath.IsAbs(n.Hosts) {
		return fmt.Errorf("hosts %q: the path must be absolute", n.Hosts)
	}
	return nil
}

// Prefixes parses AllowPrivate; a single address is a prefix of its own.
func (n *Network) Prefixes() ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range n.AllowPrivate {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("allowPrivate %q: want an address range such as 10.0.0.0/8 or 127.0.0.1", s)
		}
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// check validates a rule of a kind, its pattern and its examples.
func (r *Rule) check(kind string) error {
	if err := r.compile(); err != nil {
		return err
	}
	switch {
	case kind != "allow" && r.Scope != Once:
		return errors.New("scope applies to allow rules only")
	case kind == "allow" && r.Scope == Once && r.hasScope():
		return errors.New(`an allow rule's scope is "always" or "session"`)
	case kind == "allow" && r.Risk != nil:
		return errors.New("risk applies to ask and deny rules only")
	case r.Risk != nil && (*r.Risk < 0 || *r.Risk > 10):
		return fmt.Errorf("risk %d is outside 0-10", *r.Risk)
	case kind == "allow" && r.m.spans:
		return errors.New("an allow rule matches one simple command; its pattern cannot hold |, && or ; (allow each command instead)")
	}
	if kind == "allow" && r.Scope == Once {
		r.Scope = Always
	}
	for _, ex := range r.Match {
		if !r.fires(ex) {
			return fmt.Errorf("the example %q in match does not match", ex)
		}
	}
	for _, ex := range r.NotMatch {
		if r.fires(ex) {
			return fmt.Errorf("the example %q in not_match matches", ex)
		}
	}
	return nil
}

// hasScope is false for a rule read without a scope; the zero Scope is
// Once, which no file may write for an allow rule.
func (r *Rule) hasScope() bool { return r.scopeSet }

// fires reports whether the rule matches a command line, as the engine
// matches it: against each simple command's forms, or, for a pattern with
// operators, against the line and its pipelines.
func (r *Rule) fires(line string) bool {
	ctx := &Context{Workspace: "/workspace", Cwd: "/workspace", Home: "/home/user"}
	st := New(nil).newState(ctx)
	st.line(line, 0, "")
	if r.m.spans {
		return matchAny(r, st.spans)
	}
	for _, j := range st.out {
		if matchAny(r, j.texts) {
			return true
		}
	}
	return false
}

// decodeError turns a json error into a located ConfigError.
func decodeError(name string, data []byte, err error) error {
	e := &ConfigError{File: name, Msg: err.Error()}
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &syn):
		// The offset counts the offending byte.
		e.Line, e.Column = position(data, syn.Offset-1)
		e.Msg = "invalid JSON: " + syn.Error()
	case errors.As(err, &typ):
		off := typ.Offset - 1
		if typ.Field != "" {
			var path []any
			for _, k := range strings.Split(typ.Field, ".") {
				path = append(path, k)
			}
			if at := locate(data, path...); at >= 0 {
				off = at
			}
		}
		e.Line, e.Column = position(data, off)
		field := typ.Field
		if field == "" {
			field = "the value"
		}
		e.Msg = fmt.Sprintf("%s: want %s, got a JSON %s", field, typ.Type, typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		e.Line, e.Column = position(data, int64(len(data)))
		e.Msg = "invalid JSON: the file ends inside a value"
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		key := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		if off := locateKey(data, key); off >= 0 {
			e.Line, e.Column = position(data, off)
		}
		e.Msg = fmt.Sprintf("unknown key %q", key)
	default:
		// The decoding of a field (a scope name) failed.
		e.Msg = strings.TrimPrefix(err.Error(), "json: ")
	}
	return e
}

// position turns a byte offset into a 1-based line and column.
func position(data []byte, off int64) (int, int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off < 0 {
		off = 0
	}
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// locate returns the offset of the value at a path of object keys and
// array indexes, or -1.
func locate(data []byte, path ...any) int64 {
	dec := json.NewDecoder(bytes.NewReader(data))
	var walk func(depth int) (int64, bool)
	// skip consumes one value whose first token was already read.
	skip := func(tok json.Token) {
		if d, ok := tok.(json.Delim); ok && (d == '{' || d == '[') {
			for n := 1; n > 0; {
				t, err := dec.Token()
				if err != nil {
					return
				}
				if d, ok := t.(json.Delim); ok {
					if d == '{' || d == '[' {
						n++
					} else {
						n--
					}
				}
			}
		}
	}
	walk = func(depth int) (int64, bool) {
		if depth == len(path) {
			return dec.InputOffset(), true
		}
		tok, err := dec.Token()
		if err != nil {
			return -1, false
		}
		switch want := path[depth].(type) {
		case string:
			if tok != json.Delim('{') {
				return -1, false
			}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return -1, false
				}
				if k == want {
					return walk(depth + 1)
				}
				v, err := dec.Token()
				if err != nil {
					return -1, false
				}
				skip(v)
			}
		case int:
			if tok != json.Delim('[') {
				return -1, false
			}
			for i := 0; dec.More(); i++ {
				if i == want {
					return walk(depth + 1)
				}
				v, err := dec.Token()
				if err != nil {
					return -1, false
				}
				skip(v)
			}
		}
		return -1, false
	}
	off, ok := walk(0)
	if !ok {
		return -1
	}
	// The offset is where the previous token ended; step to the value.
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n:,", data[off]) >= 0 {
		off++
	}
	return off
}

// locateKey returns the offset of the first object key named key, or -1.
func locateKey(data []byte, key string) int64 {
	dec := json.NewDecoder(bytes.NewReader(data))
	var stack []bool // true: inside an object, expecting a key
	for {
		before := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return -1
		}
		inObject := len(stack) > 0 && stack[len(stack)-1]
		if s, ok := tok.(string); ok && inObject && s == key {
			// Tokens after a value in an object alternate key, value; the
			// decoder hides which one this is, so check the next byte.
			after := dec.InputOffset()
			rest := bytes.TrimLeft(data[after:], " \t\r\n")
			if len(rest) > 0 && rest[0] == ':' {
				for before < int64(len(data)) && data[before] != '"' {
					before++
				}
				return before
			}
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{':
				stack = append(stack, true)
			case '[':
				stack = append(stack, false)
			default:
				stack = stack[:len(stack)-1]
			}
		}
	}
}

package netproxy

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// Rules is a parsed network allowlist: which hosts and ports a sandboxed
// command may reach through the proxy. It is immutable and safe for
// concurrent use.
//
// Pattern grammar (both lists):
//
//	example.com        that name only, any port
//	example.com:443    that name on port 443 only
//	*.example.com      every name under example.com, at any depth
//	                   (a.example.com, x.y.example.com), not example.com
//	                   itself and not evilexample.com
//	192.0.2.7          that IPv4 address, given literally by the client
//	2001:db8::7        that IPv6 address; with a port: [2001:db8::7]:443
//
// Names are case-insensitive, a trailing dot is ignored, and international
// names are compared in their ASCII (Punycode) form. A name pattern never
// matches a client that asks for an IP address, and an IP pattern never
// matches a name that resolves to it. Deny patterns win over allow patterns.
type Rules struct {
	allow, deny []pattern
}

type pattern struct {
	text     string // normalized, for messages
	wildcard bool   // "*." + h.name
	h        host
	port     uint16 // 0: any port
}

// PatternError reports a pattern Parse refused.
type PatternError struct {
	List    string // "allow" or "deny"
	Pattern string
	Err     error
}

func (e *PatternError) Error() string {
	return fmt.Sprintf("%s pattern %q: %v", e.List, e.Pattern, e.Err)
}

func (e *PatternError) Unwrap() error { return e.Err }

// Parse builds Rules from allow and deny patterns. It reports every bad
// pattern, each as a *PatternError, joined. An empty allow list is valid and
// allows nothing.
func Parse(allow, deny []string) (*Rules, error) {
	var r Rules
	var errs []error
	for _, l := range []struct {
		name string
		in   []string
		out  *[]pattern
	}{{"allow", allow, &r.allow}, {"deny", deny, &r.deny}} {
		for _, s := range l.in {
			p, err := parsePattern(s)
			if err != nil {
				errs = append(errs, &PatternError{List: l.name, Pattern: s, Err: err})
				continue
			}
			*l.out = append(*l.out, p)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &r, nil
}

func parsePattern(s string) (pattern, error) {
	if s == "" {
		return pattern{}, errors.New("empty pattern")
	}
	if strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return pattern{}, errors.New("contains a space or a control character")
	}
	if strings.Contains(s, "/") {
		return pattern{}, errors.New("address ranges (CIDR) are not supported: list addresses one by one")
	}
	hs, ps, err := splitAuthority(s)
	if err != nil {
		return pattern{}, err
	}
	var p pattern
	if ps != "" {
		if p.port, err = parsePort(ps); err != nil {
			return pattern{}, err
		}
	}
	if hs == "*" {
		return pattern{}, errors.New("a bare * would allow every host: list the hosts")
	}
	if base, ok := strings.CutPrefix(hs, "*."); ok {
		p.wildcard = true
		hs = base
	}
	if strings.Contains(hs, "*") {
		return pattern{}, errors.New("* is allowed only as a whole first label, as in *.example.com")
	}
	h, err := parseHost(hs)
	if err != nil {
		return pattern{}, err
	}
	p.h = h
	if p.wildcard {
		if h.ip.IsValid() {
			return pattern{}, errors.New("a wildcard cannot apply to an IP address")
		}
		if !strings.Contains(h.name, ".") {
			return pattern{}, fmt.Errorf("*.%s would allow every host under a top-level domain", h.name)
		}
		if suffix, icann := publicsuffix.PublicSuffix(h.name); icann && suffix == h.name {
			return pattern{}, fmt.Errorf("*.%s would allow every host under the public suffix %s", h.name, h.name)
		}
	}
	p.text = h.String()
	if p.wildcard {
		p.text = "*." + p.text
	}
	if p.port != 0 {
		p.text = joinHostPort(p.text, p.port)
	}
	return p, nil
}

func (p pattern) matchesHost(h host) bool {
	switch {
	case p.h.ip.IsValid():
		return h.ip == p.h.ip
	case h.ip.IsValid():
		return false
	case p.wildcard:
		return strings.HasSuffix(h.name, "."+p.h.name)
	}
	return h.name == p.h.name
}

func (p pattern) matches(h host, port uint16) bool {
	return p.matchesHost(h) && (p.port == 0 || p.port == port)
}

// Check reports whether the proxy may connect to hostname (a name or an IP
// literal, as a client would send it) on port.
// It returns nil or a *Denial (CodeDenyRule, CodeNotAllowed, CodeIPLiteral
// or CodeInvalidHost).
func (r *Rules) Check(hostname string, port uint16) error {
	h, err := parseHost(hostname)
	if err != nil {
		return &Denial{Code: CodeInvalidHost, Host: hostname, Port: port, Detail: err.Error()}
	}
	if d := r.check(h, port); d != nil {
		return d
	}
	return nil
}

func (r *Rules) check(h host, port uint16) *Denial {
	for _, p := range r.deny {
		if p.matches(h, port) {
			return &Denial{Code: CodeDenyRule, Host: h.String(), Port: port, Rule: p.text}
		}
	}
	var ports []uint16
	for _, p := range r.allow {
		if p.matches(h, port) {
			return nil
		}
		if p.matchesHost(h) {
			ports = append(ports, p.port)
		}
	}
	d := &Denial{Code: CodeNotAllowed, Host: h.String(), Port: port, Ports: ports}
	if h.ip.IsValid() && len(ports) == 0 {
		// An address listed on other ports is just not allowed on this one.
		d.Code = CodeIPLiteral
	}
	if len(r.allow) == 0 {
		d.Detail = "the allowlist is empty"
	}
	return d
}

// String lists the normalized patterns, for diagnostics.
func (r *Rules) String() string {
	var b strings.Builder
	for i, l := range [][]pattern{r.allow, r.deny} {
		for _, p := range l {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString([]string{"allow=", "deny="}[i] + p.text)
		}
	}
	return b.String()
}

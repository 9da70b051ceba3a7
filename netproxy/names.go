package netproxy

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// host is a destination after normalization: exactly one of name and ip is
// set. A name is lower-case ASCII (IDNA A-labels), without a trailing dot.
type host struct {
	name string
	ip   netip.Addr
}

func (h host) String() string {
	if h.ip.IsValid() {
		return h.ip.String()
	}
	return h.name
}

// joinHostPort writes "example.com:8080" or "[::1]:443".
func joinHostPort(h string, port uint16) string {
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	return h + ":" + strconv.Itoa(int(port))
}

// parseHost normalizes what a pattern or a request names: an IP literal
// (IPv6 without brackets, no zone) or a host name.
func parseHost(s string) (host, error) {
	if s == "" {
		return host{}, errors.New("empty host")
	}
	if strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return host{}, errors.New("host contains a space or a control character")
	}
	if ip, err := netip.ParseAddr(s); err == nil {
		if ip.Zone() != "" {
			return host{}, errors.New("an IPv6 zone is not allowed")
		}
		return host{ip: ip.Unmap()}, nil
	}
	if strings.ContainsAny(s, "[]/") {
		return host{}, errors.New("not a host name or IP address")
	}
	name, err := toASCII(s)
	if err != nil {
		return host{}, err
	}
	name = strings.TrimSuffix(name, ".")
	if name == "" {
		return host{}, errors.New("empty host")
	}
	if err := checkLabels(name); err != nil {
		return host{}, err
	}
	return host{name: name}, nil
}

// checkLabels accepts host names of letters, digits, '-' and '_' (which some
// real hosts use), and refuses a name whose last label is numeric: resolvers
// and URL parsers read "127.1", "0x7f.1" and "2130706433" as IPv4 addresses,
// which would let a name slip past the IP-literal rules.
func checkLabels(name string) error {
	if len(name) > 253 {
		return errors.New("host name longer than 253 characters")
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if l == "" {
			return errors.New("empty label in host name")
		}
		if len(l) > 63 {
			return fmt.Errorf("label %q longer than 63 characters", l)
		}
		if l[0] == '-' || l[len(l)-1] == '-' {
			return fmt.Errorf("label %q starts or ends with '-'", l)
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("character %q not allowed in a host name", c)
			}
		}
	}
	if numericLabel(labels[len(labels)-1]) {
		return errors.New("looks like an IP address in a non-standard form: write IPv4 addresses as four decimal numbers")
	}
	return nil
}

// numericLabel reports whether the WHATWG URL parser would read l as part of
// an IPv4 address: decimal digits, or 0x followed by hex digits.
func numericLabel(l string) bool {
	if strings.HasPrefix(l, "0x") || strings.HasPrefix(l, "0X") {
		l = l[2:]
		for i := 0; i < len(l); i++ {
			if !strings.ContainsRune("0123456789abcdefABCDEF", rune(l[i])) {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(l); i++ {
		if l[i] < '0' || l[i] > '9' {
			return false
		}
	}
	return true
}

// parsePort reads a decimal port from 1 to 65535.
func parsePort(s string) (uint16, error) {
	if s == "" || len(s) > 5 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("invalid port %q", s)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("port %q out of range 1-65535", s)
	}
	return uint16(n), nil
}

// splitAuthority splits "host:port", "[v6]:port", "[v6]", a bare IPv6
// address or a bare host; port is "" when absent.
func splitAuthority(s string) (h, port string, err error) {
	switch {
	case strings.HasPrefix(s, "["):
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", "", errors.New("missing ']' after an IPv6 address")
		}
		h, rest := s[1:end], s[end+1:]
		if a, err := netip.ParseAddr(h); err != nil || !a.Is6() {
			return "", "", fmt.Errorf("%q in brackets is not an IPv6 address", h)
		}
		if rest == "" {
			return h, "", nil
		}
		if rest[0] != ':' {
			return "", "", fmt.Errorf("unexpected %q after ']'", rest)
		}
		if rest == ":" {
			return "", "", errors.New("empty port")
		}
		return h, rest[1:], nil
	case strings.Count(s, ":") == 1:
		h, port, _ := strings.Cut(s, ":")
		if port == "" {
			return "", "", errors.New("empty port")
		}
		return h, port, nil
	}
	return s, "", nil
}

// refusedRange names the special-purpose range a resolved address lies in,
// or returns "" for a public address. Names that resolve into these ranges
// are refused unless Options.AllowPrivate covers the address: a name the
// user allowed must not become a way into the host's loopback or LAN (DNS
// rebinding).
func refusedRange(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case a.IsUnspecified():
		return "an unspecified address"
	case a.IsLoopback():
		return "a loopback address"
	case a.IsLinkLocalUnicast():
		return "a link-local address"
	case a.IsMulticast():
		return "a multicast address"
	case a.IsPrivate():
		return "a private address"
	}
	if a.Is4() {
		b := a.As4()
		switch {
		case b[0] == 0:
			return `a "this network" address (0.0.0.0/8)`
		case b[0] == 100 && b[1]&0xc0 == 64:
			return "a shared (CGNAT) address (100.64.0.0/10)"
		case b[0] >= 240:
			return "a reserved or broadcast address (240.0.0.0/4)"
		}
		return ""
	}
	if b := a.As16(); b[0] == 0xfe && b[1]&0xc0 == 0xc0 {
		return "a site-local address (fec0::/10)"
	}
	return ""
}

package netproxy

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func mustParse(t testing.TB, allow, deny []string) *Rules {
	t.Helper()
	r, err := Parse(allow, deny)
	if err != nil {
		t.Fatalf("Parse(%q, %q): %v", allow, deny, err)
	}
	return r
}

func TestRulesMatch(t *testing.T) {
	r := mustParse(t,
		[]string{"allowed.test", "*.allowed.test", "ports.test:443", "ports.test:8443", "EXAMPLE.Org.", "bücher.test",
			"192.0.2.7", "[2001:db8::7]:443", "*.blocked.test", "open.test"},
		[]string{"secret.allowed.test", "*.blocked.test", "open.test:25"})
	tests := []struct {
		host string
		port uint16
		want Code // "" = allowed
	}{
		{"allowed.test", 443, ""},
		{"allowed.test", 1, ""},
		{"ALLOWED.TEST.", 80, ""},
		{"a.allowed.test", 443, ""},
		{"x.y.allowed.test", 443, ""}, // any depth
		{"evilallowed.test", 443, CodeNotAllowed},
		{"allowed.test.evil.test", 443, CodeNotAllowed},
		{"secret.allowed.test", 443, CodeDenyRule},
		{"a.secret.allowed.test", 443, ""}, // the deny pattern is exact
		{"ports.test", 443, ""},
		{"ports.test", 8443, ""},
		{"ports.test", 80, CodeNotAllowed},
		{"example.org", 443, ""},
		{"xn--bcher-kva.test", 443, ""},
		{"BÜCHER.test", 443, ""},
		{"192.0.2.7", 443, ""},
		{"::ffff:192.0.2.7", 443, ""}, // v4-mapped is the same address
		{"192.0.2.8", 443, CodeIPLiteral},
		{"2001:db8::7", 443, ""},
		{"2001:db8::7", 80, CodeNotAllowed},   // listed, on another port
		{"a.blocked.test", 443, CodeDenyRule}, // deny wins over an identical allow
		{"open.test", 25, CodeDenyRule},
		{"open.test", 587, ""},
		{"127.1", 80, CodeInvalidHost},
		{"0x7f000001", 80, CodeInvalidHost},
		{"a b.test", 80, CodeInvalidHost},
		{"", 80, CodeInvalidHost},
	}
	for _, tt := range tests {
		err := r.Check(tt.host, tt.port)
		var got Code
		var d *Denial
		if errors.As(err, &d) {
			got = d.Code
		} else if err != nil {
			t.Fatalf("Check(%q, %d) = %v, not a *Denial", tt.host, tt.port, err)
		}
		if got != tt.want {
			t.Errorf("Check(%q, %d) = %v, want code %q", tt.host, tt.port, err, tt.want)
		}
	}
}

func TestRulesEmptyAllowsNothing(t *testing.T) {
	for _, r := range []*Rules{mustParse(t, nil, nil), mustParse(t, []string{}, []string{"x.test"}), New(nil, Options{}).rules} {
		for _, h := range []string{"allowed.test", "192.0.2.1", "localhost"} {
			var d *Denial
			if err := r.Check(h, 443); !errors.As(err, &d) || (d.Code != CodeNotAllowed && d.Code != CodeIPLiteral) {
				t.Errorf("empty allowlist: Check(%q) = %v, want a refusal", h, err)
			}
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		pattern string
		want    string
	}{
		{"", "empty pattern"},
		{"*", "bare *"},
		{"*.com", "top-level domain"},
		{"*.co.uk", "public suffix"},
		{"*.test", "top-level domain"},
		{"a*b.com", "first label"},
		{"*a.example.com", "first label"},
		{"a.*.example.com", "first label"},
		{"**.example.com", "first label"},
		{"example.com:0", "out of range"},
		{"example.com:65536", "out of range"},
		{"example.com:-1", "invalid port"},
		{"example.com:", "empty port"},
		{"example.com:http", "invalid port"},
		{"exa mple.com", "space"},
		{" example.com", "space"},
		{"example.com/path", "CIDR"},
		{"10.0.0.0/8", "CIDR"},
		{"*.10.0.0.1", "IP address"},
		{"fe80::1%eth0", "zone"},
		{"[1.2.3.4]:80", "not an IPv6"},
		{"[::1", "missing ']'"},
		{"127.1", "non-standard form"},
		{"2130706433", "non-standard form"},
		{"a..b.com", "empty label"},
		{"-a.com", "starts or ends"},
		{"a@b.com", "not allowed"},
		{strings.Repeat("a", 64) + ".com", "longer than 63"},
		{"xn--a.com", "not allowed"},
		{"xn--abc-.com", "Punycode of a plain ASCII label"},
	}
	for _, tt := range tests {
		_, err := Parse([]string{tt.pattern}, nil)
		var pe *PatternError
		if !errors.As(err, &pe) || pe.Pattern != tt.pattern {
			t.Errorf("Parse(%q) = %v, want a *PatternError naming it", tt.pattern, err)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), `"`+tt.pattern+`"`) {
			t.Errorf("Parse(%q) = %q, want it to name the pattern and say %q", tt.pattern, err, tt.want)
		}
	}
	// Every bad pattern is reported, from both lists.
	_, err := Parse([]string{"*", "ok.test", "a*b.test"}, []string{"*.com"})
	if n := strings.Count(err.Error(), "pattern"); n != 3 {
		t.Errorf("Parse with three bad patterns = %q, want three errors", err)
	}
	if !strings.Contains(err.Error(), `deny pattern "*.com"`) {
		t.Errorf("Parse error %q does not name the deny list", err)
	}
}

func TestParseAccepts(t *testing.T) {
	tests := []struct{ in, norm string }{
		{"Example.COM.", "example.com"},
		{"example.com:443", "example.com:443"},
		{"*.github.io", "*.github.io"}, // a private-section public suffix is allowed
		{"*.example.co.uk", "*.example.co.uk"},
		{"localhost", "localhost"},
		{"my_host.internal", "my_host.internal"},
		{"r3---sn-abc.googlevideo.com", "r3---sn-abc.googlevideo.com"},
		{"bücher.de:443", "xn--bcher-kva.de:443"},
		{"ＥＸＡＭＰＬＥ。com", "example.com"},
		{"xn--bcher-kva.de", "xn--bcher-kva.de"},
		{"192.0.2.1:80", "192.0.2.1:80"},
		{"::1", "::1"},
		{"[::1]:8080", "[::1]:8080"},
		{"[::ffff:10.0.0.1]", "10.0.0.1"},
	}
	for _, tt := range tests {
		r, err := Parse([]string{tt.in}, nil)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if got := r.String(); got != "allow="+tt.norm {
			t.Errorf("Parse(%q).String() = %q, want %q", tt.in, got, "allow="+tt.norm)
		}
	}
}

func TestDenialMessages(t *testing.T) {
	r := mustParse(t, []string{"ports.test:443", "ok.test"}, []string{"*.ok.test"})
	tests := []struct {
		host   string
		port   uint16
		msg    string
		advice string
	}{
		{"example.org", 443, "example.org is not in the network allowlist", "add example.org to the network allowlist"},
		{"ports.test", 80, "ports.test:80 is not in the network allowlist: ports.test is allowed on port 443 only", "add ports.test:80 to the network allowlist"},
		{"a.ok.test", 443, "a.ok.test is denied by the network rule deny=*.ok.test", "remove the deny rule *.ok.test"},
		{"192.0.2.1", 443, "192.0.2.1 is an IP address not listed in the network allowlist", "add 192.0.2.1 to the network allowlist"},
	}
	for _, tt := range tests {
		var d *Denial
		if err := r.Check(tt.host, tt.port); !errors.As(err, &d) {
			t.Fatalf("Check(%q, %d) = %v, want a Denial", tt.host, tt.port, err)
		}
		if !strings.HasPrefix(d.Error(), tt.msg) {
			t.Errorf("Check(%q, %d) message = %q, want %q", tt.host, tt.port, d.Error(), tt.msg)
		}
		if a := defaultAdvice(d); a != tt.advice {
			t.Errorf("defaultAdvice(Check(%q, %d)) = %q, want %q", tt.host, tt.port, a, tt.advice)
		}
	}
}

func TestRefusedRange(t *testing.T) {
	for _, tt := range []struct {
		addr    string
		refused bool
	}{
		{"127.0.0.1", true}, {"127.255.0.9", true}, {"::1", true}, {"::ffff:127.0.0.1", true},
		{"10.1.2.3", true}, {"172.16.0.1", true}, {"172.31.255.255", true}, {"192.168.1.1", true},
		{"fd00::1", true}, {"fc00::1", true}, {"169.254.169.254", true}, {"fe80::1", true},
		{"100.64.0.1", true}, {"100.127.255.255", true}, {"0.0.0.0", true}, {"0.1.2.3", true}, {"::", true},
		{"224.0.0.1", true}, {"239.1.1.1", true}, {"ff02::1", true}, {"255.255.255.255", true},
		{"240.0.0.1", true}, {"fec0::1", true},
		{"8.8.8.8", false}, {"100.63.255.255", false}, {"100.128.0.0", false}, {"172.32.0.1", false},
		{"2001:4860:4860::8888", false}, {"192.0.2.1", false},
	} {
		if got := refusedRange(netip.MustParseAddr(tt.addr)) != ""; got != tt.refused {
			t.Errorf("refusedRange(%s) refused = %v, want %v", tt.addr, got, tt.refused)
		}
	}
}

func TestPunycode(t *testing.T) {
	// RFC 3492 section 7.1 samples, and names checked against
	// golang.org/x/net/idna's lookup profile.
	for _, tt := range []struct{ u, a string }{
		{"bücher", "bcher-kva"},
		{"münchen", "mnchen-3ya"},
		{"例え", "r8jz45g"},
		{"пример", "e1afmkfd"},
		{"ελληνικά", "hxargifdar"},
		{"straße", "strae-oqa"},
		{"他们为什么不说中文", "ihqwcrb4cv8a8dqg056pqjye"},
		{"почемужеонинеговорятпорусски", "b1abfaaepdrnnbgefbadotcwatmq2g4l"},
	} {
		got, err := punyEncode([]rune(tt.u))
		if err != nil || got != tt.a {
			t.Errorf("punyEncode(%q) = %q, %v; want %q", tt.u, got, err, tt.a)
		}
		back, err := punyDecode(tt.a)
		if err != nil || string(back) != tt.u {
			t.Errorf("punyDecode(%q) = %q, %v; want %q", tt.a, string(back), err, tt.u)
		}
	}
	for _, bad := range []string{"xn--99999999999", "xn--a-", "xn--ab-ã"} {
		if _, err := parseHost(bad + ".test"); err == nil {
			t.Errorf("parseHost(%q) accepted invalid Punycode", bad+".test")
		}
	}
}

func FuzzParseHost(f *testing.F) {
	for _, s := range []string{"example.com", "bücher.de", "xn--bcher-kva.de", "127.0.0.1", "::1", "a..b", "xn--zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := parseHost(s)
		if err != nil {
			return
		}
		// A normalized name is a fixed point: checking and resolving see
		// the same string.
		h2, err := parseHost(h.String())
		if err != nil || h2 != h {
			t.Errorf("parseHost(%q) = %q, but parseHost of that = %q, %v", s, h, h2, err)
		}
	})
}

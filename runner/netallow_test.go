package runner

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/forgebox/forgebox/netproxy"
	"github.com/forgebox/forgebox/policy"
)

func TestAllowlist(t *testing.T) {
	dir := t.TempDir()
	hosts := filepath.Join(dir, "hosts")
	os.WriteFile(hosts, []byte("# test names\n127.0.0.1 api.test Other.Test\n::1 api.test\n"), 0o644)
	a, err := Allowlist([]string{"api.test"}, policy.Network{Allow: []string{"*.cfg.test"}, Deny: []string{"bad.cfg.test"},
		AllowPrivate: []string{"127.0.0.0/8", "::1"}, Hosts: hosts}, []string{filepath.Join(dir, "ws")})
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]bool{"api.test": true, "x.cfg.test": true, "bad.cfg.test": false, "cfg.test": false, "other.test": false} {
		if got := a.Rules.Check(host, 443) == nil; got != want {
			t.Errorf("%s allowed = %v, want %v", host, got, want)
		}
	}
	if got := a.Options.Hosts["other.test"]; !slices.Equal(got, []netip.Addr{netip.MustParseAddr("127.0.0.1")}) {
		t.Errorf("hosts file: other.test -> %v", got)
	}
	if got := a.Options.Hosts["api.test"]; len(got) != 2 {
		t.Errorf("hosts file: api.test -> %v, want both addresses", got)
	}
	if len(a.Options.AllowPrivate) != 2 || a.Options.AllowPrivate[1] != netip.MustParsePrefix("::1/128") {
		t.Errorf("allowPrivate = %v", a.Options.AllowPrivate)
	}

	// A hosts file the command could rewrite steers nothing.
	if _, err := Allowlist(nil, policy.Network{Hosts: hosts}, []string{"/nonexistent", dir}); err == nil || !strings.Contains(err.Error(), "which the command can write") {
		t.Errorf("a hosts file in a writable root: %v", err)
	}

	// Bad input refuses the run, naming what is wrong.
	os.WriteFile(filepath.Join(dir, "bad-hosts"), []byte("127.0.0.1 ok.test\nnot-an-address x.test\n"), 0o644)
	for _, c := range []struct {
		flag []string
		n    policy.Network
		want string
	}{
		{[]string{"exa mple.com"}, policy.Network{}, `allow pattern "exa mple.com"`},
		{nil, policy.Network{Deny: []string{"*"}}, `deny pattern "*"`},
		{nil, policy.Network{AllowPrivate: []string{"10.0.0.0/33"}}, "allowPrivate"},
		{nil, policy.Network{Hosts: filepath.Join(dir, "missing")}, "network.hosts"},
		{nil, policy.Network{Hosts: filepath.Join(dir, "bad-hosts")}, "line 2"},
	} {
		if _, err := Allowlist(c.flag, c.n, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Allowlist(%q, %+v) = %v, want an error with %q", c.flag, c.n, err, c.want)
		}
	}
}

// A bad host pattern in a configuration file is an error naming the file,
// line and column, when the file loads.
func TestParseConfigNetworkPatterns(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{"{\"forgebox\": {\"network\": {\n  \"allow\": [\"ok.test\", \"exa mple.com\"]}}}", `c.json:2:24: network: allow pattern "exa mple.com"`},
		{`{"forgebox": {"network": {"deny": ["*"]}}}`, `c.json:1:36: network: deny pattern "*"`},
	} {
		_, err := ParseConfig("c.json", []byte(c.data))
		var ce *policy.ConfigError
		if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("ParseConfig(%s) = %v; want %s...", c.data, err, c.want)
		}
	}
	if _, err := ParseConfig("c.json", []byte(`{"forgebox": {"network": {"allow": ["*.ok.test:443"], "deny": ["x.ok.test"]}}}`)); err != nil {
		t.Errorf("good patterns: %v", err)
	}
}

func TestNetAdvice(t *testing.T) {
	if got := netAdvice(&netproxy.Denial{Code: netproxy.CodeNotAllowed, Host: "x.test", Port: 80, Ports: []uint16{443}}); !strings.Contains(got, "--net allow=x.test:80") {
		t.Errorf("advice for another port: %q", got)
	}
	if got := netAdvice(&netproxy.Denial{Code: netproxy.CodeIPLiteral, Host: "2001:db8::1", Port: 443, Ports: []uint16{80}}); !strings.Contains(got, "--net allow=[2001:db8::1]:443") {
		t.Errorf("advice for an IPv6 address: %q", got)
	}
}

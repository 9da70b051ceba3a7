package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/forgebox/forgebox/sandbox"
)

func TestNetFlag(t *testing.T) {
	for _, c := range []struct {
		sets  []string
		mode  string
		allow []string
		bad   string // a substring of the error, for the last Set
	}{
		{sets: []string{"none"}, mode: "none"},
		{sets: []string{"host"}, mode: "host"},
		{sets: []string{"allow"}, mode: "allow"},
		{sets: []string{"allow="}, mode: "allow"},
		{sets: []string{"allow=a.test, *.b.test,,c.test:443"}, mode: "allow", allow: []string{"a.test", "*.b.test", "c.test:443"}},
		{sets: []string{"allow=a.test", "allow=b.test"}, mode: "allow", allow: []string{"a.test", "b.test"}},
		{sets: []string{"host", "host"}, mode: "host"},
		{sets: []string{"none", "allow=a.test"}, bad: "contradicts"},
		{sets: []string{"allow=a.test", "host"}, bad: "contradicts"},
		{sets: []string{"hots"}, bad: "invalid network mode"},
		{sets: []string{"deny=a.test"}, bad: "invalid network mode"},
		{sets: []string{"host=x"}, bad: "invalid network mode"},
	} {
		var n netFlag
		var err error
		for _, s := range c.sets {
			if err = n.Set(s); err != nil {
				break
			}
		}
		switch {
		case c.bad != "" && (err == nil || !strings.Contains(err.Error(), c.bad)):
			t.Errorf("%q: error %v, want one with %q", c.sets, err, c.bad)
		case c.bad == "" && err != nil:
			t.Errorf("%q: %v", c.sets, err)
		case c.bad == "" && (n.mode != c.mode || !slices.Equal(n.allow, c.allow)):
			t.Errorf("%q: mode %q allow %q, want %q %q", c.sets, n.mode, n.allow, c.mode, c.allow)
		}
	}
}

func TestRefusedConnections(t *testing.T) {
	conns := []sandbox.Connection{
		{Host: "a.test", Port: 443, Decision: "allowed"},
		{Host: "b.test", Port: 443, Decision: "denied", Code: "not-allowed", Reason: "b.test is not in the network allowlist", Advice: "to allow it, run with --net allow=b.test"},
		{Host: "b.test", Port: 443, Decision: "denied", Code: "not-allowed", Reason: "b.test is not in the network allowlist", Advice: "to allow it, run with --net allow=b.test"},
		{Host: "c.test", Port: 80, Decision: "denied", Code: "not-allowed", Reason: "c.test is not in the network allowlist"},
		{Host: "d.test", Port: 80, Decision: "denied", Code: "not-allowed", Reason: "d.test is not in the network allowlist"},
	}
	lines := refusedConnections(conns, 2)
	if len(lines) != 3 || !strings.Contains(lines[0], "b.test") || !strings.Contains(lines[0], "--net allow=b.test") ||
		!strings.Contains(lines[1], "c.test") || !strings.Contains(lines[2], "1 more") {
		t.Errorf("refusedConnections = %q", lines)
	}
}

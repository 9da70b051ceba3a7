package runner

import (
	"strings"
	"testing"

	"github.com/forgebox/forgebox/history"
	"github.com/forgebox/forgebox/policy"
	"github.com/forgebox/forgebox/sandbox"
)

func TestPermissionStatus(t *testing.T) {
	allow := func(r *policy.RuleRef) *policy.Decision {
		return &policy.Decision{Action: policy.Allow, Level: policy.R0, Rule: r}
	}
	ask := &policy.Decision{Action: policy.Ask, Level: policy.R1, Rule: &policy.RuleRef{Kind: "threshold", Source: "default"}}
	tests := []struct {
		name          string
		d             *policy.Decision
		g             Grant
		status, scope string
	}{
		{"no judge", nil, Grant{}, history.PermNotJudged, ""},
		{"thresholds", allow(nil), Grant{}, history.PermAutoApproved, ""},
		{"allow rule", allow(&policy.RuleRef{Kind: "allow", Source: "/home/u/.config/forgebox/config.json", Pattern: "make *"}), Grant{}, history.PermGranted, "permanent"},
		{"session approval", allow(&policy.RuleRef{Kind: "allow", Source: "session", Pattern: "make deploy"}), Grant{}, history.PermGranted, "session"},
		{"denied", &policy.Decision{Action: policy.Deny, Level: policy.R4, Rule: &policy.RuleRef{Kind: "builtin"}}, Grant{}, history.PermDenied, ""},
		{"--yes", ask, Grant{Asked: true, Approved: true, Scope: policy.Once}, history.PermAskedApproved, "once"},
		{"session at the prompt", ask, Grant{Asked: true, Approved: true, Scope: policy.Session}, history.PermAskedApproved, "session"},
		{"always at the prompt", ask, Grant{Asked: true, Approved: true, Scope: policy.Always}, history.PermAskedApproved, "permanent"},
		{"no at the prompt", ask, Grant{Asked: true}, history.PermAskedDenied, ""},
		{"no terminal", ask, Grant{}, history.PermAskedDenied, ""},
	}
	for _, tt := range tests {
		status, scope := PermissionStatus(tt.d, tt.g)
		if status != tt.status || scope != tt.scope {
			t.Errorf("PermissionStatus(%s) = %s, %q; want %s, %q", tt.name, status, scope, tt.status, tt.scope)
		}
	}
}

func TestClip(t *testing.T) {
	c := sandbox.Captured{Head: []byte("0123456789é"), Tail: []byte("ABCDEFGHIJ"), Total: 1000}
	c.Omitted = c.Total - int64(len(c.Head)+len(c.Tail))
	got := clip(c, 8)
	if string(got.Head) != "0123" || string(got.Tail) != "GHIJ" || got.Total != 1000 || got.Omitted != 992 {
		t.Errorf("clip = head %q tail %q total %d omitted %d", got.Head, got.Tail, got.Total, got.Omitted)
	}
	// A cut inside a character moves to its start.
	c = sandbox.Captured{Head: []byte("ééééé"), Total: 10}
	got = clip(c, 5)
	if !strings.HasPrefix("ééééé", string(got.Head)) || got.Omitted != 10-int64(len(got.Head)+len(got.Tail)) || len(got.Head)%2 != 0 {
		t.Errorf("clip inside a character = head %q tail %q", got.Head, got.Tail)
	}
	small := sandbox.Captured{Head: []byte("hi"), Total: 2}
	if got := clip(small, 8); string(got.Head) != "hi" || got.Omitted != 0 {
		t.Errorf("clip(small) = %+v", got)
	}
}

package policy

import (
	"fmt"
	"slices"
	"strings"
)

// Mode says what runs without a rule.
type Mode int

// Modes. In allowlist mode only programs an allow rule lists may run, in
// exec form only: a shell command line is denied.
const (
	Normal Mode = iota
	Allowlist
)

func (m Mode) String() string {
	if m == Allowlist {
		return "allowlist"
	}
	return "normal"
}

// Thresholds map a risk score to an action: a score up to AutoApprove runs,
// up to SessionApprove is approved once per session, below Block is asked
// every time, and from Block on it is denied. AlwaysAsk names the top of
// the asked-every-time band for configurations that spell it out; it must
// lie below Block, and a score between it and Block is asked every time
// as well (nothing is silently allowed in a gap).
type Thresholds struct {
	AutoApprove    int `json:"autoApprove"`
	SessionApprove int `json:"sessionApprove"`
	AlwaysAsk      int `json:"alwaysAsk"`
	Block          int `json:"block"`
}

// DefaultThresholds are R0 0-2, R1 3-4, R2 5, R3 6-7, R4 8-10.
var DefaultThresholds = Thresholds{AutoApprove: 2, SessionApprove: 5, AlwaysAsk: 7, Block: 8}

func (t Thresholds) validate() error {
	if !(0 <= t.AutoApprove && t.AutoApprove < t.SessionApprove && t.SessionApprove <= t.AlwaysAsk &&
		t.AlwaysAsk < t.Block && t.Block <= 10) {
		return fmt.Errorf("riskThresholds must satisfy 0 <= autoApprove < sessionApprove <= alwaysAsk < block <= 10, got %d, %d, %d, %d",
			t.AutoApprove, t.SessionApprove, t.AlwaysAsk, t.Block)
	}
	return nil
}

// level is the band a score falls in under these thresholds.
func (t Thresholds) level(risk int) Level {
	switch {
	case risk <= t.AutoApprove:
		return R0
	case risk < t.SessionApprove:
		return R1
	case risk == t.SessionApprove:
		return R2
	case risk < t.Block:
		return R3
	}
	return R4
}

// Policy is a loaded configuration: the user's, possibly tightened by a
// workspace's.
type Policy struct {
	Mode       Mode
	Thresholds Thresholds
	Allow      []Rule
	Ask        []Rule
	Deny       []Rule
	// Tighter are the ask rules of configurations that may only tighten
	// (a workspace's): they turn an allow into an ask, never an ask or a
	// deny into anything looser.
	Tighter []Rule
	// Files are the configuration files the policy was read from.
	Files []string
	// History holds the configuration's history settings; the judge does
	// not use them, the file just keeps all of forgebox's settings.
	History History
	// Network is the allowlist of `forgebox run --net allow`; the judge
	// does not use it either.
	Network Network
}

// Network is the "network" section of a configuration file: what a
// command run with --net allow may reach, besides the hosts the flag
// names. A workspace's configuration may add deny patterns only.
type Network struct {
	// Allow and Deny are host patterns (see netproxy.Rules): example.com,
	// *.example.com, example.com:443, 192.0.2.7.
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
	// AllowPrivate are the otherwise refused address ranges (loopback,
	// private, link-local, ...) an allowed name may resolve into, as
	// prefixes (10.0.0.0/8) or single addresses.
	AllowPrivate []string `json:"allowPrivate,omitempty"`
	// Hosts is a file in the format of /etc/hosts that the proxy consults
	// before DNS (absolute path).
	Hosts string `json:"hosts,omitempty"`
}

// History is the "history" section of a configuration file.
type History struct {
	// Enabled false turns recording off; nil leaves it on.
	Enabled *bool `json:"enabled,omitempty"`
	// KeepDays and KeepRows bound what is kept (0: the default).
	KeepDays int `json:"keepDays,omitempty"`
	KeepRows int `json:"keepRows,omitempty"`
}

// Default is the policy without any configuration file: the built-in
// knowledge and the default thresholds.
func Default() *Policy {
	return &Policy{Thresholds: DefaultThresholds}
}

// Tighten returns p with ws applied as a configuration that may only
// tighten: ws's deny and ask rules are added, its thresholds can only be
// lowered, allowlist mode can be switched on but not off. ws's allow rules
// are ignored; the returned warnings say so.
func (p *Policy) Tighten(ws *Policy) (*Policy, []string) {
	out := *p
	out.Deny = append(append([]Rule{}, p.Deny...), ws.Deny...)
	out.Tighter = append(append(append([]Rule{}, p.Tighter...), ws.Ask...), ws.Tighter...)
	out.Files = append(append([]string{}, p.Files...), ws.Files...)
	// A workspace may turn recording on, never off: the record is the
	// user's, and the agent writes the workspace.
	if ws.History.Enabled != nil && *ws.History.Enabled {
		out.History.Enabled = ws.History.Enabled
	}
	if ws.Mode == Allowlist {
		out.Mode = Allowlist
	}
	t := &out.Thresholds
	t.AutoApprove = min(t.AutoApprove, ws.Thresholds.AutoApprove)
	t.SessionApprove = min(t.SessionApprove, ws.Thresholds.SessionApprove)
	t.AlwaysAsk = min(t.AlwaysAsk, ws.Thresholds.AlwaysAsk)
	t.Block = min(t.Block, ws.Thresholds.Block)
	var warnings []string
	for _, r := range ws.Allow {
		warnings = append(warnings, fmt.Sprintf("%s: allow rule %q ignored: a configuration inside the workspace can only tighten the policy", r.Source, r.Text()))
	}
	out.Network.Deny = append(slices.Clone(p.Network.Deny), ws.Network.Deny...)
	if n := ws.Network; len(n.Allow) > 0 || len(n.AllowPrivate) > 0 || n.Hosts != "" {
		warnings = append(warnings, fmt.Sprintf("%s: network allow, allowPrivate and hosts ignored: a configuration inside the workspace can only tighten the policy (network deny applies)", strings.Join(ws.Files, ", ")))
	}
	return &out, warnings
}

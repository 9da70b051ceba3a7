package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"

	"github.com/forgebox/forgebox/netproxy"
	"github.com/forgebox/forgebox/pathtree"
	"github.com/forgebox/forgebox/policy"
	"github.com/forgebox/forgebox/sandbox"
)

// allowlist builds the network of --net allow: the hosts the flags name
// plus the configuration's, its deny patterns, private ranges and hosts
// file. A bad pattern or an unreadable hosts file refuses the run, and so
// does a hosts file in one of the run's writable roots: the command could
// rewrite it and point an allowed name anywhere for the next run.
func allowlist(flagAllow []string, n policy.Network, writable []string) (*sandbox.Allowlist, error) {
	allow := slices.Concat(flagAllow, n.Allow)
	rules, err := netproxy.Parse(allow, n.Deny)
	if err != nil {
		return nil, sandbox.Invalidf("--net allow: %v", err)
	}
	private, err := n.Prefixes()
	if err != nil {
		return nil, sandbox.Invalidf("network.allowPrivate: %v", err)
	}
	opts := netproxy.Options{AllowPrivate: private, Advice: netAdvice}
	if n.Hosts != "" {
		for _, w := range writable {
			if pathtree.Within(resolvePath(n.Hosts), resolvePath(w)) {
				return nil, sandbox.Invalidf("network.hosts %s lies in %s, which the command can write: move it out", n.Hosts, w)
			}
		}
		data, err := readSmallFile(n.Hosts)
		if err != nil {
			return nil, sandbox.Invalidf("network.hosts: %v", err)
		}
		if opts.Hosts, err = netproxy.ParseHosts(data); err != nil {
			return nil, sandbox.Invalidf("network.hosts %s: %v", n.Hosts, err)
		}
	}
	return &sandbox.Allowlist{Rules: rules, Options: opts}, nil
}

// netAdvice tells whoever reads a refusal (the command's client, the
// agent, the person) how to allow what was refused.
func netAdvice(d *netproxy.Denial) string {
	switch d.Code {
	case netproxy.CodeNotAllowed, netproxy.CodeIPLiteral:
		host := d.Host
		if len(d.Ports) > 0 {
			// The host is allowed, on other ports: allow this one.
			host = net.JoinHostPort(d.Host, strconv.Itoa(int(d.Port)))
		}
		return fmt.Sprintf("to allow it, run with --net allow=%s or add %q to network.allow in forgebox's configuration", host, host)
	case netproxy.CodeDenyRule:
		return "a network.deny pattern of forgebox's configuration refuses it"
	case netproxy.CodeRefusedAddress:
		return "the name resolves to a loopback, private or link-local address; list the range in network.allowPrivate of forgebox's configuration if that is intended"
	}
	return ""
}

// configuredAllowlist is allowlist for a run without a judge (--no-policy):
// the configuration is read for its network section alone. Its warnings
// (a workspace configuration's allow ignored) are returned, to be said as
// a judged run says them.
func configuredAllowlist(f runFlags) (*sandbox.Allowlist, []string, error) {
	h, err := currentHost()
	if err != nil {
		return nil, nil, &policyError{err}
	}
	o := f.pol
	o.workspace = f.workspace
	js, err := loadJudge(h, o)
	if err != nil {
		return nil, nil, &policyError{err}
	}
	al, err := allowlist(f.network.allow, js.engine.Policy().Network, append([]string{js.ctx.Workspace}, f.rw...))
	return al, js.warnings, err
}

// refusedConnections says, once per host and port, which connections the
// allowlist refused, at most max lines: the command's own message (curl's
// "response 403") does not say why.
func refusedConnections(conns []sandbox.Connection, max int) []string {
	var lines []string
	seen := map[string]bool{}
	more := 0
	for _, c := range conns {
		if c.Decision != string(netproxy.Denied) {
			continue
		}
		key := net.JoinHostPort(c.Host, strconv.Itoa(int(c.Port)))
		if seen[key] {
			continue
		}
		seen[key] = true
		if len(lines) == max {
			more++
			continue
		}
		line := "network: refused " + c.Reason
		if c.Advice != "" {
			line += "; " + c.Advice
		}
		lines = append(lines, line)
	}
	if more > 0 {
		lines = append(lines, fmt.Sprintf("network: and %d more refused destinations (forgebox run --json lists them)", more))
	}
	return lines
}

// parseConfig reads a configuration file, and checks its network section's
// host patterns as the proxy will read them, so that a bad one is an error
// naming the file and line when it loads, like the rest of the file.
func parseConfig(name string, data []byte) (*policy.Policy, error) {
	pol, err := policy.ParseConfig(name, data)
	if err != nil {
		return nil, err
	}
	_, err = netproxy.Parse(pol.Network.Allow, pol.Network.Deny)
	var pe *netproxy.PatternError
	if err == nil {
		return pol, nil
	} else if !errors.As(err, &pe) {
		return nil, err
	}
	e := &policy.ConfigError{File: name, Msg: "network: " + pe.Error()}
	if q, qerr := json.Marshal(pe.Pattern); qerr == nil {
		if i := bytes.Index(data, q); i >= 0 {
			e.Line = 1 + bytes.Count(data[:i], []byte("\n"))
			e.Column = i - bytes.LastIndexByte(data[:i], '\n')
		}
	}
	return nil, e
}

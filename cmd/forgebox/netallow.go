package main

import (
	"fmt"
	"net"
	"strconv"

	"github.com/forgebox/forgebox/netproxy"
	"github.com/forgebox/forgebox/runner"
	"github.com/forgebox/forgebox/sandbox"
)

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

// configuredAllowlist is the allowlist of a run with these flags, read
// from the configuration alone.
func configuredAllowlist(f runFlags, spec sandbox.Spec) (*sandbox.Allowlist, []string, error) {
	h, err := runner.CurrentHost()
	if err != nil {
		return nil, nil, &runner.PolicyError{Err: err}
	}
	req := f.request(spec, h)
	return runner.ConfiguredAllowlist(h, req.Policy, f.network.allow, f.rw)
}

package netproxy

import (
	"fmt"
	"strconv"
	"strings"
)

// Code is a stable identifier for why a connection was refused or failed,
// for programs (agents) to branch on; the wording of messages may change.
type Code string

// Refusals: the proxy decided not to connect.
const (
	CodeNotAllowed       Code = "not-allowed"            // no allow pattern matches the host and port
	CodeDenyRule         Code = "deny-rule"              // a deny pattern matches
	CodeIPLiteral        Code = "ip-literal"             // an IP address no allow pattern names exactly
	CodeInvalidHost      Code = "invalid-host"           // not a valid host name or IP address
	CodeRefusedAddress   Code = "refused-address"        // the name resolves only to refused ranges (loopback, private, ...)
	CodeSNIMismatch      Code = "sni-mismatch"           // the TLS server name is not the host the tunnel was opened for
	CodeEncryptedHello   Code = "encrypted-client-hello" // TLS ECH hides the server name
	CodeBadRequest       Code = "bad-request"            // malformed or truncated protocol input
	CodeHeaderTooLarge   Code = "header-too-large"       // request header over Options.MaxHeaderBytes
	CodeUnsupported      Code = "unsupported"            // a request the proxy does not serve (SOCKS BIND, https:// forwarding, ...)
	CodeTooManyConns     Code = "too-many-connections"   // over Options.MaxConns
	CodeHandshakeTimeout Code = "handshake-timeout"      // no complete request within Options.HandshakeTimeout
)

// Failures: the proxy allowed the connection but could not complete it, or
// ended it.
const (
	CodeResolveFailed Code = "resolve-failed"
	CodeConnectFailed Code = "connect-failed"
	CodeRelay         Code = "relay-error" // the exchange broke off midway (either side)
	CodeIdleTimeout   Code = "idle-timeout"
	CodeProxyClosed   Code = "proxy-closed"
)

// Denial is a refusal with what it concerns; it is the error Rules.Check
// returns and what the proxy reports to clients and in Events.
type Denial struct {
	Code   Code
	Host   string   // normalized when valid; as received otherwise
	Port   uint16   // 0 when unknown
	Rule   string   // the deny pattern, for CodeDenyRule
	Ports  []uint16 // for CodeNotAllowed: the ports the host is allowed on, if any
	Detail string   // more facts, for the message
}

func (d *Denial) Error() string {
	h := d.Host
	if d.Code == CodeInvalidHost || d.Code == CodeBadRequest || d.Code == CodeUnsupported {
		h = strconv.QuoteToASCII(h)
	}
	var msg string
	switch d.Code {
	case CodeNotAllowed:
		msg = h + " is not in the network allowlist"
		if len(d.Ports) > 0 {
			msg = joinHostPort(h, d.Port) + " is not in the network allowlist: " + h + " is allowed on port"
			if len(d.Ports) > 1 {
				msg += "s"
			}
			for i, p := range d.Ports {
				if i > 0 {
					msg += ","
				}
				msg += " " + strconv.Itoa(int(p))
			}
			msg += " only"
		}
	case CodeDenyRule:
		msg = fmt.Sprintf("%s is denied by the network rule deny=%s", h, d.Rule)
	case CodeIPLiteral:
		msg = h + " is an IP address not listed in the network allowlist (only addresses listed exactly are allowed)"
	case CodeInvalidHost:
		msg = h + " is not a valid host name or IP address"
	case CodeRefusedAddress:
		msg = h + " resolves only to addresses forgebox refuses (DNS rebinding defense)"
	case CodeSNIMismatch:
		msg = "the TLS server name does not match the requested host " + h
	case CodeEncryptedHello:
		msg = "the TLS ClientHello to " + h + " is encrypted (ECH): the server name cannot be checked"
	case CodeBadRequest:
		msg = "bad request"
		if d.Host != "" {
			msg += " for " + h
		}
	case CodeHeaderTooLarge:
		msg = "request header too large"
	case CodeUnsupported:
		msg = "unsupported request"
		if d.Host != "" {
			msg += " for " + h
		}
	case CodeTooManyConns:
		msg = "too many connections to the proxy"
	case CodeHandshakeTimeout:
		msg = "request timeout"
	default:
		msg = string(d.Code)
		if d.Host != "" {
			msg += " (" + h + ")"
		}
	}
	if d.Detail != "" {
		msg += ": " + d.Detail
	}
	return msg
}

// defaultAdvice says how to allow what was refused, in words that do not
// assume a command line; Options.Advice replaces it.
func defaultAdvice(d *Denial) string {
	switch d.Code {
	case CodeNotAllowed, CodeIPLiteral:
		if len(d.Ports) > 0 {
			return "add " + joinHostPort(d.Host, d.Port) + " to the network allowlist"
		}
		return "add " + d.Host + " to the network allowlist"
	case CodeDenyRule:
		return "remove the deny rule " + d.Rule
	case CodeRefusedAddress:
		return "allow the address range explicitly if this is intended"
	}
	return ""
}

// headerSafe makes s fit in an HTTP header value: printable ASCII only.
func headerSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r > '~' {
			return '?'
		}
		return r
	}, s)
}

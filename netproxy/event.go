package netproxy

import (
	"net/netip"
	"time"
)

// Protocol is how a client asked for a destination.
type Protocol string

const (
	ProtoHTTP    Protocol = "http"    // a plain HTTP request forwarded by the proxy
	ProtoConnect Protocol = "connect" // an HTTP CONNECT tunnel
	ProtoSOCKS5  Protocol = "socks5"  // a SOCKS5 CONNECT tunnel
)

// Decision is the allowlist's verdict.
type Decision string

const (
	Allowed Decision = "allowed"
	Denied  Decision = "denied"
)

// Event describes one tunnel (CONNECT, SOCKS5) or one forwarded HTTP
// request, or a client connection refused before it named a destination
// (then Host is empty). It is reported once, when the tunnel or exchange
// ends. A connection closed before it sent a byte is not reported.
//
// Decision is the allowlist's verdict; an allowed connection can still fail
// (Code CodeResolveFailed, CodeConnectFailed, ...) or be ended by a later
// check (CodeSNIMismatch turns the Decision to Denied).
type Event struct {
	Time      time.Time // when the request arrived
	Protocol  Protocol  // "" when the client sent nothing recognizable
	Host      string    // as normalized: lower-case ASCII name or IP address
	Port      uint16
	Addr      netip.Addr // the address connected to; invalid when none
	Decision  Decision
	Code      Code   // "" for a clean allowed exchange
	Reason    string // human-readable, for logs
	BytesUp   int64  // client to server, payload only (tunnel bytes; for HTTP the request as sent upstream)
	BytesDown int64  // server to client (tunnel bytes; for HTTP the response as received)
	Duration  time.Duration
	// Advice, for a refusal, is how to allow it (Options.Advice), as the
	// client was told.
	Advice string

	err error // what ended it, for Advice
}

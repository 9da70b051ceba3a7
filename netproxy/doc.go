// Package netproxy is forgebox's network allowlist: an HTTP proxy (CONNECT
// tunnels and absolute-form forwarding) and a SOCKS5 proxy on one listener,
// which connect only to the hosts and ports a Rules allows. The sandbox
// places the listener in the command's network namespace, which has no
// other way out, and points HTTP_PROXY, HTTPS_PROXY and ALL_PROXY at it.
//
// Guarantees:
//   - A request is checked against the rules before anything else: nothing
//     is resolved or connected for a denied request. Deny patterns win over
//     allow patterns; an empty allow list allows nothing.
//   - The proxy resolves names itself and connects to an address it
//     resolved, never to one the client chose. A name that resolves only
//     into loopback, link-local, private, CGNAT, unspecified, multicast or
//     reserved ranges is refused unless Options.AllowPrivate covers the
//     address (DNS rebinding). An IP address is reachable only when an
//     allow pattern names it exactly; it is then exempt from the range
//     check, because the user, not a DNS answer, chose it.
//   - In a tunnel to a name, a TLS ClientHello's server name (SNI) must be
//     that name; a ClientHello with encrypted_client_hello (ECH, including
//     Chrome's GREASE) or that does not parse is refused, since it would
//     hide the name. A tunnel to an allowed IP address is not checked: the
//     permission is for the address, whatever names it serves.
//   - A forwarded HTTP request goes out with the Host the rules checked; a
//     Host header that disagrees with the URL is refused.
//   - Refusals tell the client what was refused and how to allow it: an
//     HTTP 403 (or 400, 502, ...) with X-Forgebox-Reason and a stable
//     X-Forgebox-Code, SOCKS5 reply 0x02 (not allowed by ruleset); and the
//     Log callback gets one Event per tunnel or request.
//   - Resources are bounded: header sizes, concurrent connections,
//     handshake and idle timeouts. Close ends every listener, connection and
//     tunnel and returns when their goroutines have.
//
// Not guaranteed:
//   - What travels inside an allowed tunnel is not inspected: an HTTP Host
//     header inside TLS (domain fronting on a CDN that serves both names),
//     or any protocol to an allowed host:port, passes. Allow hosts you
//     would let the command talk to in any way.
//   - A client that sends no SNI is not checked beyond the CONNECT name;
//     TLS connection coalescing in the client is invisible to the proxy.
//   - Allowed names are only as trustworthy as the resolver: the proxy
//     prevents resolutions into refused ranges, not a poisoned public
//     answer. NAT64 and 6to4 addresses that embed a private IPv4 address
//     are not recognized.
//   - Only the client side of the sandbox is covered: the proxy runs
//     outside it, and whoever can reach its listener from elsewhere can use
//     it. Bind it only inside the sandbox's namespace.
//   - International names are folded and Punycode-encoded without Unicode
//     normalization (see toASCII): a name written in decomposed form gets
//     a different, usually nonexistent, ASCII name. Write such patterns in
//     their xn-- form.
package netproxy

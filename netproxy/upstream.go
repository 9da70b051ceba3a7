package netproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"
)

// dialUpstream connects to an allowed destination. A name is resolved here
// (Hosts, then the Resolver) and only its addresses outside the refused
// ranges are tried; an IP literal, which an allow pattern named exactly, is
// dialed as is. Call it only after the rules allowed h:port.
//
// It returns a *Denial (CodeRefusedAddress) or a *failure on error.
func (s *session) dialUpstream(h host, port uint16) (net.Conn, netip.Addr, error) {
	ctx, cancel := context.WithTimeout(s.ctx, s.p.opts.ConnectTimeout)
	defer cancel()
	addrs := []netip.Addr{h.ip}
	if !h.ip.IsValid() {
		var err error
		if addrs, err = s.p.permitted(ctx, h, port); err != nil {
			return nil, netip.Addr{}, err
		}
	}
	var errs []error
	for i, a := range addrs {
		// Leave every address a share of the time, as net.Dialer does.
		actx, acancel := ctx, context.CancelFunc(func() {})
		if dl, ok := ctx.Deadline(); ok && len(addrs)-i > 1 {
			share := max(time.Until(dl)/time.Duration(len(addrs)-i), 2*time.Second)
			actx, acancel = context.WithTimeout(ctx, share)
		}
		c, err := s.p.opts.Dial(actx, "tcp", netip.AddrPortFrom(a, port).String())
		acancel()
		if err == nil {
			if !s.track(c) {
				return nil, netip.Addr{}, &failure{code: s.abortCode(), err: errors.New(string(s.abortCode()))}
			}
			return c, a, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	if c := s.abortCode(); c != "" {
		return nil, netip.Addr{}, &failure{code: c, err: errors.New(string(c))}
	}
	return nil, netip.Addr{}, &failure{code: CodeConnectFailed, err: fmt.Errorf("connect to %s: %w", joinHostPort(h.String(), port), errors.Join(errs...))}
}

// permitted resolves h and keeps the addresses it may connect to.
func (p *Proxy) permitted(ctx context.Context, h host, port uint16) ([]netip.Addr, error) {
	all, ok := p.hosts[h.name]
	if !ok {
		var err error
		all, err = p.opts.Resolver.LookupNetIP(ctx, "ip", h.name+".")
		if err != nil {
			var dnsErr *net.DNSError
			if errors.As(err, &dnsErr) {
				err = errors.New(dnsErr.Err) // its Error() repeats the name
			}
			return nil, &failure{code: CodeResolveFailed, err: fmt.Errorf("resolve %s: %w", h.name, err)}
		}
	}
	var usable []netip.Addr
	var refused []string
	for _, a := range all {
		a = a.Unmap()
		if r := refusedRange(a); r != "" && !p.allowPrivate(a) {
			refused = append(refused, a.String()+" is "+r)
			continue
		}
		usable = append(usable, a)
	}
	if len(usable) > 0 {
		return usable, nil
	}
	if len(refused) == 0 {
		return nil, &failure{code: CodeResolveFailed, err: fmt.Errorf("resolve %s: no addresses", h.name)}
	}
	if len(refused) > 3 {
		refused = append(refused[:3], fmt.Sprintf("and %d more", len(refused)-3))
	}
	return nil, &Denial{Code: CodeRefusedAddress, Host: h.name, Port: port, Detail: strings.Join(refused, "; ")}
}

package netproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"
)

// ErrClosed is what Serve returns once Close has been called.
var ErrClosed = errors.New("proxy closed")

// Resolver looks up a host name; *net.Resolver satisfies it. The proxy asks
// for rooted names ("example.com."), so that resolv.conf search domains never
// change which host a checked name reaches.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options tune a Proxy. The zero value is usable: it resolves with
// net.DefaultResolver, dials with a net.Dialer and applies the defaults below.
type Options struct {
	// Resolver resolves names not in Hosts; nil means net.DefaultResolver.
	Resolver Resolver
	// Hosts maps names (as a pattern would write them) to addresses and
	// is consulted before the Resolver, like /etc/hosts. Its answers are
	// subject to the same refused-range check as DNS answers.
	Hosts map[string][]netip.Addr
	// Dial connects to an IP address and port ("192.0.2.1:443"); nil means
	// a net.Dialer. The proxy relays with splice(2) when both ends are
	// *net.TCPConn.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// AllowPrivate lists ranges a resolved name may point into although
	// they are refused by default: loopback, link-local, private (RFC 1918,
	// fc00::/7), CGNAT (100.64.0.0/10), 0.0.0.0/8, unspecified, multicast,
	// 240.0.0.0/4 and fec0::/10. An IP address an allow pattern names
	// exactly needs no entry here.
	AllowPrivate []netip.Prefix

	// ConnectTimeout bounds name resolution plus connecting (default 10s).
	ConnectTimeout time.Duration
	// HandshakeTimeout bounds reading a request's header or a SOCKS5
	// negotiation (default 10s).
	HandshakeTimeout time.Duration
	// IdleTimeout closes a connection, tunnel or keep-alive, on which no
	// byte moved in either direction for this long (default 5m).
	IdleTimeout time.Duration
	// MaxConns bounds concurrent client connections (default 256); a
	// connection over the limit is closed at once and logged.
	MaxConns int
	// MaxHeaderBytes bounds an HTTP request header (default 64 KiB). A
	// server's response header is bounded at 1 MiB.
	MaxHeaderBytes int

	// Log, if set, receives one Event per tunnel, per forwarded HTTP
	// request and per connection refused before it named a host. It is
	// called from many goroutines at once and must not block for long;
	// no call starts after Close returns.
	Log func(Event)
	// Advice, if set, returns how to allow what a Denial refused (for
	// example a command-line flag); it is appended to the reason a client
	// sees. Nil uses a neutral sentence.
	Advice func(*Denial) string
}

func (o Options) withDefaults() Options {
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	if o.Dial == nil {
		o.Dial = (&net.Dialer{}).DialContext
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = 10 * time.Second
	}
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = 10 * time.Second
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 5 * time.Minute
	}
	if o.MaxConns <= 0 {
		o.MaxConns = 256
	}
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = 64 << 10
	}
	if o.Advice == nil {
		o.Advice = defaultAdvice
	}
	return o
}

// Proxy serves HTTP (CONNECT and absolute-form forwarding) and SOCKS5 on
// the same listeners, connecting only where its Rules allow.
type Proxy struct {
	rules  *Rules
	opts   Options
	hosts  map[string][]netip.Addr
	ctx    context.Context // canceled by Close
	cancel context.CancelFunc

	mu        sync.Mutex
	closed    bool
	listeners map[net.Listener]struct{}
	sessions  map[*session]struct{}
	wg        sync.WaitGroup
}

// New returns a proxy enforcing rules; a nil rules allows nothing.
func New(rules *Rules, opts Options) *Proxy {
	if rules == nil {
		rules = &Rules{}
	}
	p := &Proxy{
		rules:     rules,
		opts:      opts.withDefaults(),
		hosts:     make(map[string][]netip.Addr, len(opts.Hosts)),
		listeners: make(map[net.Listener]struct{}),
		sessions:  make(map[*session]struct{}),
	}
	for name, addrs := range opts.Hosts {
		if h, err := parseHost(name); err == nil && h.name != "" {
			name = h.name
		}
		p.hosts[name] = append([]netip.Addr(nil), addrs...)
	}
	p.opts.AllowPrivate = nil
	for _, pf := range opts.AllowPrivate {
		if pf.Addr().Is4In6() && pf.Bits() >= 96 {
			pf = netip.PrefixFrom(pf.Addr().Unmap(), pf.Bits()-96)
		}
		p.opts.AllowPrivate = append(p.opts.AllowPrivate, pf.Masked())
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	return p
}

// Serve accepts connections on l until Close; it closes l when it returns.
// It may be called for several listeners at once.
func (p *Proxy) Serve(l net.Listener) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		l.Close()
		return ErrClosed
	}
	p.listeners[l] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.listeners, l)
		p.mu.Unlock()
		l.Close()
	}()
	var backoff time.Duration
	for {
		c, err := l.Accept()
		if err != nil {
			if p.isClosed() {
				return ErrClosed
			}
			// Out of file descriptors and the like: wait, as net/http does.
			if te, ok := err.(interface{ Temporary() bool }); ok && te.Temporary() {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				select {
				case <-time.After(backoff):
				case <-p.ctx.Done():
				}
				continue
			}
			return fmt.Errorf("accept on %s: %w", l.Addr(), err)
		}
		backoff = 0
		p.start(c)
	}
}

func (p *Proxy) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

func (p *Proxy) start(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return
	}
	p.wg.Add(1)
	if len(p.sessions) >= p.opts.MaxConns {
		go func() {
			defer p.wg.Done()
			c.Close()
			d := &Denial{Code: CodeTooManyConns, Detail: fmt.Sprintf("limit %d", p.opts.MaxConns)}
			p.log(Event{Time: time.Now(), Decision: Denied, Code: d.Code, Reason: d.Error(), err: d})
		}()
		return
	}
	s := newSession(p, c)
	p.sessions[s] = struct{}{}
	go func() {
		defer p.wg.Done()
		defer func() {
			p.mu.Lock()
			delete(p.sessions, s)
			p.mu.Unlock()
		}()
		s.serve()
	}()
}

// Close stops every listener given to Serve, ends every connection and
// tunnel, and waits for their goroutines (and Log calls) to finish.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.wg.Wait()
		return nil
	}
	p.closed = true
	p.cancel()
	var ls []net.Listener
	for l := range p.listeners {
		ls = append(ls, l)
	}
	var ss []*session
	for s := range p.sessions {
		ss = append(ss, s)
	}
	p.mu.Unlock()
	for _, l := range ls {
		l.Close()
	}
	for _, s := range ss {
		s.abort(CodeProxyClosed)
	}
	p.wg.Wait()
	return nil
}

func (p *Proxy) log(ev Event) {
	if p.opts.Log == nil {
		return
	}
	var d *Denial
	if errors.As(ev.err, &d) {
		ev.Advice = p.opts.Advice(d)
	}
	p.opts.Log(ev)
}

func (p *Proxy) allowPrivate(a netip.Addr) bool {
	for _, pf := range p.opts.AllowPrivate {
		if pf.Contains(a) {
			return true
		}
	}
	return false
}

// reason is the text a client sees for err: the cause and, for a Denial,
// how to allow it.
func (p *Proxy) reason(err error) string {
	msg := "forgebox: " + err.Error()
	var d *Denial
	if errors.As(err, &d) {
		if a := p.opts.Advice(d); a != "" {
			msg += "; " + a
		}
	}
	return msg
}

// failure is an allowed request that could not be completed.
type failure struct {
	code Code
	err  error
}

func (f *failure) Error() string { return f.err.Error() }
func (f *failure) Unwrap() error { return f.err }

func codeOf(err error) Code {
	var d *Denial
	if errors.As(err, &d) {
		return d.Code
	}
	var f *failure
	if errors.As(err, &f) {
		return f.code
	}
	return CodeRelay
}

// refusal reports whether code is a policy refusal rather than a failure.
func (c Code) refusal() bool {
	switch c {
	case CodeResolveFailed, CodeConnectFailed, CodeRelay, CodeIdleTimeout, CodeProxyClosed, "":
		return false
	}
	return true
}

// finish fills ev's verdict from err (nil: a clean exchange). A connection
// that never named a destination was allowed nothing: it is Denied whatever
// ended it.
func (ev *Event) finish(err error, start time.Time) {
	ev.Duration = time.Since(start)
	ev.Decision = Allowed
	if err == nil {
		return
	}
	ev.err = err
	ev.Code = codeOf(err)
	ev.Reason = err.Error()
	if ev.Code.refusal() || ev.Host == "" {
		ev.Decision = Denied
	}
}

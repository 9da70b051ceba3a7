package sandbox

import (
	"net"
	"os"
	"sync"

	"github.com/forgebox/forgebox/netproxy"
)

// runProxy is the allowlist proxy of one NetAllow run. It serves on a
// listener the sandbox child opened on its own loopback and handed over:
// the socket stays in the sandbox's network namespace, while the proxy,
// in forgebox's, connects out. The command has no other route.
type runProxy struct {
	px     *netproxy.Proxy
	served chan error
	closed sync.Once

	mu      sync.Mutex
	conns   []Connection
	omitted int
}

func newRunProxy(a *Allowlist) *runProxy {
	r := &runProxy{}
	var rules *netproxy.Rules
	var opts netproxy.Options
	if a != nil {
		rules, opts = a.Rules, a.Options
	}
	callerLog := opts.Log
	opts.Log = func(ev netproxy.Event) {
		r.record(ev)
		if callerLog != nil {
			callerLog(ev)
		}
	}
	r.px = netproxy.New(rules, opts)
	return r
}

// serve starts serving on the listener the child handed over; it takes f.
func (r *runProxy) serve(f *os.File) error {
	l, err := net.FileListener(f)
	f.Close()
	if err != nil {
		return err
	}
	r.served = make(chan error, 1)
	go func() { r.served <- r.px.Serve(l) }()
	return nil
}

// close ends every tunnel and returns the connections seen. By then the
// command's tree is dead, so its connections have ended already.
func (r *runProxy) close() ([]Connection, int) {
	r.closed.Do(func() {
		r.px.Close()
		if r.served != nil {
			<-r.served
		}
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.conns, r.omitted
}

func (r *runProxy) record(ev netproxy.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.conns) >= MaxConnections {
		r.omitted++
		return
	}
	c := Connection{Time: ev.Time, Protocol: string(ev.Protocol), Host: ev.Host, Port: ev.Port,
		Decision: string(ev.Decision), Code: string(ev.Code), Reason: ev.Reason,
		BytesUp: ev.BytesUp, BytesDown: ev.BytesDown, DurationMS: float64(ev.Duration.Microseconds()) / 1000}
	if ev.Addr.IsValid() {
		c.Addr = ev.Addr.String()
	}
	r.conns = append(r.conns, c)
}

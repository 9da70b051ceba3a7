package sandbox

import (
	"fmt"
	"net"
	"os"
	"strings"
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
	denied  int // refusals among conns
	omitted int
	failed  error // why serving stopped before the run ended
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

// maxConnText bounds each text of a recorded connection: a refused host
// is kept as the client sent it, which may be tens of kilobytes.
const maxConnText = 512

// close ends every tunnel and returns the connections seen, and why the
// proxy stopped serving early, if it did. By then the command's tree is
// dead, so its connections have ended already.
func (r *runProxy) close() ([]Connection, int, error) {
	r.closed.Do(func() {
		// A Serve that returned before Close stopped early.
		if r.served != nil {
			select {
			case err := <-r.served:
				r.failed = fmt.Errorf("the network proxy stopped serving during the run: %v", err)
				r.served = nil
			default:
			}
		}
		r.px.Close()
		if r.served != nil {
			<-r.served
		}
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.conns, r.omitted, r.failed
}

func (r *runProxy) record(ev netproxy.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	denied := ev.Decision == netproxy.Denied
	if len(r.conns) >= MaxConnections || denied && r.denied >= MaxConnections/2 {
		r.omitted++
		return
	}
	if denied {
		r.denied++
	}
	c := Connection{Time: ev.Time, Protocol: string(ev.Protocol), Host: clip(ev.Host, maxConnText), Port: ev.Port,
		Decision: string(ev.Decision), Code: string(ev.Code), Reason: clip(ev.Reason, maxConnText), Advice: clip(ev.Advice, maxConnText),
		BytesUp: ev.BytesUp, BytesDown: ev.BytesDown, DurationMS: float64(ev.Duration.Microseconds()) / 1000}
	if ev.Addr.IsValid() {
		c.Addr = ev.Addr.String()
	}
	r.conns = append(r.conns, c)
}

// clip cuts s to at most n bytes on a character boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = strings.ToValidUTF8(s[:n], "")
	return s + "..."
}

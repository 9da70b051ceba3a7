package integration

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestNetAllowBypass: every way around the proxy fails, and the host's
// listeners (on loopback and on the host's other address) hear nothing:
// direct TCP with and without curl, MPTCP, TCP to another port of the
// sandbox's own loopback, a server inside, UDP, DNS straight to a
// resolver, raw and packet sockets, and the proxy itself asked for the
// host's addresses.
func TestNetAllowBypass(t *testing.T) {
	needTools(t, "curl", "python3")
	forEachMode(t, func(t *testing.T, e *env) {
		e.userConfig(netConfig{AllowPrivate: []string{"127.0.0.0/8"}, Hosts: e.hostsFile("127.0.0.1 ok.test")})
		e.write(filepath.Join(e.ws, "attack.py"), readTestdata(t, "attack.py"))
		addrs := hostAddrs(t)
		if ln, err := net.Listen("tcp6", "[::1]:0"); err == nil {
			ln.Close()
			addrs = append(addrs, "::1")
		}
		proxied := []string{"--proxy", "http://127.0.0.1:3128", "--noproxy", ""}
		var (
			tcps         []*hostServer
			udps         []*udpSink
			controlConns []int     // TCP connections the control makes to each
			control      []string  // attack.py operations that reach the host without forgebox
			attempts     []attempt // and what each must come to inside
			reqs         []request
		)
		for i, ip := range addrs {
			tcp, udp := serveHost(t, ip, nil), listenUDP(t, ip)
			tcps, udps = append(tcps, tcp), append(udps, udp)
			controlConns = append(controlConns, 1)
			port := strconv.Itoa(tcp.port)
			tcpOp, udpOp := "tcp "+ip+" "+port, "udp "+ip+" "+strconv.Itoa(udp.port)
			control = append(control, tcpOp, udpOp)
			// Landlock refuses the connect before the route is looked up.
			attempts = append(attempts, attempt{tcpOp, []string{"EACCES"}}, attempt{"socks5 " + ip + " " + port, []string{"reply 2"}})
			if net.ParseIP(ip).To4() != nil {
				// MPTCP escapes Landlock's TCP rules: seccomp must refuse it.
				mptcp := "mptcp " + ip + " " + port
				control = append(control, mptcp)
				controlConns[i]++
				attempts = append(attempts, attempt{mptcp, []string{"EACCES", "EPERM", "EPROTONOSUPPORT"}})
			}
			if net.ParseIP(ip).IsLoopback() {
				// The sandbox's own loopback takes it; the host sees nothing.
				attempts = append(attempts, attempt{udpOp, nil})
			} else {
				attempts = append(attempts, attempt{udpOp, []string{"ENETUNREACH"}})
			}
			reqs = append(reqs,
				request{name: fmt.Sprintf("direct-%d", i), url: tcp.url("http", ip), args: []string{"--noproxy", "*"}},
				request{name: fmt.Sprintf("proxied-%d", i), url: tcp.url("http", ip), args: proxied})
		}
		lo := strconv.Itoa(tcps[0].port)
		reqs = append(reqs,
			request{name: "localhost", url: tcps[0].url("http", "localhost"), args: proxied},
			request{name: "short-ip", url: "http://127.1:" + lo + "/", args: proxied},
			request{name: "decimal-ip", url: "http://2130706433:" + lo + "/", args: proxied})
		attempts = append(attempts,
			attempt{"socks5 localhost " + lo, []string{"reply 2"}},
			attempt{"tcp 127.0.0.1 3128", []string{"ok"}}, // the proxy: the one port allowed
			attempt{"tcp 127.0.0.1 3129", []string{"EACCES"}},
			attempt{"bind 127.0.0.1 0", []string{"EACCES"}},
			attempt{"bind 127.0.0.1 8080", []string{"EACCES"}},
			attempt{"dns 8.8.8.8 ok.test", []string{"ENETUNREACH"}},
			attempt{"raw", []string{"EPERM"}},
			attempt{"packet", []string{"EPERM"}},
			attempt{"resolve ok.test", []string{"EAI"}}) // the proxy's hosts file is not the command's
		if ns := hostResolver(t); ns != "" {
			attempts = append(attempts,
				attempt{"dns " + ns + " ok.test", []string{"ENETUNREACH", "ECONNREFUSED", ""}}, // "": a timeout on the sandbox's loopback
				attempt{"dns-tcp " + ns + " ok.test", []string{"EACCES"}})
		}

		// The control: without forgebox, the same packets reach the host.
		allowed(t, e.attackHost(control...))
		for i := range tcps {
			tcps[i].wantAccepted(t, controlConns[i])
			udps[i].wantReceived(t, 1)
		}

		ops := make([]string, len(attempts))
		for i, a := range attempts {
			ops[i] = a.op
		}
		script := curlScript(reqs) + "python3 attack.py " + shellWords(ops) + " > out/attack.jsonl\n"
		r, res := e.runJSON([]string{"--net", "allow=ok.test", "--", "sh", "-c", script})
		if res.ExitCode != 0 {
			t.Fatalf("run: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, r.stderr)
		}
		b, err := os.ReadFile(filepath.Join(e.ws, "out", "attack.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		vs := decodeVerdicts(t, string(b))
		if len(vs) != len(attempts) {
			t.Fatalf("attack.py gave %d verdicts for %d operations:\n%s\nstderr: %s", len(vs), len(attempts), b, res.Stderr)
		}
		for i, a := range attempts {
			a.check(t, vs[i])
		}
		got := e.replies(res.Stdout, reqs)
		for i, ip := range addrs {
			if d := got[fmt.Sprintf("direct-%d", i)]; d.status != 0 {
				t.Errorf("curl --noproxy '*' %s: status %d; want no connection", ip, d.status)
			}
			wantRefusal(t, fmt.Sprintf("proxied-%d", i), got[fmt.Sprintf("proxied-%d", i)], "ip-literal", "is an IP address not listed in the network allowlist")
		}
		wantRefusal(t, "localhost", got["localhost"], "not-allowed", "localhost is not in the network allowlist")
		for _, n := range []string{"short-ip", "decimal-ip"} {
			if rep := got[n]; rep.status != 403 {
				t.Errorf("%s: status %d, curl said %q; want 403", n, rep.status, rep.stderr)
			}
		}
		for i := range tcps {
			tcps[i].wantAccepted(t, controlConns[i]) // the control's, no more
			udps[i].wantReceived(t, 1)
		}
	})
}

// attempt is an attack.py operation and the outcomes it may come to: "ok",
// errnos, or "reply N" for the SOCKS5 reply code; nil leaves it to the
// host-side check.
type attempt struct {
	op   string
	want []string
}

func (a attempt) check(t *testing.T, v verdict) {
	t.Helper()
	switch {
	case a.want == nil:
	case strings.HasPrefix(a.want[0], "reply "):
		if !v.OK || "reply "+v.Out != a.want[0] {
			t.Errorf("attack.py %s = %s %q; want SOCKS5 %s", a.op, v.outcome(), v.Out, a.want[0])
		}
	case a.want[0] == "ok":
		if !v.OK {
			t.Errorf("attack.py %s = %s; want ok", a.op, v.outcome())
		}
	case v.OK || !slices.Contains(a.want, v.Errno):
		t.Errorf("attack.py %s = %s; want %s", a.op, v.outcome(), strings.Join(a.want, " or "))
	}
}

// TestNetAllowRebinding: an allowed name that resolves to the host's
// loopback is refused unless network.allowPrivate covers the address;
// allowing 127.0.0.0/8 does not allow 10.0.0.0/8; an address allowed
// literally needs no allowPrivate.
func TestNetAllowRebinding(t *testing.T) {
	needTools(t, "curl", "python3")
	forEachMode(t, func(t *testing.T, e *env) {
		ca := e.newCA()
		hosts := e.hostsFile("127.0.0.1 rebind.test", "10.1.2.3 lan.test")
		e.write(filepath.Join(e.ws, "attack.py"), readTestdata(t, "attack.py"))
		for _, private := range []bool{false, true} {
			web, sec := serveHost(t, "127.0.0.1", nil), serveHost(t, "127.0.0.1", ca.serverConfig(t, "rebind.test"))
			// The user, not a DNS answer, chose an address listed exactly.
			literal := serveHost(t, "127.0.0.1", nil)
			n := netConfig{Hosts: hosts}
			if private {
				n.AllowPrivate = []string{"127.0.0.0/8"}
			}
			e.userConfig(n)
			reqs := []request{
				{name: "http", url: web.url("http", "rebind.test")},
				{name: "https", url: sec.url("https", "rebind.test"), args: []string{"--cacert", "ca.pem"}},
				{name: "lan", url: "http://lan.test:8080/"},
				{name: "literal", url: literal.url("http", "127.0.0.1"), args: []string{"--proxy", "http://127.0.0.1:3128", "--noproxy", ""}},
			}
			script := curlScript(reqs) + fmt.Sprintf("python3 attack.py 'socks5 rebind.test %d' > out/socks.jsonl\n", web.port)
			r, res := e.runJSON([]string{"--net", fmt.Sprintf("allow=rebind.test,lan.test,127.0.0.1:%d", literal.port), "--", "sh", "-c", script})
			got := e.replies(res.Stdout, reqs)
			b, _ := os.ReadFile(filepath.Join(e.ws, "out", "socks.jsonl"))
			socks := decodeVerdicts(t, string(b))
			run := decodeNetRun(t, r.stdout)
			wantRefusal(t, "lan", got["lan"], "refused-address", "lan.test resolves only to addresses forgebox refuses")
			wantBody(t, "literal", got["literal"], "hello 127.0.0.1")
			literal.wantRequests(t, 1)
			if !private {
				wantRefusal(t, "http", got["http"], "refused-address", "rebind.test resolves only to addresses forgebox refuses")
				wantRefusal(t, "https", got["https"], "refused-address", "rebind.test resolves only to addresses forgebox refuses")
				if len(socks) != 1 || socks[0].Out != "2" {
					t.Errorf("SOCKS5 to rebind.test: %+v; want reply 2", socks)
				}
				run.want(t, "http", "rebind.test", web.port, "denied", "refused-address")
				run.want(t, "connect", "rebind.test", sec.port, "denied", "refused-address")
				run.want(t, "socks5", "rebind.test", web.port, "denied", "refused-address")
				web.wantAccepted(t, 0)
				sec.wantAccepted(t, 0)
				continue
			}
			wantBody(t, "http", got["http"], "hello rebind.test")
			wantBody(t, "https", got["https"], "hello rebind.test")
			if len(socks) != 1 || socks[0].Out != "0" {
				t.Errorf("SOCKS5 to rebind.test with allowPrivate: %+v; want reply 0 (succeeded)", socks)
			}
			web.wantAccepted(t, 2)
			sec.wantRequests(t, 1)
		}
	})
}

// TestNetAllowEmpty: --net allow with no pattern and no configuration
// allows nothing, and the command cannot resolve names by itself.
func TestNetAllowEmpty(t *testing.T) {
	needTools(t, "curl", "python3", "getent")
	forEachMode(t, func(t *testing.T, e *env) {
		e.write(filepath.Join(e.ws, "attack.py"), readTestdata(t, "attack.py"))
		lo := serveHost(t, "127.0.0.1", nil)
		reqs := []request{
			{name: "name", url: "http://example.com/"},
			{name: "tls", url: "https://example.com/"},
			{name: "loopback", url: lo.url("http", "127.0.0.1"), args: []string{"--proxy", "http://127.0.0.1:3128", "--noproxy", ""}},
		}
		script := curlScript(reqs) + "getent hosts example.com > out/getent; echo $? > out/getent.code\n" +
			"python3 attack.py 'resolve example.com' 'socks5 example.com 80' > out/attack.jsonl\n"
		r, res := e.runJSON([]string{"--net", "allow", "--", "sh", "-c", script})
		got := e.replies(res.Stdout, reqs)
		wantRefusal(t, "name", got["name"], "not-allowed", "example.com is not in the network allowlist: the allowlist is empty")
		wantRefusal(t, "tls", got["tls"], "not-allowed", "the allowlist is empty")
		wantRefusal(t, "loopback", got["loopback"], "ip-literal", "127.0.0.1 is an IP address not listed")
		lo.wantAccepted(t, 0)
		if code, _ := os.ReadFile(filepath.Join(e.ws, "out", "getent.code")); strings.TrimSpace(string(code)) != "2" {
			out, _ := os.ReadFile(filepath.Join(e.ws, "out", "getent"))
			t.Errorf("getent hosts example.com inside: exit %q, %q; want 2 (not found)", code, out)
		}
		b, _ := os.ReadFile(filepath.Join(e.ws, "out", "attack.jsonl"))
		vs := decodeVerdicts(t, string(b))
		if len(vs) != 2 {
			t.Fatalf("attack.py: %s", b)
		}
		outcomeIs(t, vs[0], "EAI")
		if vs[1].Out != "2" {
			t.Errorf("attack.py %s = %s %q; want SOCKS5 reply 2", vs[1].call(), vs[1].outcome(), vs[1].Out)
		}
		run := decodeNetRun(t, r.stdout)
		for _, c := range run.Connections {
			if c.Decision != "denied" || c.BytesUp != 0 || c.BytesDown != 0 {
				t.Errorf("with an empty allowlist, connection %+v; want denied, no bytes", c)
			}
		}
		run.want(t, "socks5", "example.com", 80, "denied", "not-allowed")
	})
}

// TestNetAllowSNIMismatch: a tunnel opened for an allowed name that then
// speaks TLS to another name (curl --connect-to, Python's ssl) is cut
// before the ClientHello reaches the server, although the server's
// certificate is good for both names.
func TestNetAllowSNIMismatch(t *testing.T) {
	needTools(t, "curl", "python3")
	forEachMode(t, func(t *testing.T, e *env) {
		ca := e.newCA()
		conf := ca.serverConfig(t, "ok.test", "other.test")
		good, bad := serveHost(t, "127.0.0.1", conf), serveHost(t, "127.0.0.1", conf)
		e.userConfig(netConfig{AllowPrivate: []string{"127.0.0.0/8"}, Hosts: e.hostsFile("127.0.0.1 ok.test other.test")})
		e.write(filepath.Join(e.ws, "attack.py"), readTestdata(t, "attack.py"))
		reqs := []request{
			{name: "same", url: good.url("https", "ok.test"), args: []string{"--cacert", "ca.pem"}},
			{name: "fronted", url: bad.url("https", "other.test"), args: []string{"--cacert", "ca.pem",
				"--connect-to", fmt.Sprintf("other.test:%d:ok.test:%d", bad.port, bad.port)}},
		}
		script := curlScript(reqs) + fmt.Sprintf("python3 attack.py 'sni ok.test %d other.test ca.pem' > out/attack.jsonl\n", bad.port)
		r, res := e.runJSON([]string{"--net", "allow=ok.test", "--", "sh", "-c", script})
		got := e.replies(res.Stdout, reqs)
		wantBody(t, "same", got["same"], "hello ok.test")
		if rep := got["fronted"]; rep.connect != 200 || rep.status != 0 {
			t.Errorf("fronted: CONNECT %d, status %d; want the tunnel opened (200) and then cut (no response)", rep.connect, rep.status)
		}
		b, _ := os.ReadFile(filepath.Join(e.ws, "out", "attack.jsonl"))
		vs := decodeVerdicts(t, string(b))
		if len(vs) != 1 || vs[0].OK {
			t.Errorf("attack.py sni: %s; want a failure", b)
		}
		run := decodeNetRun(t, r.stdout)
		if n := len(run.find("connect", "ok.test", bad.port)); n != 2 {
			t.Errorf("%d tunnels to ok.test:%d in the JSON result; want 2: %+v", n, bad.port, run.Connections)
		}
		for _, c := range run.find("connect", "ok.test", bad.port) {
			if c.Decision != "denied" || c.Code != "sni-mismatch" || !strings.Contains(c.Reason, `"other.test"`) {
				t.Errorf("tunnel %+v; want denied, sni-mismatch, naming other.test", c)
			}
		}
		good.wantRequests(t, 1)
		// The proxy connects before the client speaks; the server must not
		// have received a byte of the ClientHello for the other name.
		time.Sleep(100 * time.Millisecond)
		if n := bad.read.Load(); n != 0 || bad.requests.Load() != 0 {
			t.Errorf("the server behind the mismatched tunnels read %d bytes, answered %d requests; want none", n, bad.requests.Load())
		}
	})
}

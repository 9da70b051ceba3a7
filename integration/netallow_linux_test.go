package integration

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The scenarios of --net allow=PATTERN: the command reaches the network
// only through forgebox's proxy on 127.0.0.1:3128 of its own namespace.
// The servers are on the host's loopback under names that a hosts file
// (network.hosts) maps there; there is no other network on the test
// machines. Each attack is checked on the host: the server a refused
// request aimed at accepted nothing.

// TestNetAllowHTTP: allowed names get through over plain HTTP (forwarded),
// HTTPS (CONNECT) and SOCKS5; other names get a 403 that says why, a
// request whose Host header names another host than its URL is refused,
// the JSON result lists every decision with its bytes, and the servers
// behind the refused requests saw no connection.
func TestNetAllowHTTP(t *testing.T) {
	needTools(t, "curl")
	forEachMode(t, func(t *testing.T, e *env) {
		ca := e.newCA()
		tlsConf := ca.serverConfig(t, "ok.test", "no.test")
		okWeb, okTLS := serveHost(t, "127.0.0.1", nil), serveHost(t, "127.0.0.1", tlsConf)
		noWeb, noTLS := serveHost(t, "127.0.0.1", nil), serveHost(t, "127.0.0.1", tlsConf)
		fronted := serveHost(t, "127.0.0.1", nil)
		e.userConfig(netConfig{AllowPrivate: []string{"127.0.0.0/8"}, Hosts: e.hostsFile("127.0.0.1 ok.test no.test")})

		reqs := []request{
			{name: "http-ok", url: okWeb.url("http", "ok.test")},
			{name: "https-ok", url: okTLS.url("https", "ok.test"), args: []string{"--cacert", "ca.pem"}},
			{name: "http-no", url: noWeb.url("http", "no.test")},
			{name: "https-no", url: noTLS.url("https", "no.test"), args: []string{"--cacert", "ca.pem"}},
			{name: "socks-ok", url: okTLS.url("https", "ok.test"), args: []string{"--cacert", "ca.pem", "--socks5-hostname", "127.0.0.1:3128"}},
			{name: "socks-no", url: noWeb.url("http", "no.test"), args: []string{"--socks5-hostname", "127.0.0.1:3128"}},
			// An allowed name in the URL, another in the Host header: the
			// server (a CDN) would serve the other.
			{name: "fronted", url: fronted.url("http", "ok.test"), args: []string{"-H", "Host: no.test"}},
		}
		r, res := e.runJSON([]string{"--net", "allow=ok.test", "--", "sh", "-c", curlScript(reqs)})
		if res.ExitCode != 0 {
			t.Fatalf("run: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, r.stderr)
		}
		got := e.replies(res.Stdout, reqs)
		for _, name := range []string{"http-ok", "https-ok", "socks-ok"} {
			wantBody(t, name, got[name], "hello ok.test")
		}
		wantRefusal(t, "http-no", got["http-no"], "not-allowed", "no.test is not in the network allowlist", "--net allow=no.test")
		wantRefusal(t, "https-no", got["https-no"], "not-allowed", "no.test is not in the network allowlist", "--net allow=no.test")
		if rep := got["socks-no"]; rep.status != 0 || !strings.Contains(rep.stderr, "(2)") {
			t.Errorf("socks-no: status %d, curl said %q; want no response and SOCKS5 reply 2 (not allowed by ruleset)", rep.status, rep.stderr)
		}
		okWeb.wantRequests(t, 1)
		okTLS.wantRequests(t, 2)
		wantProxyError(t, "fronted", got["fronted"], 400, "bad-request")
		noWeb.wantAccepted(t, 0)
		noTLS.wantAccepted(t, 0)
		fronted.wantAccepted(t, 0)

		run := decodeNetRun(t, r.stdout)
		if en := run.Enforced; en.Network != "allow" || en.Proxy != "127.0.0.1:3128" || !slices.Equal(en.ConnectPorts, []int{3128}) {
			t.Errorf("enforced = %+v; want network allow, proxy 127.0.0.1:3128, landlock_tcp_connect_ports [3128]", en)
		}
		if len(run.Connections) != len(reqs) {
			t.Errorf("%d connections in the JSON result; want %d (one per request): %+v", len(run.Connections), len(reqs), run.Connections)
		}
		run.want(t, "http", "ok.test", okWeb.port, "allowed", "")
		run.want(t, "connect", "ok.test", okTLS.port, "allowed", "")
		run.want(t, "socks5", "ok.test", okTLS.port, "allowed", "")
		run.want(t, "http", "no.test", noWeb.port, "denied", "not-allowed")
		run.want(t, "connect", "no.test", noTLS.port, "denied", "not-allowed")
		run.want(t, "socks5", "no.test", noWeb.port, "denied", "not-allowed")
		run.want(t, "http", "ok.test", fronted.port, "denied", "bad-request")
		if strings.Contains(r.stderr, "network: refused") {
			t.Errorf("with --json, stderr repeats the refusals (they are in the JSON): %s", r.stderr)
		}

		// Without --json, forgebox names the refused host on stderr: curl
		// itself says only "response 403".
		r = e.run([]string{"run", "--net", "allow=ok.test", "--", "curl", "-sS", "-o", "/dev/null", "--cacert", "ca.pem", noTLS.url("https", "no.test")})
		want := "forgebox: network: refused no.test is not in the network allowlist; to allow it, run with --net allow=no.test"
		if r.code == 0 || !strings.Contains(r.stderr, want) {
			t.Errorf("curl of a refused host: exit %d, stderr:\n%s\nwant a failure and %q", r.code, r.stderr, want)
		}
		noTLS.wantAccepted(t, 0)
	})
}

// TestNetAllowPolicyFile: with the judge, --policy FILE is the
// configuration, and --net allow alone allows only its list.
func TestNetAllowPolicyFile(t *testing.T) {
	needTools(t, "curl")
	forEachMode(t, func(t *testing.T, e *env) {
		e.judged = true
		okWeb, noWeb := serveHost(t, "127.0.0.1", nil), serveHost(t, "127.0.0.1", nil)
		file := filepath.Join(e.dir, "policy.json")
		e.writeConfig(file, netConfig{Allow: []string{"ok.test"}, AllowPrivate: []string{"127.0.0.0/8"}, Hosts: e.hostsFile("127.0.0.1 ok.test no.test")})
		reqs := []request{{name: "ok", url: okWeb.url("http", "ok.test")}, {name: "no", url: noWeb.url("http", "no.test")}}
		r := e.run([]string{"run", "--policy", file, "--yes", "--net", "allow", "-c", curlScript(reqs)})
		if r.code != 0 {
			t.Fatalf("run --policy FILE --yes --net allow: exit %d\nstderr: %s", r.code, r.stderr)
		}
		got := e.replies(r.stdout, reqs)
		wantBody(t, "ok", got["ok"], "hello ok.test")
		wantRefusal(t, "no", got["no"], "not-allowed", "no.test is not in the network allowlist")
		if !strings.Contains(r.stderr, "forgebox: network: refused no.test is not in the network allowlist") {
			t.Errorf("stderr does not name the refused host:\n%s", r.stderr)
		}
		// Without the judge the file still holds the allowlist (forgebox
		// serve's shell sessions run so); where it holds nothing that
		// applies, --policy is refused.
		e.judged = false
		r = e.run([]string{"run", "--policy", file, "--net", "allow", "-c", curlScript(reqs)})
		got = e.replies(r.stdout, reqs)
		wantBody(t, "ok", got["ok"], "hello ok.test")
		wantRefusal(t, "no", got["no"], "not-allowed", "no.test is not in the network allowlist")
		if r := e.run([]string{"run", "--policy", file, "--net", "none", "--", "true"}); r.code != 125 || !strings.Contains(r.stderr, "--policy") {
			t.Errorf("run --no-policy --policy FILE --net none: exit %d, stderr %q; want 125 and a refusal of --policy", r.code, r.stderr)
		}
		okWeb.wantRequests(t, 2)
		noWeb.wantAccepted(t, 0)
	})
}

// TestNetAllowPatterns: wildcards cover subdomains at any depth and
// nothing else, a port restricts, an IP address listed exactly is allowed
// (on its port), and a configured deny beats a flag's allow.
func TestNetAllowPatterns(t *testing.T) {
	needTools(t, "curl")
	forEachMode(t, func(t *testing.T, e *env) {
		names := []string{"x.a.test", "y.x.a.test", "a.test", "evila.test", "api.test", "deny.test"}
		e.userConfig(netConfig{Deny: []string{"deny.test"}, AllowPrivate: []string{"127.0.0.0/8"},
			Hosts: e.hostsFile("127.0.0.1 " + strings.Join(names, " "))})
		// One server per request: a refused request must reach none.
		srv := map[string]*hostServer{}
		for _, n := range append(names, "api.test-other-port") {
			srv[n] = serveHost(t, "127.0.0.1", nil)
		}
		api := srv["api.test"].port
		flags := []string{"--net", "allow=*.a.test", "--net", fmt.Sprintf("allow=api.test:%d,deny.test", api)}
		var reqs []request
		for _, n := range names {
			reqs = append(reqs, request{name: n, url: srv[n].url("http", n)})
		}
		reqs = append(reqs, request{name: "api.test-other-port", url: srv["api.test-other-port"].url("http", "api.test")})
		// An IP address is allowed when listed exactly, on its port only.
		ip, ipOther := serveHost(t, "127.0.0.1", nil), serveHost(t, "127.0.0.1", nil)
		flags = append(flags, "--net", fmt.Sprintf("allow=127.0.0.1:%d", ip.port))
		proxied := []string{"--proxy", "http://127.0.0.1:3128", "--noproxy", ""}
		reqs = append(reqs, request{name: "ip", url: ip.url("http", "127.0.0.1"), args: proxied},
			request{name: "ip-other-port", url: ipOther.url("http", "127.0.0.1"), args: proxied})
		r, res := e.runJSON(append(flags, "--", "sh", "-c", curlScript(reqs)))
		got := e.replies(res.Stdout, reqs)
		for _, n := range []string{"x.a.test", "y.x.a.test", "api.test"} {
			wantBody(t, n, got[n], "hello "+n)
			srv[n].wantRequests(t, 1)
		}
		wantBody(t, "ip", got["ip"], "hello 127.0.0.1")
		ip.wantRequests(t, 1)
		wantRefusal(t, "ip-other-port", got["ip-other-port"], "not-allowed", "is allowed on port")
		ipOther.wantAccepted(t, 0)
		other := srv["api.test-other-port"].port
		for n, want := range map[string][]string{
			"a.test":              {"not-allowed", "a.test is not in the network allowlist"},
			"evila.test":          {"not-allowed", "evila.test is not in the network allowlist"},
			"deny.test":           {"deny-rule", "deny.test is denied by the network rule deny=deny.test"},
			"api.test-other-port": {"not-allowed", fmt.Sprintf("api.test:%d is not in the network allowlist: api.test is allowed on port %d only", other, api)},
		} {
			wantRefusal(t, n, got[n], want[0], want[1])
			srv[n].wantAccepted(t, 0)
		}
		run := decodeNetRun(t, r.stdout)
		run.want(t, "http", "deny.test", srv["deny.test"].port, "denied", "deny-rule")
		run.want(t, "http", "api.test", other, "denied", "not-allowed")
	})
}

// TestNetAllowWorkspaceConfig: a workspace's configuration (which the
// command itself could have written) adds deny patterns, which apply, and
// cannot widen the allowlist: its allow, allowPrivate and hosts are
// ignored with a warning, with the judge and without.
func TestNetAllowWorkspaceConfig(t *testing.T) {
	needTools(t, "curl")
	forEachMode(t, func(t *testing.T, e *env) {
		// p.a.test is on 127.0.0.2, which the user's allowPrivate does not
		// cover and the workspace's would; z.a.test is in the workspace's
		// hosts file only.
		e.userConfig(netConfig{AllowPrivate: []string{"127.0.0.1"}, Hosts: e.hostsFile("127.0.0.1 x.a.test y.x.a.test", "127.0.0.2 p.a.test")})
		e.writeConfig(filepath.Join(e.ws, ".forgebox", "config.json"), netConfig{
			Deny: []string{"y.x.a.test"}, Allow: []string{"a.test"}, AllowPrivate: []string{"127.0.0.0/8"},
			Hosts: e.hostsFile("127.0.0.1 a.test z.a.test")})
		for _, judged := range []bool{false, true} {
			e.judged = judged
			x, y, a, z := serveHost(t, "127.0.0.1", nil), serveHost(t, "127.0.0.1", nil), serveHost(t, "127.0.0.1", nil), serveHost(t, "127.0.0.1", nil)
			p := serveHost(t, "127.0.0.2", nil)
			reqs := []request{{name: "x", url: x.url("http", "x.a.test")}, {name: "y", url: y.url("http", "y.x.a.test")},
				{name: "a", url: a.url("http", "a.test")}, {name: "z", url: z.url("http", "z.a.test")}, {name: "p", url: p.url("http", "p.a.test")}}
			args := []string{"run", "--net", "allow=*.a.test"}
			if judged {
				args = append(args, "--yes")
			}
			r := e.run(append(args, "-c", curlScript(reqs)))
			got := e.replies(r.stdout, reqs)
			wantBody(t, "x", got["x"], "hello x.a.test")
			wantRefusal(t, "y", got["y"], "deny-rule", "y.x.a.test is denied by the network rule deny=y.x.a.test")
			wantRefusal(t, "a", got["a"], "not-allowed", "a.test is not in the network allowlist")
			wantProxyError(t, "z", got["z"], 502, "resolve-failed")
			wantRefusal(t, "p", got["p"], "refused-address", "p.a.test resolves only to addresses forgebox refuses")
			x.wantRequests(t, 1)
			for _, s := range []*hostServer{y, a, z, p} {
				s.wantAccepted(t, 0)
			}
			if !strings.Contains(r.stderr, "network allow, allowPrivate and hosts ignored") {
				t.Errorf("judged=%v: stderr has no warning that the workspace's network allow, allowPrivate and hosts were ignored:\n%s", judged, r.stderr)
			}
		}
	})
}

package integration

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
)

// Without namespaces --best-effort does not run --net allow: the proxy
// would have no private loopback, and a proxy variable would send the
// command's traffic to whatever holds port 3128 on the host's. A host
// listener on that port sees nothing, and the command does not run.
func TestNetAllowBestEffortRefusedWithoutNamespaces(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		if r := e.withoutUserNamespaces("unshare", "-U", "true"); r.code == 0 || r.code == 99 {
			t.Skipf("cannot refuse user namespaces this way here (exit %d: %s)", r.code, r.stderr)
		}
		// The port may be taken on this host; then the refusal is checked
		// without the listener's testimony.
		var squid *listener
		if l, err := net.Listen("tcp", "127.0.0.1:3128"); err == nil {
			squid = serve(t, l)
		}
		ran := filepath.Join(e.ws, "ran")
		r := e.withoutUserNamespaces(forgebox, "run", "--no-policy", "--best-effort", "--net", "allow=example.com", "--",
			"sh", "-c", "touch "+ran+"; curl -sS -m 3 http://example.com/")
		if r.code != 125 || !strings.Contains(r.stderr, "network allowlist") || !strings.Contains(r.stderr, "--net none") {
			t.Errorf("--best-effort --net allow without namespaces: exit %d, stderr %q; want 125 naming the allowlist and the alternatives", r.code, r.stderr)
		}
		if s := snap(t, ran); s.exists {
			t.Errorf("the command ran")
		}
		if squid != nil {
			squid.wantAccepted(t, "127.0.0.1:3128 on the host", 0)
		}
	})
}

// A flood of refused requests cannot push the connections that went
// through out of the record: refusals take at most half the places, the
// rest are counted, and the history keeps the count. A refused host of
// tens of kilobytes is kept clipped.
func TestNetAllowRecordBounds(t *testing.T) {
	needTools(t, "curl")
	forEachMode(t, func(t *testing.T, e *env) {
		ok := serveHost(t, "127.0.0.1", nil)
		e.userConfig(netConfig{AllowPrivate: []string{"127.0.0.0/8"}, Hosts: e.hostsFile("127.0.0.1 ok.test")})
		db := filepath.Join(e.dir, "history.db")
		long := strings.Repeat("x", 20000) + ".test"
		// A refusal of a 20 kB name, 600 more (each its own connection),
		// then one allowed request.
		script := fmt.Sprintf(`python3 -c '
import socket
s = socket.create_connection(("127.0.0.1", 3128))
s.sendall(b"CONNECT %s:443 HTTP/1.1\r\n\r\n")
s.recv(4096)
s.close()
for i in range(600):
    s = socket.create_connection(("127.0.0.1", 3128))
    s.sendall(b"CONNECT no%%d.test:443 HTTP/1.1\r\n\r\n" %% i)
    s.recv(4096)
    s.close()
'
curl -sS %s`, long, ok.url("http", "ok.test"))
		r, res := e.runJSON([]string{"--history-db", db, "--net", "allow=ok.test", "--", "sh", "-c", script})
		if res.Stdout != "hello ok.test\n" {
			t.Fatalf("the allowed request: exit %d, stdout %q\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
		}
		run := decodeNetRun(t, r.stdout)
		run.want(t, "http", "ok.test", ok.port, "allowed", "")
		denied := 0
		for _, c := range run.Connections {
			if c.Decision == "denied" {
				denied++
			}
		}
		omitted, _ := res.raw["connections_omitted"].(float64)
		if denied != 500 || int(omitted) != 101 {
			t.Errorf("%d refusals kept, %v omitted; want 500 kept and 101 counted", denied, res.raw["connections_omitted"])
		}
		clipped := false
		for _, c := range run.Connections {
			if strings.Contains(c.Reason, "xxxx") {
				clipped = len(c.Host) < 1024 && len(c.Reason) < 1024
			}
		}
		if !clipped {
			t.Errorf("the request for a 20 kB host name was not recorded, or not clipped")
		}
		key, _ := res.raw["history_key"].(string)
		show := e.run([]string{"history", "show", "--history-db", db, key})
		if !strings.Contains(show.stdout, "and 101 more not kept") || !strings.Contains(show.stdout, fmt.Sprintf("allowed ok.test:%d", ok.port)) {
			t.Errorf("history show lacks the allowed request or the omitted count:\n%s", show.stdout)
		}
	})
}

// A hosts file the command could write steers nothing: a run writes one in
// the workspace naming the loopback server, and the next run, whose
// configuration points at it, is refused before anything starts.
func TestNetAllowHostsFileInWorkspaceRefused(t *testing.T) {
	needTools(t, "curl")
	forEachMode(t, func(t *testing.T, e *env) {
		srv := serveHost(t, "127.0.0.1", nil)
		hosts := filepath.Join(e.ws, "hosts")
		e.userConfig(netConfig{Allow: []string{"ok.test"}, AllowPrivate: []string{"127.0.0.0/8"}, Hosts: hosts})
		e.write(hosts, "192.0.2.250 ok.test\n")
		// The command plants its own mapping, as an attack would.
		if r := e.run([]string{"run", "--net", "none", "--", "sh", "-c", "echo '127.0.0.1 ok.test' > " + hosts}); r.code != 0 {
			t.Fatalf("planting the hosts file: exit %d: %s", r.code, r.stderr)
		}
		r := e.run([]string{"run", "--net", "allow", "--", "curl", "-sS", srv.url("http", "ok.test")})
		if r.code != 125 || !strings.Contains(r.stderr, "which the command can write") {
			t.Errorf("run with a hosts file in the workspace: exit %d, stderr %q; want 125 and why", r.code, r.stderr)
		}
		srv.wantAccepted(t, 0)
	})
}

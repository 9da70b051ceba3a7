package netproxy

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestCurl drives the proxy with a real client: HTTPS through CONNECT with
// the test CA, SOCKS5 with remote name resolution, and the refusal curl
// shows.
func TestCurl(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skipf("curl is not installed: %v", err)
	}
	e := newTestEnv(t)
	pt := startProxy(t, mustParse(t, []string{"allowed.test"}, nil), Options{Hosts: e.hosts, AllowPrivate: loopback})
	run := func(args ...string) (stdout, stderr string, err error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, curl, append([]string{"-sS", "--cacert", e.pki.caFile}, args...)...)
		cmd.Env = []string{"PATH=/usr/bin:/bin"} // no proxy variables, no .curlrc surprises
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err = cmd.Run()
		return out.String(), errb.String(), err
	}
	for _, proxy := range []string{"http://" + pt.addr, "socks5h://" + pt.addr} {
		u := fmt.Sprintf("https://allowed.test:%d/curl", e.httpsPort)
		out, errOut, err := run("--proxy", proxy, u)
		if err != nil || !strings.Contains(out, "uri=/curl sni=allowed.test") {
			t.Errorf("curl --proxy %s %s: %v\nstdout: %s\nstderr: %s", proxy, u, err, out, errOut)
		}
	}

	// Refused through CONNECT: curl fails and -v shows the reason header.
	u := fmt.Sprintf("https://other.test:%d/", e.httpsPort)
	_, errOut, err := run("-v", "--proxy", "http://"+pt.addr, u)
	if err == nil || !strings.Contains(errOut, "403") ||
		!strings.Contains(errOut, "X-Forgebox-Reason: forgebox: other.test is not in the network allowlist") {
		t.Errorf("curl %s: %v, want a 403 with the reason; stderr:\n%s", u, err, errOut)
	}
	// Refused plain HTTP: the body says why.
	u = fmt.Sprintf("http://other.test:%d/", e.httpPort)
	out, _, err := run("-w", "%{http_code}", "--proxy", "http://"+pt.addr, u)
	if err != nil || !strings.Contains(out, "other.test is not in the network allowlist") || !strings.HasSuffix(out, "403") {
		t.Errorf("curl %s = %q, %v; want the reason and 403", u, out, err)
	}
	// Refused over SOCKS5: curl names the SOCKS reply.
	u = fmt.Sprintf("https://other.test:%d/", e.httpsPort)
	_, errOut, err = run("--proxy", "socks5h://"+pt.addr, u)
	// curl 7.88 prints the reply code: 2, "connection not allowed by ruleset".
	if err == nil || !(strings.Contains(errOut, "(2)") || strings.Contains(strings.ToLower(errOut), "not allowed")) {
		t.Errorf("curl --proxy socks5h %s: %v, stderr %q; want reply 2, not allowed", u, err, errOut)
	}
}

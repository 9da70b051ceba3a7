package integration

import (
	"archive/zip"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

type request struct {
	name string   // a file name, unique in the script
	url  string   //
	args []string // more curl options
}

// reply is what curl got: the response's status and the proxy's answer to
// CONNECT (0 when none), the body and headers (of both), what curl said.
type reply struct {
	status, connect       int
	body, headers, stderr string
}

// curlScript makes each request with curl, whatever the outcome, and
// prints "NAME STATUS CONNECT" for each; bodies, headers and curl's
// messages go to files under out/ in the workspace.
func curlScript(reqs []request) string {
	var b strings.Builder
	b.WriteString("mkdir -p out\n")
	for _, r := range reqs {
		args := append([]string{"curl", "-sS", "--max-time", "10", "-o", "out/" + r.name + ".body", "-D", "out/" + r.name + ".hdr",
			"-w", "%{http_code} %{http_connect}\\n"}, r.args...)
		fmt.Fprintf(&b, "printf '%%s ' %s; %s %s 2>out/%s.err || true\n", r.name, shellWords(args), shellWords([]string{r.url}), r.name)
	}
	return b.String()
}

// replies reads back what curlScript printed and wrote.
func (e *env) replies(stdout string, reqs []request) map[string]reply {
	e.t.Helper()
	out := map[string]reply{}
	for _, line := range strings.Split(stdout, "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		var rep reply
		rep.status, _ = strconv.Atoi(f[1])
		rep.connect, _ = strconv.Atoi(f[2])
		read := func(ext string) string {
			b, _ := os.ReadFile(filepath.Join(e.ws, "out", f[0]+ext))
			return string(b)
		}
		rep.body, rep.headers, rep.stderr = read(".body"), read(".hdr"), read(".err")
		out[f[0]] = rep
	}
	for _, r := range reqs {
		if _, ok := out[r.name]; !ok {
			e.t.Fatalf("no result for request %s in the output:\n%s", r.name, stdout)
		}
	}
	return out
}

// wantBody asserts a successful request whose body names the host.
func wantBody(t *testing.T, name string, r reply, body string) {
	t.Helper()
	if r.status != 200 || !strings.Contains(r.body, body) {
		t.Errorf("%s: status %d (CONNECT %d), body %q, curl said %q; want 200 and %q", name, r.status, r.connect, r.body, r.stderr, body)
	}
}

// wantRefusal asserts the proxy's 403, to the request or to CONNECT, with
// its code and a reason that says each of the texts.
func wantRefusal(t *testing.T, name string, r reply, code string, texts ...string) {
	t.Helper()
	h := wantProxyError(t, name, r, 403, code)
	reason := h.Get("X-Forgebox-Reason")
	for _, s := range texts {
		if h != nil && !strings.Contains(reason, s) {
			t.Errorf("%s: X-Forgebox-Reason %q does not say %q", name, reason, s)
		}
	}
}

// wantProxyError asserts the proxy's answer, to the request or to
// CONNECT, with its code, and returns its headers (nil when it is not
// there).
func wantProxyError(t *testing.T, name string, r reply, status int, code string) http.Header {
	t.Helper()
	if r.status != status && r.connect != status {
		t.Errorf("%s: status %d, CONNECT %d, curl said %q; want %d from the proxy", name, r.status, r.connect, r.stderr, status)
		return nil
	}
	h := http.Header{}
	for _, line := range strings.Split(r.headers, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	if got := h.Get("X-Forgebox-Code"); got != code {
		t.Errorf("%s: X-Forgebox-Code %q; want %q\n%s", name, got, code, r.headers)
	}
	return h
}

// attackHost runs attack.py on the host as the mode's user: the control.
func (e *env) attackHost(ops ...string) []verdict {
	e.t.Helper()
	r := e.runProgram("/usr/bin/env", append([]string{"python3", filepath.Join(e.ws, "attack.py")}, ops...)...)
	vs := decodeVerdicts(e.t, r.stdout)
	if len(vs) != len(ops) {
		e.t.Fatalf("attack.py on the host gave %d verdicts for %d operations:\n%s%s", len(vs), len(ops), r.stdout, r.stderr)
	}
	return vs
}

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "netallow", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// shellWords quotes each word for sh.
func shellWords(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// --- The JSON result's connections ---

type netConn struct {
	Time       time.Time `json:"time"`
	Protocol   string    `json:"protocol"`
	Host       string    `json:"host"`
	Port       int       `json:"port"`
	Addr       string    `json:"addr"`
	Decision   string    `json:"decision"`
	Code       string    `json:"code"`
	Reason     string    `json:"reason"`
	BytesUp    int64     `json:"bytes_up"`
	BytesDown  int64     `json:"bytes_down"`
	DurationMS float64   `json:"duration_ms"`
}

type netRun struct {
	Connections []netConn `json:"connections"`
	Enforced    struct {
		Network      string `json:"network"`
		Proxy        string `json:"proxy"`
		ConnectPorts []int  `json:"landlock_tcp_connect_ports"`
	} `json:"enforced"`
}

func decodeNetRun(t *testing.T, stdout string) netRun {
	t.Helper()
	var r netRun
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("JSON result: %v\n%.2000s", err, stdout)
	}
	return r
}

func (r netRun) find(protocol, host string, port int) []netConn {
	var out []netConn
	for _, c := range r.Connections {
		if c.Protocol == protocol && c.Host == host && c.Port == port {
			out = append(out, c)
		}
	}
	return out
}

// want asserts one connection with that decision and code; an allowed one
// went to the host's loopback and moved bytes both ways, a denied one none.
func (r netRun) want(t *testing.T, protocol, host string, port int, decision, code string) {
	t.Helper()
	cs := r.find(protocol, host, port)
	if len(cs) != 1 {
		t.Errorf("%d %s connections to %s:%d in the JSON result; want 1: %+v", len(cs), protocol, host, port, r.Connections)
		return
	}
	c := cs[0]
	switch {
	case c.Decision != decision || c.Code != code:
		t.Errorf("connection %+v; want decision %s, code %q", c, decision, code)
	case decision == "allowed" && (c.Addr != "127.0.0.1" || c.BytesUp == 0 || c.BytesDown == 0):
		t.Errorf("allowed connection %+v; want addr 127.0.0.1 and bytes both ways", c)
	case decision == "denied" && (c.Addr != "" || c.BytesUp != 0 || c.BytesDown != 0 || c.Reason == ""):
		t.Errorf("denied connection %+v; want no address, no bytes, a reason", c)
	case c.Time.IsZero():
		t.Errorf("connection %+v has no time", c)
	}
}

// sameConns compares the history's list with the JSON result's.
func sameConns(t *testing.T, where string, got, want []netConn) {
	t.Helper()
	key := func(cs []netConn) []string {
		var out []string
		for _, c := range cs {
			out = append(out, fmt.Sprintf("%s %s:%d %s %s %s up=%d down=%d", c.Protocol, c.Host, c.Port, c.Addr, c.Decision, c.Code, c.BytesUp, c.BytesDown))
		}
		return out
	}
	if g, w := key(got), key(want); !slices.Equal(g, w) || len(w) == 0 {
		t.Errorf("%s: network\n%s\nwant the JSON result's\n%s", where, strings.Join(g, "\n"), strings.Join(w, "\n"))
	}
}

// --- The configuration ---

// netConfig is the network section of a forgebox configuration.
type netConfig struct {
	Allow        []string `json:"allow,omitempty"`
	Deny         []string `json:"deny,omitempty"`
	AllowPrivate []string `json:"allowPrivate,omitempty"`
	Hosts        string   `json:"hosts,omitempty"`
}

func (e *env) writeConfig(path string, n netConfig) {
	e.t.Helper()
	b, err := json.Marshal(map[string]any{"forgebox": map[string]any{"network": n}})
	if err != nil {
		e.t.Fatal(err)
	}
	e.write(path, string(b))
}

// userConfig writes the configuration forgebox reads without --policy.
func (e *env) userConfig(n netConfig) {
	e.t.Helper()
	e.writeConfig(filepath.Join(e.configHome(), "forgebox", "config.json"), n)
}

var hostsFiles atomic.Int32

// hostsFile writes a new hosts file outside the workspace and returns its
// path.
func (e *env) hostsFile(lines ...string) string {
	e.t.Helper()
	p := filepath.Join(e.dir, fmt.Sprintf("hosts-%d", hostsFiles.Add(1)))
	e.write(p, strings.Join(lines, "\n")+"\n")
	return p
}

// --- The host side: servers that count ---

// hostServer is an HTTP or HTTPS server on a host address that counts the
// connections it accepted, the bytes it read and the requests it answered.
// By default it answers "hello HOST" for the Host it was asked for.
type hostServer struct {
	port     int
	accepted atomic.Int32
	read     atomic.Int64
	requests atomic.Int32
}

func serveHost(t *testing.T, ip string, conf *tls.Config, handler ...http.Handler) *hostServer {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	s := &hostServer{port: l.Addr().(*net.TCPAddr).Port}
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		fmt.Fprintf(w, "hello %s\n", host)
	})
	if len(handler) > 0 {
		h = handler[0]
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.requests.Add(1)
			h.ServeHTTP(w, r)
		}),
		TLSConfig:         conf,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	cl := countingListener{Listener: l, s: s}
	go func() {
		if conf != nil {
			srv.ServeTLS(cl, "", "")
		} else {
			srv.Serve(cl)
		}
	}()
	t.Cleanup(func() { srv.Close() })
	return s
}

// url is the server's root URL under a name.
func (s *hostServer) url(scheme, host string) string {
	return fmt.Sprintf("%s://%s/", scheme, net.JoinHostPort(host, strconv.Itoa(s.port)))
}

// wantAccepted waits a moment for connections in flight, then checks the
// count.
func (s *hostServer) wantAccepted(t *testing.T, want int) {
	t.Helper()
	if got := settleCount(&s.accepted, want); got != want {
		t.Errorf("host server :%d accepted %d connections; want %d", s.port, got, want)
	}
}

func (s *hostServer) wantRequests(t *testing.T, atLeast int) {
	t.Helper()
	if got := settleCount(&s.requests, atLeast); got < atLeast {
		t.Errorf("host server :%d answered %d requests; want at least %d", s.port, got, atLeast)
	}
}

// settleCount waits until n reaches want, or briefly when it must stay below.
func settleCount(n *atomic.Int32, want int) int {
	deadline := time.Now().Add(500 * time.Millisecond)
	for time.Now().Before(deadline) && int(n.Load()) < want {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	return int(n.Load())
}

type countingListener struct {
	net.Listener
	s *hostServer
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.s.accepted.Add(1)
		c = countingConn{Conn: c, read: &l.s.read}
	}
	return c, err
}

type countingConn struct {
	net.Conn
	read *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

// udpSink counts the datagrams that reach a host address.
type udpSink struct {
	port int
	got  atomic.Int32
}

func listenUDP(t *testing.T, ip string) *udpSink {
	t.Helper()
	c, err := net.ListenPacket("udp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	u := &udpSink{port: c.LocalAddr().(*net.UDPAddr).Port}
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := c.ReadFrom(buf); err != nil {
				return
			}
			u.got.Add(1)
		}
	}()
	return u
}

func (u *udpSink) wantReceived(t *testing.T, want int) {
	t.Helper()
	if got := settleCount(&u.got, want); got != want {
		t.Errorf("host UDP socket :%d received %d datagrams; want %d", u.port, got, want)
	}
}

// hostResolver is the first nameserver of /etc/resolv.conf, or "".
func hostResolver(t *testing.T) string {
	b, err := os.ReadFile("/etc/resolv.conf")
	if err != nil {
		t.Logf("no /etc/resolv.conf: %v", err)
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "nameserver" && !strings.Contains(f[1], ":") {
			return f[1]
		}
	}
	return ""
}

// --- TLS ---

// testCA is a certificate authority made for one scenario; its
// certificate is ca.pem in the workspace, for the clients in the sandbox.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func (e *env) newCA() *testCA {
	e.t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		e.t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "forgebox integration test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		e.t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		e.t.Fatal(err)
	}
	e.write(filepath.Join(e.ws, "ca.pem"), string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	return &testCA{cert: cert, key: key}
}

// serverConfig is a TLS configuration with a certificate for names.
func (ca *testCA) serverConfig(t *testing.T, names ...string) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: names[0]},
		DNSNames:     names,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}

// --- Tools ---

// needTools skips when a program the scenario drives is missing from the
// PATH the harness gives the sandbox.
func needTools(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if harnessPath(n) == "" {
			t.Skipf("%s is not installed: this scenario drives it inside the sandbox", n)
		}
	}
}

// harnessPath finds a program as the sandboxed command will (env.command's
// PATH), not as the test process would: python3 may differ.
func harnessPath(name string) string {
	for _, dir := range []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"} {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

func mustOutput(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		t.Fatalf("%s %q: %v", name, args, err)
	}
	return string(out)
}

// --- git and pip servers ---

// gitProjectRoot makes a bare repository repo.git, owned by the test
// process (git-http-backend runs as it, and refuses others' repositories).
func gitProjectRoot(t *testing.T, e *env) string {
	t.Helper()
	src, root := filepath.Join(e.dir, "git-src"), filepath.Join(e.dir, "git-root")
	for _, d := range []string{src, root} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(src, "README"), []byte("cloned through forgebox\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git := func(dir string, args ...string) {
		cmd := exec.Command(harnessPath("git"), append([]string{"-c", "user.name=host", "-c", "user.email=host@example.com"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+root)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %q: %v\n%s", args, err, out)
		}
	}
	git(src, "init", "-q", "-b", "main")
	git(src, "add", "README")
	git(src, "commit", "-q", "-m", "first")
	git(root, "clone", "-q", "--bare", src, "repo.git")
	return root
}

// serveGit serves the repositories under root with git's smart HTTP
// protocol, over HTTPS.
func serveGit(t *testing.T, conf *tls.Config, backend, root string) *hostServer {
	t.Helper()
	return serveHost(t, "127.0.0.1", conf, &cgi.Handler{Path: backend,
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + root}})
}

// buildWheel makes a pure-Python wheel of one module, NAME/__init__.py,
// and returns it with its SHA-256 (hex) for the index.
func buildWheel(t *testing.T, name, version, code string) ([]byte, string) {
	t.Helper()
	info := name + "-" + version + ".dist-info/"
	files := []struct{ path, data string }{
		{name + "/__init__.py", code},
		{info + "METADATA", "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n"},
		{info + "WHEEL", "Wheel-Version: 1.0\nGenerator: forgebox-integration\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	var record strings.Builder
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	add := func(path, data string) {
		w, err := zw.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, data)
	}
	for _, f := range files {
		add(f.path, f.data)
		sum := sha256.Sum256([]byte(f.data))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.path, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.data))
	}
	add(info+"RECORD", record.String()+info+"RECORD,,\n")
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(buf.Bytes())
	return buf.Bytes(), hex.EncodeToString(sum[:])
}

// pypi is a PEP 503 simple index of one wheel.
func pypi(wheel []byte, sum string) http.Handler {
	const file = "fbnetpkg-0.1-py3-none-any.whl"
	mux := http.NewServeMux()
	mux.HandleFunc("/simple/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!DOCTYPE html><html><body><a href="/simple/fbnetpkg/">fbnetpkg</a></body></html>`)
	})
	mux.HandleFunc("/simple/fbnetpkg/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!DOCTYPE html><html><body><a href="/files/%s#sha256=%s">%s</a></body></html>`, file, sum, file)
	})
	mux.HandleFunc("/files/"+file, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(wheel)
	})
	return mux
}

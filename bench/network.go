package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// networkBench measures --net allow: what forgebox's proxy adds to a
// connection and how fast a download through it goes, against curl
// connecting directly on the host and under bubblewrap with the host
// network, all in the same run. A server in this process serves a
// response that closes its connection (each request a new connection: the
// latency figure) and a blob of size bytes (the throughput figure). The
// sandboxed curl reaches the server by the name blob.test, which a hosts
// file maps to 127.0.0.1 for the proxy; allowPrivate admits that address.
func networkBench(dir, bin string, rounds, requests int, size int64) {
	port := blobServer(size)
	// Outside the workspace: a configuration inside it may only tighten.
	cfgDir, err := os.MkdirTemp("", "forgebox-bench-net-")
	must(err)
	defer os.RemoveAll(cfgDir)
	cfg := filepath.Join(cfgDir, "config.json")
	hosts := filepath.Join(cfgDir, "hosts")
	must(os.WriteFile(hosts, []byte("127.0.0.1 blob.test\n"), 0o644))
	must(os.WriteFile(cfg, []byte(`{"forgebox": {"network": {"allowPrivate": ["127.0.0.1"], "hosts": "`+hosts+`"}}}`), 0o644))
	sandboxed := []string{bin, "run", "--yes", "--no-history", "--policy", cfg, "--net", "allow=blob.test", "--"}
	bwrap := []string{"bwrap", "--unshare-all", "--share-net", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"}
	direct := "http://127.0.0.1:" + port
	named := "http://blob.test:" + port

	fmt.Printf("\nnetwork allowlist (--net allow), curl against a server on the host's loopback, %d interleaved rounds\n", rounds)
	// Latency: one curl fetches the small response requests times, on a
	// new connection each time; the medians of its per-request times
	// leave curl's own start out.
	small := func(base string, extra ...string) []string {
		args := append([]string{"curl", "-sS", "-w", "%{time_total}\\n"}, extra...)
		for range requests {
			args = append(args, "-o", "/dev/null", base+"/small")
		}
		return args
	}
	var latDirect, latTunnel, latForward, latBwrap []float64
	for range rounds {
		latDirect = append(latDirect, curlValues(dir, small(direct, "--noproxy", "*"), 1000)...)
		latBwrap = append(latBwrap, curlValues(dir, append(bwrap, small(direct, "--noproxy", "*")...), 1000)...)
		latTunnel = append(latTunnel, curlValues(dir, append(sandboxed, small(named, "--proxytunnel")...), 1000)...)
		latForward = append(latForward, curlValues(dir, append(sandboxed, small(named)...), 1000)...)
	}
	d := pct(latDirect, 50)
	fmt.Printf("  per request, new connection each   direct %.3f ms  bwrap --share-net %.3f ms\n", d, pct(latBwrap, 50))
	fmt.Printf("    through the proxy, CONNECT        %.3f ms  (+%.3f ms per connection)\n", pct(latTunnel, 50), pct(latTunnel, 50)-d)
	fmt.Printf("    through the proxy, HTTP forwarded %.3f ms  (+%.3f ms per connection)\n", pct(latForward, 50), pct(latForward, 50)-d)

	// Throughput: one download of size bytes per run.
	blob := func(base string, extra ...string) []string {
		return append(append([]string{"curl", "-sS", "-o", "/dev/null", "-w", "%{speed_download}\\n"}, extra...), base+"/blob")
	}
	// The floor of any relay here: a bare one, io.Copy each way (splice),
	// on the host, no sandbox and no checks.
	relayed := "http://127.0.0.1:" + bareRelay("127.0.0.1:"+port)
	var tpDirect, tpTunnel, tpForward, tpBwrap, tpRelay, ratio []float64
	for range rounds {
		dd := curlValues(dir, blob(direct, "--noproxy", "*"), 1e-6)[0]
		tt := curlValues(dir, append(sandboxed, blob(named, "--proxytunnel")...), 1e-6)[0]
		tpDirect, tpTunnel = append(tpDirect, dd), append(tpTunnel, tt)
		ratio = append(ratio, tt/dd)
		tpForward = append(tpForward, curlValues(dir, append(sandboxed, blob(named)...), 1e-6)[0])
		tpBwrap = append(tpBwrap, curlValues(dir, append(bwrap, blob(direct, "--noproxy", "*")...), 1e-6)[0])
		tpRelay = append(tpRelay, curlValues(dir, blob(relayed, "--noproxy", "*"), 1e-6)[0])
	}
	d = pct(tpDirect, 50)
	fmt.Printf("  download of %d MiB                  direct %.0f MB/s  bwrap --share-net %.0f MB/s\n", size>>20, d, pct(tpBwrap, 50))
	fmt.Printf("    through the proxy, CONNECT        %.0f MB/s  (median of round ratios %.2fx direct; goal >= 0.8x)\n", pct(tpTunnel, 50), pct(ratio, 50))
	fmt.Printf("    through the proxy, HTTP forwarded %.0f MB/s  (%.2fx direct)\n", pct(tpForward, 50), pct(tpForward, 50)/d)
	fmt.Printf("    a bare relay on the host          %.0f MB/s  (%.2fx direct: what any extra hop costs here)\n", pct(tpRelay, 50), pct(tpRelay, 50)/d)
}

// blobServer serves /small (a few bytes, then the connection closes) and
// /blob (size zero bytes) on 127.0.0.1, and returns the port.
func blobServer(size int64) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	chunk := make([]byte, 1<<20)
	mux := http.NewServeMux()
	mux.HandleFunc("/small", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("/blob", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		for left := size; left > 0; {
			n, err := w.Write(chunk[:min(left, int64(len(chunk)))])
			if err != nil {
				return
			}
			left -= int64(n)
		}
	})
	go http.Serve(l, mux)
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// bareRelay relays each connection on a new loopback port to target with
// io.Copy both ways, and returns the port.
func bareRelay(target string) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				u, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer u.Close()
				go io.Copy(u, c)
				io.Copy(c, u)
			}()
		}
	}()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// curlValues runs argv, a curl whose -w prints one number per request,
// and returns the numbers, each multiplied by scale.
func curlValues(dir string, argv []string, scale float64) []float64 {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		fail(fmt.Sprintf("%s: %v\n%s", strings.Join(argv, " "), err, stderr.String()))
	}
	var v []float64
	for _, f := range strings.Fields(string(out)) {
		x, err := strconv.ParseFloat(f, 64)
		if err != nil {
			fail(fmt.Sprintf("%s: unexpected output %q", strings.Join(argv, " "), out))
		}
		v = append(v, x*scale)
	}
	if len(v) == 0 {
		fail(fmt.Sprintf("%s: no output", strings.Join(argv, " ")))
	}
	return v
}

func must(err error) {
	if err != nil {
		fail(err.Error())
	}
}

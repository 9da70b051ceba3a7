// Command bench measures forgebox against bubblewrap in the same run.
//
//	go run ./bench -forgebox bin/forgebox [-n 400] [-throughput=false] [-policy=false] [-corpus=false] [-history=false] [-everyday=false]
//
// Startup: `forgebox run --pty -- /bin/true` (namespaces, mounts and a
// pseudo-terminal) and the same without --pty, each paired with
// `bwrap --unshare-all --die-with-parent --ro-bind / / --dev /dev --proc
// /proc --tmpfs /tmp /bin/true`. Runs are interleaved so that the machine's
// noise hits both alike; the report gives medians, p99 and the median of
// the per-pair ratios.
//
// Throughput: a command printing 1 GiB through forgebox, in pipe mode (the
// output handed over, and copied to keep its head and tail for the history
// with --keep-output) and on a pseudo-terminal, against the same command
// run directly.
//
// Policy: forgebox check --batch over a mix of agent command lines, on one
// core; there is no peer to compare with, so the figures face the goals.
//
// Corpus: the judge's errors on command lines other projects label
// dangerous or harmless, per source and per category (TestCorpus's table),
// and its speed over those lines (corpus.go).
//
// History: what recording a run adds, in interleaved pairs with
// --no-history (see history.go).
//
// Network: the allowlist proxy's added latency per connection and its
// download throughput, against direct and bwrap --share-net (network.go).
//
// Everyday: small Go, Python, Node and Rust projects built and tested
// offline under forgebox against the same without a sandbox (everyday.go).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/forgebox/forgebox/bench/pairs"
)

func main() {
	fb := flag.String("forgebox", "bin/forgebox", "the forgebox binary to measure")
	n := flag.Int("n", 400, "paired runs per startup comparison")
	tp := flag.Bool("throughput", true, "measure output throughput too")
	rounds := flag.Int("rounds", 5, "interleaved rounds per throughput figure")
	size := flag.Int64("bytes", 1<<30, "bytes printed by the throughput command")
	pol := flag.Bool("policy", true, "measure the judge (forgebox check --batch) too")
	hist := flag.Bool("history", true, "measure what recording a run in the history adds")
	serve := flag.Bool("serve", true, "measure the MCP server's round trips")
	serveN := flag.Int("serve-n", 200, "rounds for the MCP server figures")
	histN := flag.Int("history-n", 300, "paired runs for the history figure")
	corpus := flag.Bool("corpus", true, "score the judge on the labelled corpus and measure its speed over it")
	mixFile := flag.String("mix", "policy/testdata/agent-mix.json", "the agent command lines the policy figure judges")
	network := flag.Bool("network", true, "measure the network allowlist's proxy (--net allow)")
	netBytes := flag.Int64("net-bytes", 100<<20, "bytes of the download through the proxy")
	netRequests := flag.Int("net-requests", 50, "connections per round for the proxy's latency figure")
	tree := flag.Int("tree-files", 100000, "files in the workspace of the post-run check's figure (0: skip it)")
	treeN := flag.Int("tree-n", 60, "paired runs for the post-run check's figure")
	baseline := flag.String("baseline", "", "an earlier forgebox binary to compare the launch, the post-run check and the MCP round trip with")
	ed := flag.Bool("everyday", true, "build and test the everyday projects (Go, Python, Node, Rust) with and without forgebox")
	edRounds := flag.Int("everyday-rounds", 5, "interleaved pairs per everyday project")
	user := flag.String("user", "fbtest", "also measure the launch as this ordinary user when run as root (empty: only as the caller)")
	load := flag.Bool("load", true, "also measure the launch while a CPU-bound job keeps every core busy")
	flag.Parse()
	if _, err := exec.LookPath("bwrap"); err != nil {
		fail("bwrap is not installed (apt-get install bubblewrap): it is the reference")
	}
	ws, err := os.MkdirTemp("", "forgebox-bench-")
	if err != nil {
		fail(err.Error())
	}
	defer os.RemoveAll(ws)
	bin, _ := filepath.Abs(*fb)
	if *baseline != "" {
		dir, err := os.MkdirTemp("", "forgebox-bench-bin-")
		if err != nil {
			fail(err.Error())
		}
		defer os.RemoveAll(dir)
		bin, *baseline = sameFooting(dir, bin, *baseline)
	}

	fmt.Printf("layers on: %s\n", layers(ws, bin))
	if *n > 0 {
		launchBench(ws, bin, *baseline, *n, *user, *load)
		breakdown(ws, bin, 50)
	}
	if *undoOn {
		undoBench(bin, *undoN, *undoFiles)
	}

	if *tp {
		fmt.Printf("\nthroughput, %d MiB of output read from a pipe, median of %d interleaved rounds\n", *size>>20, *rounds)
		cmd := []string{"head", "-c", fmt.Sprint(*size), "/dev/zero"}
		var direct, pipe, kept, pty, basePipe []float64
		for i := 0; i < *rounds; i++ {
			direct = append(direct, throughput(ws, cmd))
			pipe = append(pipe, throughput(ws, append([]string{bin, "run", "--"}, cmd...)))
			if *baseline != "" {
				basePipe = append(basePipe, throughput(ws, append([]string{*baseline, "run", "--"}, cmd...)))
			}
			kept = append(kept, throughput(ws, append([]string{bin, "run", "--keep-output", "--"}, cmd...)))
			pty = append(pty, throughput(ws, append([]string{bin, "run", "--pty", "--"}, cmd...)))
		}
		d, p, k, t := pct(direct, 50), pct(pipe, 50), pct(kept, 50), pct(pty, 50)
		fmt.Printf("  direct                             %8.0f MB/s\n", d)
		fmt.Printf("  forgebox pipe mode                 %8.0f MB/s  (%.2fx direct; goal >= 1000 MB/s)\n", p, p/d)
		fmt.Printf("  forgebox pipe mode, --keep-output  %8.0f MB/s  (%.2fx direct, %.2fx handed over; min %.0f, max %.0f)\n",
			k, k/d, k/p, pct(kept, 0), pct(kept, 100))
		fmt.Printf("  forgebox pty mode                  %8.0f MB/s  (goal >= 100 MB/s)\n", t)
		if *baseline != "" {
			b := pct(basePipe, 50)
			fmt.Printf("  the baseline's pipe mode           %8.0f MB/s  (this build %.2fx the baseline)\n", b, p/b)
		}
	}
	if *pol {
		policyBench(bin, *mixFile, 100000, *rounds)
	}
	if *corpus {
		corpusBench(bin, "policy/testdata/corpus", 100000, *rounds)
	}
	if *hist {
		historyBench(ws, bin, *histN)
	}
	if *serve {
		serveBench(ws, bin, *baseline, *serveN)
	}
	if *network {
		networkBench(ws, bin, *rounds, *netRequests, *netBytes)
	}
	if *tree > 0 {
		treeBench(bin, *baseline, *tree, *treeN)
	}
	if *ed {
		everydayBench(bin, *edRounds)
	}
}

// result is the part of forgebox's JSON result the bench reads.
type result struct {
	Enforced struct {
		Namespaces  []string `json:"namespaces"`
		LandlockABI int      `json:"landlock_abi"`
		Seccomp     bool     `json:"seccomp"`
		Caps        string   `json:"capabilities"`
		Limits      struct {
			Memory, Pids struct {
				Mechanism string `json:"mechanism"`
			}
		} `json:"limits"`
		Missing []string `json:"missing"`
	} `json:"enforced"`
	Timeline []struct {
		Step string `json:"step"`
		At   int64  `json:"at_ns"`
	} `json:"timeline"`
}

func runJSON(dir, bin string, args ...string) result {
	cmd := exec.Command(bin, append([]string{"run", "--json"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	var r result
	if err != nil || json.Unmarshal(out, &r) != nil {
		fail(fmt.Sprintf("forgebox run --json: %v\n%s", err, out))
	}
	return r
}

// layers says what a measured run enforces, so that a figure is never
// read as that of a run with fewer layers.
func layers(dir, bin string) string {
	e := runJSON(dir, bin, "--", "/bin/true").Enforced
	s := fmt.Sprintf("namespaces %s; Landlock ABI %d; seccomp %v; capabilities %s; memory limit by %s, task limit by %s",
		strings.Join(e.Namespaces, ","), e.LandlockABI, e.Seccomp, e.Caps, e.Limits.Memory.Mechanism, e.Limits.Pids.Mechanism)
	if len(e.Missing) > 0 {
		s += "; MISSING: " + strings.Join(e.Missing, "; ")
	}
	return s
}

// breakdown prints the median time of each launch step over n runs of
// forgebox run --pty --trace -- /bin/true, relative to the start of the
// launch (the constructor's fork happens before it, while the Go runtime
// starts).
func breakdown(dir, bin string, n int) {
	at := map[string][]float64{}
	for range n {
		for _, p := range runJSON(dir, bin, "--trace", "--pty", "--", "/bin/true").Timeline {
			at[p.Step] = append(at[p.Step], float64(p.At)/1e6)
		}
	}
	steps := make([]string, 0, len(at))
	for s := range at {
		steps = append(steps, s)
	}
	sort.Slice(steps, func(i, j int) bool { return pct(at[steps[i]], 50) < pct(at[steps[j]], 50) })
	fmt.Printf("\nlaunch steps (forgebox run --pty --trace), median of %d runs, ms from the start of the launch\n", n)
	prev := 0.0
	for _, s := range steps {
		m := pct(at[s], 50)
		fmt.Printf("  %8.3f  %+7.3f  %s\n", m, m-prev, s)
		prev = m
	}
}

// compare runs a and b alternately and prints their medians and p99,
// in wall and CPU time, and the medians of the per-pair ratios a/b.
func compare(dir string, n int, aName string, a []string, bName string, b []string) pairs.Result {
	r, err := pairs.Compare(n, 20, pairs.Cmd{Argv: a, Dir: dir}, pairs.Cmd{Argv: b, Dir: dir})
	if err != nil {
		fail(err.Error())
	}
	fmt.Print(r.Format(aName, bName))
	return r
}

// timeRun runs argv in dir and returns its wall time in milliseconds.
func timeRun(dir string, argv []string) float64 {
	s, err := pairs.Run(pairs.Cmd{Argv: argv, Dir: dir})
	if err != nil {
		fail(err.Error())
	}
	return s.Wall
}

func pct(v []float64, p int) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	i := len(s) * p / 100
	if i >= len(s) {
		i = len(s) - 1
	}
	return s[i]
}

// throughput returns the MB/s at which argv's stdout arrives in a pipe.
func throughput(dir string, argv []string) float64 {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	out, err := cmd.StdoutPipe()
	if err != nil {
		fail(err.Error())
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fail(err.Error())
	}
	n, _ := io.CopyBuffer(io.Discard, out, make([]byte, 1<<20))
	if err := cmd.Wait(); err != nil {
		fail(fmt.Sprintf("%s: %v", strings.Join(argv, " "), err))
	}
	return float64(n) / time.Since(start).Seconds() / 1e6
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "bench:", msg)
	os.Exit(1)
}

// sameFooting copies the binary and the baseline into dir, written the same
// way: the same bytes start 15-20% slower from a file cp wrote than from
// the one the Go linker wrote (measured on this VM: forgebox version,
// 100 pairs, 0.82x CPU), which would otherwise count for the newer build.
func sameFooting(dir, bin, baseline string) (string, string) {
	if err := os.Chmod(dir, 0o755); err != nil {
		fail(err.Error())
	}
	out := make([]string, 2)
	for i, src := range []string{bin, baseline} {
		b, err := os.ReadFile(src)
		if err != nil {
			fail(err.Error())
		}
		out[i] = filepath.Join(dir, fmt.Sprintf("%d-%s", i, filepath.Base(src)))
		if err := os.WriteFile(out[i], b, 0o755); err != nil {
			fail(err.Error())
		}
	}
	return out[0], out[1]
}

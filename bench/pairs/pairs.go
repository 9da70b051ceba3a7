package pairs

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Cmd is one command to time.
type Cmd struct {
	Argv []string
	Dir  string
	Env  []string             // nil: the caller's environment
	Attr *syscall.SysProcAttr // e.g. credentials to run as another user
}

// Sample is one run's cost in milliseconds.
type Sample struct{ Wall, CPU float64 }

// Run runs c once, discarding its output, and returns what it cost. A run
// that fails is an error that carries its output.
func Run(c Cmd) (Sample, error) {
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Dir, cmd.Env, cmd.SysProcAttr = c.Dir, c.Env, c.Attr
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return Sample{}, fmt.Errorf("%s: %v\n%s", strings.Join(c.Argv, " "), err, out.Bytes())
	}
	ps := cmd.ProcessState
	return Sample{Wall: ms(wall), CPU: ms(ps.UserTime() + ps.SystemTime())}, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Result holds the samples of n pairs, after the warm-up pairs.
type Result struct{ A, B []Sample }

// Compare runs a and b alternately, n pairs after warmup pairs that are
// not kept; who goes first alternates too. During wait the caller may
// keep the machine busy.
func Compare(n, warmup int, a, b Cmd) (Result, error) {
	var r Result
	for i := 0; i < n+warmup; i++ {
		first, second := a, b
		if i%2 == 1 {
			first, second = b, a
		}
		x, err := Run(first)
		if err != nil {
			return r, err
		}
		y, err := Run(second)
		if err != nil {
			return r, err
		}
		if i%2 == 1 {
			x, y = y, x
		}
		if i >= warmup {
			r.A, r.B = append(r.A, x), append(r.B, y)
		}
	}
	return r, nil
}

// Wall and CPU pick a field of a sample.
func Wall(s Sample) float64 { return s.Wall }
func CPU(s Sample) float64  { return s.CPU }

// Pct is the p-th percentile of f over samples (50: the median).
func Pct(samples []Sample, f func(Sample) float64, p int) float64 {
	v := make([]float64, len(samples))
	for i, s := range samples {
		v[i] = f(s)
	}
	return Percentile(v, p)
}

// Ratio is the median of the per-pair ratios a/b of f.
func (r Result) Ratio(f func(Sample) float64) float64 {
	v := make([]float64, len(r.A))
	for i := range r.A {
		if d := f(r.B[i]); d > 0 {
			v[i] = f(r.A[i]) / d
		}
	}
	return Percentile(v, 50)
}

// Diff is the median of the per-pair differences a-b of f, in ms: what
// a adds to b.
func (r Result) Diff(f func(Sample) float64) float64 {
	v := make([]float64, len(r.A))
	for i := range r.A {
		v[i] = f(r.A[i]) - f(r.B[i])
	}
	return Percentile(v, 50)
}

// Percentile is the p-th percentile of v (nearest rank).
func Percentile(v []float64, p int) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	i := len(s) * p / 100
	if i >= len(s) {
		i = len(s) - 1
	}
	return s[i]
}

// Format is one line per side (medians and p99 of wall and CPU) and one
// line of ratios, for a report.
func (r Result) Format(aName, bName string) string {
	line := func(name string, s []Sample) string {
		return fmt.Sprintf("  %-40s wall median %6.2f ms p99 %6.2f ms, CPU median %6.2f ms\n",
			name, Pct(s, Wall, 50), Pct(s, Wall, 99), Pct(s, CPU, 50))
	}
	return line(aName, r.A) + line(bName, r.B) +
		fmt.Sprintf("  ratio (median of pairs): wall %.2fx, CPU %.2fx; of medians: wall %.2fx, CPU %.2fx\n",
			r.Ratio(Wall), r.Ratio(CPU), Pct(r.A, Wall, 50)/Pct(r.B, Wall, 50), Pct(r.A, CPU, 50)/Pct(r.B, CPU, 50))
}

// BuildNop builds a Go program that does nothing, statically (no cgo),
// into dir and returns its path: the reference for a Go binary's start.
func BuildNop(dir string) (string, error) {
	src := filepath.Join(dir, "nop-src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module nop\n\ngo 1.22\n"), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "nop")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build a do-nothing Go program: %v\n%s", err, out)
	}
	return bin, nil
}

// Bwrap is bubblewrap's argv for argv with every namespace, the reference
// launch.
func Bwrap(argv ...string) []string {
	return append([]string{"bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"}, argv...)
}

// Load keeps n CPUs busy with shell loops until the returned stop is
// called: the "under load" case.
func Load(n int) (stop func(), err error) {
	var procs []*exec.Cmd
	stop = func() {
		for _, p := range procs {
			p.Process.Kill()
			p.Wait()
		}
	}
	for range n {
		p := exec.Command("sh", "-c", "while :; do :; done")
		if err := p.Start(); err != nil {
			stop()
			return nil, err
		}
		procs = append(procs, p)
	}
	return stop, nil
}

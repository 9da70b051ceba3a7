package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/forgebox/forgebox/bench/pairs"
)

// launchBudget is testdata/launch-budget.json: the most each figure may
// reach; the timings as a median of per-pair ratios to a reference
// measured in the same run (see TestLaunchBudget).
type launchBudget struct {
	VersionWall float64 `json:"version_wall"` // forgebox version / a do-nothing static Go program, wall
	VersionCPU  float64 `json:"version_cpu"`  // the same, CPU
	LaunchCPU   float64 `json:"launch_cpu"`   // forgebox run -- /bin/true / bwrap, CPU
	LaunchWall  float64 `json:"launch_wall"`  // the same, wall
	// What forgebox's package initialisers allocate, as
	// GODEBUG=inittrace=1 reports it: the same in every run, so it can be
	// tight where the timings cannot.
	InitBytes  int64 `json:"init_bytes"`
	InitAllocs int64 `json:"init_allocs"`
}

const budgetFile = "testdata/launch-budget.json"

// TestLaunchBudget keeps forgebox's start from growing unseen (issue 21):
// `forgebox version` against a Go program that does nothing, built here,
// and `forgebox run -- /bin/true` (judge and history on, every layer
// on) against bubblewrap, each in interleaved pairs, as the caller (CI
// runs the package as root and again as an ordinary user). A figure is
// the median of the per-pair ratios, so that the machine's noise hits
// both sides alike; it fails when a ratio stays past the budget in
// testdata/launch-budget.json in three rounds, so that one burst of load
// does not fail it but a new heavy package initialiser or a slower launch
// does. The budget has headroom over the figures measured when it was
// set; lowering it after an improvement is how the gain is kept.
func TestLaunchBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the launch (about 5 s)")
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap is the reference and is not installed (apt-get install bubblewrap)")
	}
	b, err := os.ReadFile(budgetFile)
	if err != nil {
		t.Fatal(err)
	}
	var budget launchBudget
	if err := json.Unmarshal(b, &budget); err != nil || budget.VersionWall <= 0 || budget.VersionCPU <= 0 || budget.LaunchCPU <= 0 || budget.LaunchWall <= 0 || budget.InitBytes <= 0 || budget.InitAllocs <= 0 {
		t.Fatalf("%s: %v (want every budget set and positive: %s)", budgetFile, err, b)
	}
	me := mode{name: "caller", uid: os.Getuid(), gid: os.Getgid()}
	e := newEnv(t, me)
	ref, err := pairs.BuildNop(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cmd := func(argv ...string) pairs.Cmd {
		c := e.command(context.Background(), argv[0], argv[1:]...)
		return pairs.Cmd{Argv: c.Args, Dir: c.Dir, Env: c.Env, Attr: c.SysProcAttr}
	}
	checkInits(t, e, budget)
	type check struct {
		name, what string
		got, limit float64
		r          pairs.Result
	}
	measure := func() ([]check, error) {
		v, err := pairs.Compare(25, 5, cmd(forgebox, "version"), cmd(ref))
		if err != nil {
			return nil, err
		}
		l, err := pairs.Compare(25, 5, cmd(forgebox, "run", "--", "/bin/true"), cmd(pairs.Bwrap("/bin/true")...))
		if err != nil {
			return nil, err
		}
		return []check{
			{"version_wall", "forgebox version / a do-nothing static Go program, wall", v.Ratio(pairs.Wall), budget.VersionWall, v},
			{"version_cpu", "forgebox version / a do-nothing static Go program, CPU", v.Ratio(pairs.CPU), budget.VersionCPU, v},
			{"launch_wall", "forgebox run -- /bin/true / bwrap, wall", l.Ratio(pairs.Wall), budget.LaunchWall, l},
			{"launch_cpu", "forgebox run -- /bin/true / bwrap, CPU", l.Ratio(pairs.CPU), budget.LaunchCPU, l},
		}, nil
	}
	// A check fails when it is over its budget in every round: a burst
	// of load passes, a start that grew stays over.
	const rounds = 3
	passed := map[string]bool{}
	last := map[string]string{}
	for round := 1; round <= rounds && len(passed) < 4; round++ {
		checks, err := measure()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range checks {
			t.Logf("round %d: %s: %.2fx (budget %s %.2fx)", round, c.what, c.got, c.name, c.limit)
			if c.got <= c.limit {
				passed[c.name] = true
			} else {
				last[c.name] = fmt.Sprintf("%s: median of 25 interleaved pairs %.2fx exceeds the budget %s = %.2fx in integration/%s in each of %d rounds; the last:\n%s",
					c.what, c.got, c.name, c.limit, budgetFile, rounds, c.r.Format("forgebox", "reference"))
			}
		}
	}
	failed := false
	for _, name := range []string{"version_wall", "version_cpu", "launch_wall", "launch_cpu"} {
		if !passed[name] {
			t.Errorf("%s", last[name])
			failed = true
		}
	}
	if !failed {
		return
	}
	t.Log("a new dependency's package initialisers (GODEBUG=inittrace=1 forgebox version lists them) or work added to the launch (forgebox run --trace) is the usual cause")
}

// inits is what GODEBUG=inittrace=1 says about one start: per package,
// the bytes and allocations of its initialisers.
type inits struct {
	packages      int
	bytes, allocs int64
	top           []string // the largest allocators, for the message
}

// checkInits fails when forgebox version's package initialisers allocate
// more than the budget: a deterministic measure of the init work every
// forgebox process does before main, `forgebox run` included.
func checkInits(t *testing.T, e *env, budget launchBudget) {
	t.Helper()
	var best *inits
	for range 3 { // the same give or take a few hundred bytes: keep the least
		cmd := e.command(context.Background(), forgebox, "version")
		cmd.Env = append(cmd.Env, "GODEBUG=inittrace=1")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("GODEBUG=inittrace=1 forgebox version: %v\n%s", err, stderr.String())
		}
		in := parseInitTrace(stderr.String())
		if in.packages == 0 {
			t.Fatalf("GODEBUG=inittrace=1 forgebox version printed no initialiser this test can read:\n%s", stderr.String())
		}
		if best == nil || in.bytes < best.bytes {
			best = &in
		}
	}
	t.Logf("%d package initialisers: %d bytes in %d allocations (budget init_bytes %d, init_allocs %d)", best.packages, best.bytes, best.allocs, budget.InitBytes, budget.InitAllocs)
	if best.bytes > budget.InitBytes || best.allocs > budget.InitAllocs {
		t.Errorf("forgebox's package initialisers allocate %d bytes in %d allocations, past the budget init_bytes = %d, init_allocs = %d in integration/%s; every forgebox process pays for it before main. The largest: %s",
			best.bytes, best.allocs, budget.InitBytes, budget.InitAllocs, budgetFile, strings.Join(best.top, ", "))
	}
}

// parseInitTrace reads lines like
// "init net/netip @1.2 ms, 0.1 ms clock, 744 bytes, 18 allocs".
func parseInitTrace(s string) inits {
	var in inits
	type pkg struct {
		name  string
		bytes int64
	}
	var pkgs []pkg
	for line := range strings.Lines(s) {
		f := strings.Fields(line)
		if len(f) < 11 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		b, err1 := strconv.ParseInt(f[7], 10, 64)
		a, err2 := strconv.ParseInt(f[9], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		in.packages, in.bytes, in.allocs = in.packages+1, in.bytes+b, in.allocs+a
		pkgs = append(pkgs, pkg{f[1], b})
	}
	slices.SortFunc(pkgs, func(x, y pkg) int { return int(y.bytes - x.bytes) })
	for _, p := range pkgs[:min(5, len(pkgs))] {
		in.top = append(in.top, fmt.Sprintf("%s %d bytes", p.name, p.bytes))
	}
	return in
}

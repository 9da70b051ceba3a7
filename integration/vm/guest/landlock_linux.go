package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// landlockFeature is a Landlock feature forgebox needs, by the name its
// refusals and enforced.missing give it, with the ABI that brought it.
type landlockFeature struct {
	name string
	abi  int
}

var (
	landlockFS     = landlockFeature{"landlock filesystem rules", 1}
	landlockTCP    = landlockFeature{"landlock TCP bind denial and connect to the proxy's port only", 4} // needed with --net allow
	landlockScoped = landlockFeature{"landlock scoping of abstract Unix sockets and signals", 6}
)

// checkLandlock: forgebox applies the Landlock ABI the kernel has
// (enforced.landlock_abi), refuses a plain run when the kernel lacks a
// feature the run needs (exit 125, naming it), and with --best-effort runs
// and lists exactly the missing features. Then it attacks what Landlock
// guards: TCP on the sandbox's own loopback (--net allow, where only the
// proxy's port may be reached; --net none allows it), and an abstract
// Unix socket of the guest (--net host, where only Landlock scoping stands
// in the way). Where forgebox says a feature is enforced, the attack must
// fail and the guest's listener see nothing; where it says the feature is
// missing, what the attack did is logged. A kernel without Landlock (ABI
// 0) refuses every run for the file rules; --best-effort then lists every
// feature missing, and may run without a sandbox at all (without the mount
// API), the attacks then reaching the guest's own loopback.
func checkLandlock(ctx context.Context, g *guest) (string, error) {
	abi := kernelLandlockABI()
	var details []string

	// --net allow: bind and connect TCP on the sandbox's loopback. Without
	// the mount API (and so without namespaces, and Landlock too) --net
	// allow is refused even with --best-effort: --net none then, which
	// would share the guest's loopback.
	netArgs := []string{"--net", "allow"}
	if !mountAPI() {
		netArgs = []string{"--net", "none"}
	}
	r, refused, err := g.landlockRun(ctx, abi, landlockTCP, append(netArgs, "--", "/bin/probe", "serve-loopback")...)
	if err != nil {
		return "", err
	}
	g.fact("run_landlock_refused", map[bool]string{true: "yes", false: "no"}[refused != ""])
	if refused != "" {
		details = append(details, "refused: "+refused)
	}
	g.fact("run_landlock_abi", strconv.Itoa(r.Enforced.LandlockABI))
	if err := landlockReport(r, abi); err != nil {
		return "", err
	}
	v, err := probeVerdict(r.Stdout)
	if err != nil {
		return "", err
	}
	if !r.Enforced.Sandbox {
		details = append(details, fmt.Sprintf("--best-effort ran without a sandbox (%s)", firstMissing(r, "namespaces")))
	}
	switch {
	case r.Enforced.LandlockTCP && v.OK:
		return "", fmt.Errorf("enforced.landlock_tcp_denied is true, but the sandbox served and reached TCP on its loopback: %+v", v)
	case r.Enforced.LandlockTCP:
		details = append(details, fmt.Sprintf("ABI %d enforced; TCP on the sandbox's loopback refused (%s)", abi, v.Errno))
	case abi == 0:
		details = append(details, fmt.Sprintf("--best-effort: no Landlock applied, %d layers missing; TCP on the run's loopback: ok=%v %s", len(r.Enforced.Missing), v.OK, v.Errno))
	default:
		details = append(details, fmt.Sprintf("--best-effort: ABI %d enforced, %d features missing; TCP on the sandbox's loopback: ok=%v %s", abi, len(r.Enforced.Missing), v.OK, v.Errno))
	}

	// --net host: the guest's abstract socket, reachable but for Landlock.
	name := fmt.Sprintf("fbvm-abstract-%s-%d", g.who, os.Getpid())
	l, err := net.Listen("unix", "@"+name)
	if err != nil {
		return "", err
	}
	var accepted atomic.Int32
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	r, refused, err = g.landlockRun(ctx, abi, landlockScoped, "--net", "host", "--", "/bin/probe", "connect-abstract "+name)
	time.Sleep(100 * time.Millisecond) // let a queued connection be accepted
	l.Close()
	if err != nil {
		return "", err
	}
	if err := landlockReport(r, abi); err != nil {
		return "", fmt.Errorf("with --net host: %w", err)
	}
	if v, err = probeVerdict(r.Stdout); err != nil {
		return "", err
	}
	switch n := accepted.Load(); {
	case r.Enforced.LandlockScoped && (v.OK || n > 0):
		return "", fmt.Errorf("enforced.landlock_scoped is true, but the sandbox connected to the guest's abstract socket @%s (probe %+v, %d accepted)", name, v, n)
	case r.Enforced.LandlockScoped:
		details = append(details, fmt.Sprintf("--net host: the guest's abstract socket refused (%s), nothing accepted", v.Errno))
	default:
		details = append(details, fmt.Sprintf("--net host: %s; --best-effort: the guest's abstract socket accepted %d connections (scoping reported missing)", refused, n))
	}
	return strings.Join(details, "; "), nil
}

// landlockRun runs forgebox with args. Where the kernel's ABI lacks need,
// the plain run must be refused naming it (or naming the file rules, on a
// kernel without Landlock), and the run is repeated with --best-effort;
// refused is then forgebox's message. A --best-effort run without a
// sandbox must say so in enforced.missing.
func (g *guest) landlockRun(ctx context.Context, abi int, need landlockFeature, args ...string) (r runResult, refused string, err error) {
	r, o, err := g.runJSON(ctx, "landlock", args...)
	if err != nil {
		return r, "", err
	}
	if abi >= need.abi {
		if o.exit != 0 || r.Enforced == nil {
			g.logf("landlock", "%v", o)
			return r, "", fmt.Errorf("Landlock ABI %d has %s, yet forgebox %s exited %d", abi, need.name, strings.Join(args, " "), o.exit)
		}
		return r, "", nil
	}
	says := fmt.Sprintf("Landlock ABI %d", abi)
	if abi < landlockFS.abi {
		need, says = landlockFS, "Landlock"
	}
	switch {
	case o.exit != 125 || r.Error == nil || r.Error.Code != "unavailable":
		g.logf("landlock", "%v", o)
		return r, "", fmt.Errorf("Landlock ABI %d lacks %s, yet forgebox %s exited %d, not 125 (unavailable)", abi, need.name, strings.Join(args, " "), o.exit)
	case r.Error.Layer != need.name || !strings.Contains(r.Error.Message, says):
		return r, "", fmt.Errorf("refused for layer %q (%s), want %q, the message naming %q", r.Error.Layer, r.Error.Message, need.name, says)
	}
	refused = fmt.Sprintf("exit 125 for %q", r.Error.Layer)
	r, o, err = g.runJSON(ctx, "landlock", append([]string{"--best-effort"}, args...)...)
	if err != nil {
		return r, refused, fmt.Errorf("refused (%s), and with --best-effort: %w", refused, err)
	}
	if o.exit != 0 || r.Enforced == nil {
		g.logf("landlock", "%v", o)
		return r, refused, fmt.Errorf("refused (%s), and --best-effort exited %d", refused, o.exit)
	}
	if !r.Enforced.Sandbox && firstMissing(r, "namespaces") == "" {
		return r, refused, fmt.Errorf("refused (%s); --best-effort ran without a sandbox, and enforced.missing does not list the namespaces: %q", refused, r.Enforced.Missing)
	}
	return r, refused, nil
}

// landlockReport checks what a run says it enforced against the kernel's
// ABI: the ABI itself, TCP denial and scoping, and the missing list.
func landlockReport(r runResult, abi int) error {
	e := r.Enforced
	if e == nil {
		return errors.New("the result has no enforced section")
	}
	var problems []string
	if e.LandlockABI != abi {
		problems = append(problems, fmt.Sprintf("enforced.landlock_abi %d, the kernel's is %d", e.LandlockABI, abi))
	}
	if want := e.Network == "allow" && abi >= landlockTCP.abi; e.LandlockTCP != want {
		problems = append(problems, fmt.Sprintf("landlock_tcp_denied %v on ABI %d", e.LandlockTCP, abi))
	}
	if e.LandlockScoped != (abi >= landlockScoped.abi) {
		problems = append(problems, fmt.Sprintf("landlock_scoped %v on ABI %d", e.LandlockScoped, abi))
	}
	for _, f := range []landlockFeature{landlockFS, landlockTCP, landlockScoped} {
		if f == landlockTCP && e.Network != "allow" {
			continue
		}
		listed := slices.ContainsFunc(e.Missing, func(m string) bool { return strings.HasPrefix(m, f.name) })
		if want := abi < f.abi; listed != want {
			problems = append(problems, fmt.Sprintf("%q listed missing: %v, want %v", f.name, listed, want))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s (missing=%q)", strings.Join(problems, "; "), e.Missing)
	}
	return nil
}

// firstMissing is the first entry of enforced.missing that starts with
// prefix, or "".
func firstMissing(r runResult, prefix string) string {
	if r.Enforced == nil {
		return ""
	}
	if i := slices.IndexFunc(r.Enforced.Missing, func(m string) bool { return strings.HasPrefix(m, prefix) }); i >= 0 {
		return r.Enforced.Missing[i]
	}
	return ""
}

// verdict is one line of the probe's output.
type verdict struct {
	Op    string   `json:"op"`
	Args  []string `json:"args"`
	OK    bool     `json:"ok"`
	Errno string   `json:"errno"`
	Err   string   `json:"err"`
	Out   string   `json:"out"`
}

// probeVerdict parses the probe's one verdict.
func probeVerdict(stdout string) (verdict, error) {
	var v verdict
	if err := json.Unmarshal([]byte(strings.TrimSpace(stdout)), &v); err != nil {
		return v, fmt.Errorf("the probe's output %q does not parse: %v", stdout, err)
	}
	return v, nil
}

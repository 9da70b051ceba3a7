package main

import (
	"flag"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/forgebox/forgebox/runner"
	"github.com/forgebox/forgebox/sandbox"
)

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// netFlag is --net: a mode (none, loopback, host), or allow=PATTERN[,...]
// (repeatable), which adds hosts to the allowlist; "allow" alone uses the
// configuration's list only.
type netFlag struct {
	mode  string
	allow []string
}

func (n *netFlag) String() string {
	if n.mode == "allow" {
		return "allow=" + strings.Join(n.allow, ",")
	}
	return n.mode
}

func (n *netFlag) Set(v string) error {
	mode, list, hasList := strings.Cut(v, "=")
	if hasList && mode != "allow" {
		return fmt.Errorf("invalid network mode %q (want none, loopback, host, allow or allow=HOST[,HOST...])", v)
	}
	if n.mode != "" && n.mode != mode {
		return fmt.Errorf("--net %s contradicts --net %s", v, n.String())
	}
	switch mode {
	case "none", "loopback", "host", "allow":
	default:
		return fmt.Errorf("invalid network mode %q (want none, loopback, host, allow or allow=HOST[,HOST...])", v)
	}
	n.mode = mode
	for _, p := range strings.Split(list, ",") {
		if p = strings.TrimSpace(p); p != "" {
			n.allow = append(n.allow, p)
		}
	}
	return nil
}

// sizeFlag is a byte count: 1048576, 512k, 64KiB, 1M, 2MiB, 1G.
type sizeFlag struct {
	n   int64
	set bool
}

func (s *sizeFlag) String() string { return strconv.FormatInt(s.n, 10) }

func (s *sizeFlag) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	s.n, s.set = n, true
	return nil
}

func parseSize(v string) (int64, error) {
	t := strings.TrimSpace(strings.ToLower(v))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30},
		{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"b", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSuffix(t, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("invalid size %q (want a byte count such as 65536, 512k or 1MiB)", v)
	}
	return n * mult, nil
}

// durationFlag is a Go duration (30s, 2m, 1h30m) or a number of seconds.
type durationFlag struct{ d time.Duration }

func (d *durationFlag) String() string { return d.d.String() }

func (d *durationFlag) Set(v string) error {
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 && secs < 1e9 {
		d.d = time.Duration(secs * float64(time.Second))
		return nil
	}
	t, err := time.ParseDuration(v)
	if err != nil || t < 0 {
		return fmt.Errorf("invalid duration %q (want 30s, 5m, 1h or a number of seconds)", v)
	}
	d.d = t
	return nil
}

// limitFlag is a resource limit or "none" (sandbox.NoLimit); a size limit
// takes units (2G, 512MiB), a count does not.
type limitFlag struct {
	n    int64
	size bool
}

func (l *limitFlag) String() string {
	if l.n == sandbox.NoLimit {
		return "none"
	}
	return strconv.FormatInt(l.n, 10)
}

func (l *limitFlag) Set(v string) error {
	if strings.EqualFold(strings.TrimSpace(v), "none") {
		l.n = sandbox.NoLimit
		return nil
	}
	if l.size {
		n, err := parseSize(v)
		if err != nil || n == 0 {
			return fmt.Errorf("invalid size %q (want a size such as 512M or 2G, or none)", v)
		}
		l.n = n
		return nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 1 {
		return fmt.Errorf("invalid count %q (want a whole number of at least 1, or none)", v)
	}
	l.n = n
	return nil
}

// cpuFlag is a number of cores, fractions allowed.
type cpuFlag struct{ f float64 }

func (c *cpuFlag) String() string { return strconv.FormatFloat(c.f, 'g', -1, 64) }

func (c *cpuFlag) Set(v string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(f) || f < sandbox.MinCPUs || f > sandbox.MaxCPUs {
		return fmt.Errorf("invalid CPU count %q (want cores from %v to %d, such as 0.5 or 2)", v, sandbox.MinCPUs, sandbox.MaxCPUs)
	}
	c.f = f
	return nil
}

// humanBytes renders a byte count in the largest binary unit that divides
// it evenly, or in MiB with a fraction.
func humanBytes(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d%s", n/u.size, u.name)
		}
	}
	if n >= 1<<20 {
		return fmt.Sprintf("%.1fMiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

// policyOpts are the flags that choose what a command is judged against.
type policyOpts struct {
	runner.PolicyOptions
	// run holds the sandbox flags of the run to judge for
	// (registerSandbox); nil: the default sandbox's.
	run *runFlags
}

// sandboxFlags are forgebox run's flags that decide what its sandbox
// contains (runner.Containment): check, policy explain and policy approve
// take them, to judge a command as forgebox run with them would.
var sandboxFlags = []string{"net", "rw", "best-effort", "allow-unix-sockets", "no-undo"}

// registerSandbox declares the sandbox flags, read as forgebox run reads
// them (the same flag values).
func (o *policyOpts) registerSandbox(fs *flag.FlagSet) {
	o.run = &runFlags{}
	o.run.flagSet().VisitAll(func(fl *flag.Flag) {
		if slices.Contains(sandboxFlags, fl.Name) {
			fs.Var(fl.Value, fl.Name, fl.Usage)
		}
	})
}

// register declares --policy and --session, and --workspace when the
// command has no --workspace of its own.
func (o *policyOpts) register(fs *flag.FlagSet, workspace bool) {
	fs.StringVar(&o.File, "policy", "", "judge with the configuration `FILE` instead of ~/.config/forgebox/config.json")
	fs.StringVar(&o.Session, "session", "", "the session `ID` whose approvals apply (default: $FORGEBOX_SESSION)")
	if workspace {
		fs.StringVar(&o.Workspace, "workspace", "", "judge as if the project `DIR` were the workspace (default: the current directory)")
	}
}

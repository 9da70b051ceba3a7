package selftest

import (
	"context"
	"errors"
	"strconv"

	"github.com/forgebox/forgebox/sandbox"
)

// ProbeVerb is argv[1] of the probe selftest runs in its sandboxes: the
// forgebox binary is the probe, so that no second binary is needed. It
// differs from the verbs the C constructor takes over (sandbox.ChildVerb
// and run). The caller's main hands the rest of argv to probe.Main.
const ProbeVerb = "__forgebox-probe"

// ErrInterrupted is Run's error when its context ended during an attack;
// the bait was removed.
var ErrInterrupted = errors.New("selftest interrupted")

// Options are what Run needs from its caller beside the spec.
type Options struct {
	// Exe is the forgebox executable: run with ProbeVerb, it is the probe
	// in every sandbox and the bait's host process.
	Exe string
	// FormatBytes renders a byte count as the caller's --memory flag
	// reads it ("64MiB"), for the evidence on the memory limit; nil gives
	// a plain count of bytes.
	FormatBytes func(int64) string
}

func (o Options) bytes(n int64) string {
	if o.FormatBytes == nil {
		return strconv.FormatInt(n, 10) + " bytes"
	}
	return o.FormatBytes(n)
}

// Run plants the bait, attacks it from a sandbox started with spec (the
// caller's flags of forgebox run; its command, workspace and timeouts are
// replaced by selftest's own), attacks the task and memory limits from two
// more, checks the host, and removes the bait, also when ctx ends. What
// spec allows on purpose (--net host, --memory none, --pids none) is
// reported as allowed; with spec.BestEffort, what the host cannot enforce
// does not fail. An error means nothing could be judged.
func Run(ctx context.Context, spec sandbox.Spec, o Options) (*Report, error) {
	if o.Exe == "" {
		return nil, sandbox.Invalidf("selftest needs the forgebox executable, which runs the probe")
	}
	return run(ctx, spec, o, choicesOf(spec))
}

package selftest

import (
	"time"

	"github.com/forgebox/forgebox/cgroup"
	"github.com/forgebox/forgebox/sandbox"
)

// Verdicts, stable for JSON consumers.
const (
	VerdictBlocked      = "blocked"
	VerdictEscaped      = "escaped"
	VerdictNotEnforced  = "not_enforced"
	VerdictAllowed      = "allowed_by_flags"
	VerdictNotTested    = "not_tested"
	VerdictInconclusive = "inconclusive"
)

// ClassResult is the verdict on one class, with its evidence: each attempt
// and its outcome, then what the host showed.
type ClassResult struct {
	Class    string   `json:"class"`
	Title    string   `json:"title"`
	Verdict  string   `json:"verdict"`
	Reason   string   `json:"reason,omitempty"`
	Evidence []string `json:"evidence"`
	// Fails: this verdict makes selftest exit non-zero.
	Fails bool `json:"fails"`
}

// Report is what selftest found: the verdict on each class, what the
// runs enforced, and where the bait was. Its JSON fields are stable for
// agents; the caller adds how long it took and, when nothing could be
// attacked, why (forgebox selftest --json prints both).
type Report struct {
	// Verdict is "pass" (exit 0) or "fail" (exit 1): something escaped,
	// could not be judged, or is not enforced without --best-effort.
	Verdict  string        `json:"verdict"`
	ExitCode int           `json:"exit_code"`
	Classes  []ClassResult `json:"classes"`
	// Enforced is what the main run enforced, with the user's flags;
	// Limits what enforced selftest's own small limits.
	Enforced *sandbox.Enforced `json:"enforced"`
	Limits   *cgroup.Decision  `json:"limits"`
	// Bait is where selftest planted what the probe attacked (removed
	// afterwards); Ignored lists flags of forgebox run the caller did not
	// apply (Run leaves it empty).
	Bait     string   `json:"bait"`
	Ignored  []string `json:"ignored_flags"`
	Warnings []string `json:"warnings"`
	// Duration is how long the attacks and their judging took, bait
	// removal aside.
	Duration time.Duration `json:"-"`
}

// conclude sets the overall verdict from the classes.
func (r *Report) conclude() {
	r.Verdict, r.ExitCode = "pass", 0
	for _, c := range r.Classes {
		if c.Fails {
			r.Verdict, r.ExitCode = "fail", 1
		}
	}
}

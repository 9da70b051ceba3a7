// Package selftest attacks a live sandbox from inside and judges, class by
// class, whether the attack was blocked. It is forgebox selftest without
// the command line: the caller parses the flags into a sandbox.Spec, calls
// Run with the forgebox executable, and renders the Report.
//
// How: Run plants bait on this host (a secret, credential files, files
// outside and protected names inside a workspace, a pathname, an abstract
// and a TCP socket, a process of the caller's), records how it looks,
// starts a sandbox of the caller's spec whose command is the probe (the
// forgebox executable with ProbeVerb, see package probe), then reads the
// probe's verdict on each attempt and looks at the host: a file changed, a
// connection in a listener's backlog, the process gone. Two more runs
// attack selftest's own small task and memory limits with a fork bomb and
// a memory hog. The bait is removed afterwards, also when the context
// ends (ErrInterrupted).
//
// What it guarantees: every attack is made for real, and a class is
// "blocked" only when every attempt was refused and the host shows no
// change; an attempt without a verdict, or a host check that could not be
// made, is "inconclusive", never a pass. An attack that got through is an
// escape when one of the layers that must stop it was in place, and "not
// enforced" (which fails unless spec.BestEffort) when all of them were
// missing. The class identifiers and verdicts are stable for JSON
// consumers.
//
// What it does not guarantee: it tests the attacks it knows, against the
// bait it plants, with the spec it is given; a pass says those were
// blocked, not that no other way out exists. The bait lives where the
// sandbox shows the host read-only (the cache or home directory), so a
// sandbox that breaks only elsewhere passes. The probe is the attacker and
// may run where nothing stops it, so its attacks are bounded (package
// probe) and the limit runs use small limits of selftest's own. Only Linux
// has a sandbox to attack; elsewhere Run fails closed with an
// UnavailableError. Run writes nothing to the caller's streams: rendering,
// flags and exit codes are the caller's.
package selftest

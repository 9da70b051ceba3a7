package runner

import (
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/forgebox/forgebox/pathtree"
	"github.com/forgebox/forgebox/policy"
	"github.com/forgebox/forgebox/sandbox"
)

// Containment is what a run with this spec lets its command reach, as the
// judge weighs it (policy.Containment): contained when the network is off
// (or only the sandbox's own loopback), nothing outside the workspace is
// writable, no host Unix socket is reachable and no layer may be dropped.
// Then a program forgebox does not know, a download or a push can change
// only the workspace. It is the one place that says so, for every surface
// that judges a command forgebox will sandbox.
func Containment(spec sandbox.Spec) policy.Containment {
	if runtime.GOOS != "linux" {
		// macOS's and Windows's sandboxes are built, but their network and
		// filesystem containment is not tested against these attacks here.
		return policy.Containment{How: "the judge does not count forgebox's sandbox on " + runtime.GOOS + " as containing"}
	}
	// The sandbox mounts a /tmp of the run's own; the workspace or a --rw
	// path under /tmp shows through it.
	private := !pathtree.Within(spec.Workspace, "/tmp") && spec.Workspace != ""
	for _, p := range spec.ReadWrite {
		private = private && !pathtree.Within(p, "/tmp")
	}
	var out []string
	switch spec.Network {
	case "", sandbox.NetNone, sandbox.NetLoopback:
	default:
		out = append(out, "--net "+string(spec.Network))
	}
	for _, p := range spec.ReadWrite {
		if spec.Workspace == "" || !pathtree.Within(p, spec.Workspace) {
			out = append(out, "--rw "+p)
		}
	}
	if spec.AllowUnixSockets {
		out = append(out, "--allow-unix-sockets")
	}
	if spec.BestEffort {
		out = append(out, "--best-effort")
	}
	// Undo: the run keeps what it changes in the workspace undoable
	// (sandbox.UndoPossible, the rule the sandbox follows too), whatever
	// else it reaches. A verdict that counts on it (Decision.NeedsUndo)
	// makes the run refuse to start without it (Spec.RequireUndo).
	undo := sandbox.UndoPossible(spec) == nil
	if len(out) > 0 {
		return policy.Containment{How: strings.Join(out, ", "), PrivateTmp: private, Undo: undo}
	}
	return policy.Containment{Contained: true, How: "the sandbox", PrivateTmp: private, Undo: undo}
}

// OnTerminal is spec as a run on a terminal has it (run --pty, an MCP
// shell session, forgebox shell): such a run shows its changes as it makes
// them (an editor, a dev server), which the undo overlay would hold back
// until it ends, so it keeps no undo. The one place that says so, for the
// run and for the judge of a session's commands.
func OnTerminal(spec sandbox.Spec) sandbox.Spec {
	spec.Undo = false
	return spec
}

// Unsandboxed is the containment of a command forgebox judges but does not
// run: the Claude Code hook without --wrap lets Claude Code run it as it is.
var Unsandboxed = policy.Containment{How: "it runs outside forgebox's sandbox"}

// Caches reports whether a run mounts the private package caches: the
// one place that decides it, for every surface that runs a command through
// Run. A judged line that cannot tell the caches from none
// (policy.Decision.CacheFree: readers forgebox knows, on the workspace)
// runs without them, which saves their overlays; leaving them out only
// takes away (the host's caches are read-only then, as the rest of the
// home). They stay for everything else: a command nothing judged
// (--no-policy, a shell session's own shell), one on a terminal (run
// --pty: a person may type anything), and one whose PATH holds a
// directory the command can write or a relative one, where a reader's
// name may find a program of the workspace.
func Caches(spec sandbox.Spec, st sandbox.Streams, d *policy.Decision) bool {
	if spec.NoCache {
		return false
	}
	if d == nil || st.PTY || !d.CacheFree() {
		return true
	}
	env, _, err := sandbox.CommandEnv(spec)
	if err != nil {
		return true
	}
	for _, kv := range env {
		p, ok := strings.CutPrefix(kv, "PATH=")
		if !ok {
			continue
		}
		for _, dir := range filepath.SplitList(p) {
			if !filepath.IsAbs(dir) || spec.Workspace != "" && pathtree.Within(dir, spec.Workspace) ||
				slices.ContainsFunc(spec.ReadWrite, func(w string) bool { return pathtree.Within(dir, w) }) {
				return true
			}
		}
	}
	return false
}

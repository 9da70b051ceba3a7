package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/forgebox/forgebox/policy"
	"github.com/forgebox/forgebox/runner"
	"github.com/forgebox/forgebox/shellquote"
)

// maxAnswer bounds what is read of an answer to the prompt.
const maxAnswer = 256

// readAnswer reads one line from the terminal, a byte at a time: whatever
// is typed after it belongs to the command that runs next. It reports
// false at the end of input.
func readAnswer(r io.Reader) (string, bool) {
	var line []byte
	b := make([]byte, 1)
	for {
		n, err := r.Read(b)
		if n == 1 {
			if b[0] == '\n' {
				return string(line), true
			}
			if len(line) < maxAnswer {
				line = append(line, b[0])
			}
		}
		if err != nil {
			return string(line), len(line) > 0
		}
	}
}

// errNotOffered marks an answer naming a scope the prompt did not offer.
var errNotOffered = errors.New("not offered")

// parseAnswer reads an answer to the approval prompt. ok is false for no
// (the default: an empty line); an error means the answer should be asked
// again.
func parseAnswer(answer string, offered []policy.Scope) (policy.Scope, bool, error) {
	var s policy.Scope
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "", "n", "no":
		return 0, false, nil
	case "o", "once", "y", "yes":
		s = policy.Once
	case "s", "session":
		s = policy.Session
	case "a", "always":
		s = policy.Always
	default:
		return 0, false, fmt.Errorf("unknown answer %q", truncate(answer, 20))
	}
	if !slices.Contains(offered, s) {
		return 0, false, fmt.Errorf("%s is %w for this command", s, errNotOffered)
	}
	return s, true, nil
}

// promptChoices renders the offered scopes: "[o]nce, [s]ession, [N]o".
func promptChoices(offered []policy.Scope) string {
	var parts []string
	for _, s := range offered {
		n := s.String()
		parts = append(parts, "["+n[:1]+"]"+n[1:])
	}
	return strings.Join(append(parts, "[N]o"), ", ")
}

// askPerson puts an asking decision to the person at the terminal and
// returns the scope approved, or false for no.
func askPerson(in io.Reader, out io.Writer, what string, d *policy.Decision, offered []policy.Scope, note string) (policy.Scope, bool) {
	// The command may come from an agent: control characters are shown,
	// never sent to the terminal, so that it cannot hide what it runs.
	fmt.Fprintf(out, "forgebox: approve this command?\n  %s\n", printable(what))
	fmt.Fprintf(out, "  risk %d, %s (%s), %s\n", d.Risk, d.Level, levelMeaning(d.Level), d.Category)
	for _, j := range askingCommands(d) {
		if len(d.Commands) > 1 {
			fmt.Fprintf(out, "  %s:\n", printable(j.Command))
		}
		for _, r := range j.Reasons {
			fmt.Fprintf(out, "    - %s\n", printable(r))
		}
	}
	if note != "" {
		fmt.Fprintf(out, "  (%s)\n", note)
	}
	for range 3 {
		fmt.Fprintf(out, "Run it? %s: ", promptChoices(offered))
		answer, ok := readAnswer(in)
		if !ok {
			fmt.Fprintln(out)
			return 0, false
		}
		s, yes, err := parseAnswer(answer, offered)
		if err == nil {
			return s, yes
		}
		fmt.Fprintf(out, "forgebox: %v\n", err)
	}
	return 0, false
}

// askingCommands are the sub-commands that made the decision ask.
func askingCommands(d *policy.Decision) []policy.Judgement {
	var out []policy.Judgement
	for _, j := range d.Commands {
		if j.Action == policy.Ask {
			out = append(out, j)
		}
	}
	return out
}

// levelMeaning says what a level means to the person deciding.
func levelMeaning(l policy.Level) string {
	switch l {
	case policy.R0:
		return "runs without asking"
	case policy.R1, policy.R2:
		return "approved once per session"
	case policy.R3:
		return "asked every time"
	}
	return "blocked"
}

// commandArgs are the arguments that name a command to forgebox again:
// -c 'LINE' or -- ARGV.
func commandArgs(line string, argv []string) string {
	if argv == nil {
		return "-c " + shellquote.Quote(line)
	}
	return "-- " + shellquote.Join(argv)
}

// approvalHint says how to approve an asking decision without a terminal,
// with the exact commands.
func approvalHint(d *policy.Decision, line string, argv []string, session string) string {
	cmd := commandArgs(line, argv)
	var ways []string
	if d.Offers(policy.Once) {
		ways = append(ways, "once: add --yes to forgebox run")
	}
	if d.Offers(policy.Session) {
		id := session
		if id == "" {
			id = "ID"
		}
		ways = append(ways, fmt.Sprintf("for a session: forgebox policy approve --session %s %s, then run with --session %s (or FORGEBOX_SESSION=%s)", id, cmd, id, id))
	}
	if d.Offers(policy.Always) {
		ways = append(ways, fmt.Sprintf("for good: forgebox policy approve --always %s", cmd))
	}
	if len(ways) == 1 {
		return "approve it " + ways[0] + " (it is asked every time)"
	}
	return "approve it " + strings.Join(ways, "; ")
}

// terminal asks the person at the terminal forgebox runs in.
type terminal struct{ e env }

func (t terminal) Ask(_ context.Context, q runner.Question) (policy.Scope, bool) {
	return t.e.approveAtTerminal(q.Judge, q.Decision, truncate(q.What, 200))
}

// approveAtTerminal asks the person and records a session or standing
// approval. It reports whether the command may run, and the scope of the
// approval that took effect (once, when recording a wider one failed).
func (e env) approveAtTerminal(js *runner.Judge, d *policy.Decision, what string) (policy.Scope, bool) {
	var offered []policy.Scope
	note := ""
	for _, s := range d.Scopes {
		switch {
		case s == policy.Session && js.NoStore != "":
			note = js.NoStore
		case s == policy.Session && js.Store == nil:
			note = "to approve it for this session, set FORGEBOX_SESSION or pass --session ID"
		default:
			offered = append(offered, s)
		}
	}
	scope, ok := askPerson(e.stdin, e.stderr, what, d, offered, note)
	if !ok {
		return 0, false
	}
	_, err := js.Approve(d, scope, time.Now())
	switch {
	case scope == policy.Session && err != nil:
		e.errorf("cannot record the approval for session %s: %v; running it once", js.SessionID, err)
		scope = policy.Once
	case scope == policy.Session:
		e.errorf("approved for session %s", js.SessionID)
	case scope == policy.Always && err != nil:
		e.errorf("cannot record the approval for good: %v; running it once", err)
		scope = policy.Once
	case scope == policy.Always:
		e.errorf("approved for good: the rule is in %s (forgebox policy revoke removes it)", js.UserConfig)
	}
	return scope, true
}

// truncate shortens s to n bytes and marks the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

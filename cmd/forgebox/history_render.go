package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/forgebox/forgebox/history"
	"github.com/forgebox/forgebox/runner"
	"github.com/forgebox/forgebox/sandbox"
	"github.com/forgebox/forgebox/shellquote"
	"golang.org/x/term"
)

// defaultWidth is the table's width when stdout is not a terminal.
const defaultWidth = 100

func terminalWidth(f *os.File) int {
	if w, _, err := term.GetSize(int(f.Fd())); err == nil && w >= 40 {
		return w
	}
	return defaultWidth
}

// writeTable prints runs one line each, newest first as given, cut to
// width columns.
func writeTable(w io.Writer, runs []history.Run, width int, loc *time.Location) {
	if len(runs) == 0 {
		fmt.Fprintln(w, "no runs recorded")
		return
	}
	fmt.Fprintln(w, fitWidth(fmt.Sprintf("%6s  %-14s  %8s  %-9s  %-14s  %s", "ID", "STARTED", "DURATION", "EXIT", "DECISION", "COMMAND"), width))
	for _, r := range runs {
		line := fmt.Sprintf("%6d  %-14s  %8s  %-9s  %-14s  %s", r.ID, r.StartedAt.In(loc).Format("01-02 15:04:05"),
			durationText(r.DurationMS), exitText(&r), decisionText(&r), printable(commandText(&r)))
		fmt.Fprintln(w, fitWidth(line, width))
	}
}

// fitWidth cuts a line to width characters, marking the cut.
func fitWidth(s string, width int) string {
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	runes := []rune(s)
	return string(runes[:width-1]) + "…"
}

// durationText renders a duration in milliseconds for people.
func durationText(ms *float64) string {
	if ms == nil {
		return "-"
	}
	d := time.Duration(*ms * float64(time.Millisecond))
	switch {
	case d < time.Second:
		return strconv.FormatFloat(*ms, 'f', 1, 64) + "ms"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// exitText is how a run ended: its exit code, the signal, timeout or OOM,
// or why it did not finish.
func exitText(r *history.Run) string {
	switch {
	case r.Status != history.StatusFinished:
		return r.Status
	case r.TimedOut:
		return "timeout"
	case r.OOMKilled:
		return "oom"
	case r.Signal != "":
		return r.Signal
	case r.ExitCode != nil:
		return strconv.Itoa(*r.ExitCode)
	}
	return "?"
}

// decisionText is the judge's verdict in a word, with the level.
func decisionText(r *history.Run) string {
	var s string
	switch r.Permission {
	case history.PermAutoApproved:
		s = "auto"
	case history.PermGranted:
		s = "rule"
		if r.Scope == "session" {
			s = "session"
		}
	case history.PermAskedApproved:
		s = "yes"
		if r.Scope != "" && r.Scope != "once" {
			s += "/" + r.Scope
		}
	case history.PermAskedDenied:
		s = "no"
	case history.PermDenied:
		s = "DENIED"
	case history.PermNotJudged, "":
		return "unjudged"
	default:
		s = r.Permission
	}
	if r.Level != "" {
		s += " " + r.Level
	}
	return s
}

// commandText is the command as the person would type it.
func commandText(r *history.Run) string {
	if r.Command != "" {
		return r.Command
	}
	return runner.Display("", r.Argv)
}

// printable renders s on one line: line breaks, tabs and other control
// characters are escaped, so that a stored command can neither break the
// table nor drive the terminal.
func printable(s string) string { return escapeControls(s, false) }

// escapeControls escapes control characters (and invalid UTF-8) as Go
// would quote them, keeping line breaks and tabs when multiline: recorded
// output is shown, never interpreted by the terminal.
func escapeControls(s string, multiline bool) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case multiline && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029',
			r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069': // bidirectional overrides reorder what is shown
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// writeRun prints everything about one run.
func writeRun(w io.Writer, r *history.Run, loc *time.Location) {
	field := func(name, value string) {
		if value != "" {
			fmt.Fprintf(w, "%-18s %s\n", name+":", printable(value))
		}
	}
	fmt.Fprintf(w, "run %d\n", r.ID)
	if r.Command != "" {
		field("command", r.Command)
	} else {
		field("argv", runner.Display("", r.Argv))
	}
	field("status", r.Status)
	if r.ExitCode != nil {
		field("exit code", strconv.Itoa(*r.ExitCode))
	}
	field("signal", r.Signal)
	if r.TimedOut {
		field("timed out", "yes")
	}
	if r.OOMKilled {
		field("oom killed", "yes")
	}
	field("error", r.ErrorCode)
	field("started", r.StartedAt.In(loc).Format(time.RFC3339Nano))
	if r.EndedAt != nil {
		field("ended", r.EndedAt.In(loc).Format(time.RFC3339Nano))
	}
	if r.DurationMS != nil {
		field("duration", durationText(r.DurationMS))
	}
	field("cwd", r.Cwd)
	field("workspace", r.Workspace)
	field("session", r.SessionID)
	field("pty session", r.PTYSessionID)
	perm := r.Permission
	if r.Scope != "" {
		perm += " (" + r.Scope + ")"
	}
	field("permission", perm)
	if r.Permission != history.PermNotJudged {
		field("risk", fmt.Sprintf("%d, %s, %s", r.Risk, r.Level, r.Category))
	}
	field("rule", r.Rule)
	field("reasons", strings.Join(decisionReasons(r.Decision), "; "))
	if len(r.Args) > 0 {
		field("forgebox run", shellquote.Join(r.Args))
	}
	field("forgebox", r.Version)
	field("user", r.User)
	field("host", r.Host)
	if r.PID != 0 {
		field("pid", strconv.Itoa(r.PID))
	}
	if len(r.Env) > 0 {
		fmt.Fprintln(w, "environment:")
		for _, v := range r.Env {
			if v.Secret {
				fmt.Fprintf(w, "  %s (secret: value not kept)\n", printable(v.Name))
			} else {
				fmt.Fprintf(w, "  %s=%s\n", printable(v.Name), printable(v.Value))
			}
		}
	}
	if len(r.Enforced) > 0 {
		var en sandbox.Enforced
		if json.Unmarshal(r.Enforced, &en) == nil {
			field("enforced", describeEnforced(en))
		}
	}
	var nr runner.NetworkRecord
	if len(r.Network) > 0 && json.Unmarshal(r.Network, &nr) == nil && len(nr.Connections)+nr.Omitted > 0 {
		fmt.Fprintln(w, "network:")
		for _, c := range nr.Connections {
			line := fmt.Sprintf("  %s %s %s", c.Decision, printable(net.JoinHostPort(c.Host, strconv.Itoa(int(c.Port)))), c.Protocol)
			if c.Decision == "allowed" {
				line += fmt.Sprintf(" (%d bytes up, %d down)", c.BytesUp, c.BytesDown)
			}
			if c.Code != "" {
				line += ": " + printable(c.Reason)
			}
			fmt.Fprintln(w, line)
		}
		if nr.Omitted > 0 {
			fmt.Fprintf(w, "  and %d more not kept\n", nr.Omitted)
		}
	}
	if !r.OutputKept {
		if r.Status == history.StatusFinished {
			fmt.Fprintln(w, "output:            not kept (handed over to the caller's stdout and stderr; forgebox run --keep-output keeps it)")
		}
		return
	}
	for _, s := range []struct {
		name string
		text string
		n    int64
	}{{"stdout", r.Stdout, r.StdoutBytes}, {"stderr", r.Stderr, r.StderrBytes}} {
		fmt.Fprintf(w, "%s (%d bytes):\n", s.name, s.n)
		if s.text != "" {
			text := escapeControls(s.text, true)
			fmt.Fprint(w, text)
			if !strings.HasSuffix(text, "\n") {
				fmt.Fprintln(w)
			}
		}
	}
	if r.OutputTruncated {
		fmt.Fprintln(w, "(output cut: only the first and last bytes of each stream are kept)")
	}
}

// decisionReasons are the reasons of a recorded decision.
func decisionReasons(raw json.RawMessage) []string {
	var d struct {
		Reasons []string `json:"reasons"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &d) != nil {
		return nil
	}
	return d.Reasons
}

// writeStats prints the counts of the runs and their slowest and most
// frequent commands.
func writeStats(w io.Writer, s *history.Stats) {
	fmt.Fprintf(w, "%d runs\n", s.Total)
	counts := func(name string, m map[string]int64) {
		if len(m) == 0 {
			return
		}
		keys := slices.SortedFunc(maps.Keys(m), func(a, b string) int { return cmp.Or(cmp.Compare(m[b], m[a]), strings.Compare(a, b)) })
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s %d", cmp.Or(k, "-"), m[k])
		}
		fmt.Fprintf(w, "%-15s %s\n", name+":", strings.Join(parts, ", "))
	}
	counts("status", s.ByStatus)
	counts("permission", s.ByPermission)
	counts("level", s.ByLevel)
	exits := map[string]int64{}
	for k, v := range s.ByExit {
		exits[strconv.Itoa(k)] = v
	}
	counts("exit code", exits)
	if len(s.Slowest) > 0 {
		fmt.Fprintln(w, "slowest:")
		for i := range s.Slowest {
			r := &s.Slowest[i]
			fmt.Fprintf(w, "  %9s  run %-6d %s\n", durationText(r.DurationMS), r.ID, fitWidth(printable(commandText(r)), defaultWidth-30))
		}
	}
	if len(s.Frequent) > 0 {
		fmt.Fprintln(w, "most frequent:")
		for _, f := range s.Frequent {
			fmt.Fprintf(w, "  %9d  %s\n", f.Count, fitWidth(printable(f.Command), defaultWidth-13))
		}
	}
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/forgebox/forgebox/history"
	"github.com/forgebox/forgebox/runner"
)

const historyUsage = `Usage:
  forgebox history [flags]                 the latest runs, newest first, one line each
  forgebox history show [--json] ID        everything about one run, its output included
  forgebox history stats [flags]           counts by decision, level and exit status; the slowest and most frequent commands
  forgebox history export --jsonl [flags]  the runs as JSON lines, oldest first, for audit pipelines
  forgebox history rerun [--yes] ID        run a recorded command again with its flags, from its directory, judged again
  forgebox history prune [--keep-days N] [--keep-rows N]
                                           remove old runs now (default: the configuration's bounds, else 90 days and 100000 runs)

Every form takes --history-db PATH (default: $FORGEBOX_HISTORY_DB, else
$XDG_STATE_HOME/forgebox/history.db). Exit status: 0, 1 when show or rerun
find no such run, 125 on errors. Flags of the listing (stats and export take
the filters too):
`

// historyQueryTimeout bounds a history command's queries: longer than a
// run's budget, as stats and exports read the whole table.
const historyQueryTimeout = 60 * time.Second

// historyCmd is forgebox history and its subcommands.
func (e env) historyCmd(args []string) int {
	sub := "list"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	switch sub {
	case "list":
		return e.historyList(args)
	case "show":
		return e.historyShow(args)
	case "stats":
		return e.historyStats(args)
	case "export":
		return e.historyExport(args)
	case "rerun":
		return e.historyRerun(args)
	case "prune":
		return e.historyPrune(args)
	case "help":
		fmt.Fprint(e.stdout, historyUsage)
		return 0
	}
	e.errorf("history: unknown command %q; run forgebox history --help", sub)
	return exitForgebox
}

// queryFlags are the filters of the listing, stats and export.
type queryFlags struct {
	db              string
	jsonOut         bool
	limit           int
	session, grep   string
	cwd             string
	failed, denied  bool
	since           sinceFlag
	defaultLimit    int
	withLimit, json bool
}

func (q *queryFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&q.db, "history-db", "", "the history database `PATH` (default: $FORGEBOX_HISTORY_DB, else $XDG_STATE_HOME/forgebox/history.db)")
	if q.json {
		fs.BoolVar(&q.jsonOut, "json", false, "print JSON (the listing: one object per line)")
	}
	if q.withLimit {
		fs.IntVar(&q.limit, "limit", q.defaultLimit, "at most `N` runs (0: all)")
	}
	fs.StringVar(&q.session, "session", "", "only the runs of session `ID`")
	fs.BoolVar(&q.failed, "failed", false, "only runs that failed: a non-zero exit, a signal, a timeout, or not started")
	fs.BoolVar(&q.denied, "denied", false, "only runs the judge denied or that were not approved")
	fs.Var(&q.since, "since", "only runs started since `WHEN`: a duration back from now (30m, 2h, 7d, 2w) or a date (2026-11-20, 2026-11-20T15:04, RFC 3339)")
	fs.StringVar(&q.grep, "grep", "", "only runs whose command contains `TEXT`")
	fs.StringVar(&q.cwd, "cwd", "", "only runs started in `DIR`")
}

// filter is the history query the flags ask for.
func (q *queryFlags) filter() (history.Filter, error) {
	f := history.Filter{Limit: q.limit, Session: q.session, Failed: q.failed, Denied: q.denied, Since: q.since.t, Grep: q.grep}
	if q.cwd != "" {
		abs, err := filepath.Abs(q.cwd)
		if err != nil {
			return f, fmt.Errorf("--cwd %s: %w", q.cwd, err)
		}
		f.Cwd = runner.ResolvePath(abs)
	}
	return f, nil
}

// sinceFlag is --since: a duration back from now or a date.
type sinceFlag struct {
	t    time.Time
	text string
}

func (s *sinceFlag) String() string { return s.text }

func (s *sinceFlag) Set(v string) error {
	t, err := parseSince(v, time.Now())
	if err != nil {
		return err
	}
	s.t, s.text = t, v
	return nil
}

// parseSince reads a duration back from now (Go's 1h30m, plus d for days
// and w for weeks: 7d, 2w, 1d12h) or a date or time: 2026-11-20 (local
// midnight), 2026-11-20T15:04[:05] or with a space (local), or RFC 3339.
func parseSince(v string, now time.Time) (time.Time, error) {
	v = strings.TrimSpace(v)
	if d, ok := parseLongDuration(v); ok {
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, time.RFC3339} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	for _, layout := range []string{time.DateOnly, "2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02 15:04", time.DateTime} {
		if t, err := time.ParseInLocation(layout, v, now.Location()); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("invalid time %q (want a duration back from now such as 2h or 7d, or a date such as 2026-11-20 or 2026-11-20T15:04:05Z)", v)
}

// parseLongDuration is time.ParseDuration with days (d) and weeks (w) in
// front: 7d, 2w, 1d12h. Negative durations are refused.
func parseLongDuration(v string) (time.Duration, bool) {
	var total time.Duration
	rest := v
	for _, u := range []struct {
		suffix string
		unit   time.Duration
	}{{"w", 7 * 24 * time.Hour}, {"d", 24 * time.Hour}} {
		i := strings.Index(rest, u.suffix)
		if i <= 0 {
			continue
		}
		n, err := strconv.ParseFloat(rest[:i], 64)
		if err != nil || n < 0 || n > 1e5 {
			return 0, false
		}
		total += time.Duration(n * float64(u.unit))
		rest = rest[i+1:]
	}
	if rest == "" {
		return total, v != ""
	}
	d, err := time.ParseDuration(rest)
	if err != nil || d < 0 {
		return 0, false
	}
	return total + d, true
}

// parseInterleaved parses flags that may come before and after the
// positional arguments (history show 12 --json), and returns those.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos, args = append(pos, args[0]), args[1:]
	}
}

// historyFlagSet is a subcommand's flag set, its errors reported by the
// caller.
func historyFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("history "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parseHistoryFlags parses a subcommand's flags; done is true when the
// command is over (help, or an error), with its exit code.
func (e env) parseHistoryFlags(fs *flag.FlagSet, args []string) (pos []string, code int, done bool) {
	pos, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(e.stdout, historyUsage)
		fs.SetOutput(e.stdout)
		fs.PrintDefaults()
		return nil, 0, true
	}
	if err != nil {
		e.errorf("%s: %v; see forgebox history --help", fs.Name(), err)
		return nil, exitForgebox, true
	}
	return pos, 0, false
}

// openHistory opens the database for a history command. It returns nil
// and no error when there is no database yet: nothing was recorded.
func (e env) openHistory(ctx context.Context, db string) (*history.Store, error) {
	path, err := runner.HistoryPath(db)
	if err != nil {
		return nil, err
	}
	// A run that was spooled but not yet ingested is history all the same.
	_, err = os.Stat(path)
	if _, serr := os.Stat(path + ".spool"); errors.Is(err, fs.ErrNotExist) && errors.Is(serr, fs.ErrNotExist) {
		e.errorf("no history at %s: nothing was recorded there yet", path)
		return nil, nil
	}
	st, warnings, err := history.Open(ctx, path, runner.StoreOptions(nil))
	for _, w := range warnings {
		e.errorf("warning: history: %s", w)
	}
	return st, err
}

func historyContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), historyQueryTimeout)
}

func (e env) historyList(args []string) int {
	q := queryFlags{json: true, withLimit: true, defaultLimit: 20}
	fs := historyFlagSet("list")
	q.register(fs)
	pos, code, done := e.parseHistoryFlags(fs, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		e.errorf("history: unexpected argument %q; run forgebox history --help", pos[0])
		return exitForgebox
	}
	filter, err := q.filter()
	if err != nil {
		e.errorf("history: %v", err)
		return exitForgebox
	}
	ctx, cancel := historyContext()
	defer cancel()
	st, err := e.openHistory(ctx, q.db)
	if err != nil {
		e.errorf("history: %v", err)
		return exitForgebox
	}
	if st == nil {
		return 0
	}
	defer st.Close()
	runs, err := st.List(ctx, filter)
	if err != nil {
		e.errorf("history: %v", err)
		return exitForgebox
	}
	if q.jsonOut {
		for i := range runs {
			e.printJSON(&runs[i])
		}
		return 0
	}
	writeTable(e.stdout, runs, terminalWidth(e.stdout), time.Local)
	return 0
}

// parseID reads a run's ID, or its key (forgebox run --json's
// history_key): a key holds dashes, an ID is a number.
func parseID(pos []string) (id int64, key string, err error) {
	if len(pos) != 1 {
		return 0, "", fmt.Errorf("give one run ID")
	}
	a := strings.TrimPrefix(pos[0], "#")
	if strings.Contains(a, "-") && !strings.HasPrefix(a, "-") {
		return 0, a, nil
	}
	id, err = strconv.ParseInt(a, 10, 64)
	if err != nil || id <= 0 {
		return 0, "", fmt.Errorf("invalid run ID %q (want a number from forgebox history, or a history_key)", pos[0])
	}
	return id, "", nil
}

// getRun finds one run; code is non-zero when the command is over.
func (e env) getRun(db string, pos []string, verb string) (*history.Run, string, int) {
	id, key, err := parseID(pos)
	if err != nil {
		e.errorf("history %s: %v", verb, err)
		return nil, "", exitForgebox
	}
	ctx, cancel := historyContext()
	defer cancel()
	st, err := e.openHistory(ctx, db)
	if err != nil {
		e.errorf("history %s: %v", verb, err)
		return nil, "", exitForgebox
	}
	if st == nil {
		return nil, "", 1
	}
	defer st.Close()
	var r *history.Run
	name := pos[0]
	if key != "" {
		r, err = st.GetByKey(ctx, key)
	} else {
		r, err = st.Get(ctx, id)
		name = strconv.FormatInt(id, 10)
	}
	if errors.Is(err, history.ErrNotFound) {
		e.errorf("history %s: no run %s in %s", verb, name, st.Path())
		return nil, "", 1
	}
	if err != nil {
		e.errorf("history %s: %v", verb, err)
		return nil, "", exitForgebox
	}
	return r, st.Path(), 0
}

func (e env) historyShow(args []string) int {
	var db string
	fs := historyFlagSet("show")
	fs.StringVar(&db, "history-db", "", "the history database `PATH`")
	jsonOut := fs.Bool("json", false, "print the run as one JSON object")
	pos, code, done := e.parseHistoryFlags(fs, args)
	if done {
		return code
	}
	r, _, code := e.getRun(db, pos, "show")
	if r == nil {
		return code
	}
	rec := runUndoRecord(r)
	if *jsonOut {
		e.printJSON(struct {
			*history.Run
			Undo *undoShown `json:"undo,omitempty"`
		}{r, rec})
		return 0
	}
	writeRun(e.stdout, r, time.Local)
	writeUndoRecord(e.stdout, rec)
	return 0
}

func (e env) historyStats(args []string) int {
	q := queryFlags{json: true}
	fs := historyFlagSet("stats")
	q.register(fs)
	pos, code, done := e.parseHistoryFlags(fs, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		e.errorf("history stats: unexpected argument %q", pos[0])
		return exitForgebox
	}
	filter, err := q.filter()
	if err != nil {
		e.errorf("history stats: %v", err)
		return exitForgebox
	}
	ctx, cancel := historyContext()
	defer cancel()
	st, err := e.openHistory(ctx, q.db)
	if err != nil {
		e.errorf("history stats: %v", err)
		return exitForgebox
	}
	if st == nil {
		return 0
	}
	defer st.Close()
	s, err := st.Stats(ctx, filter)
	if err != nil {
		e.errorf("history stats: %v", err)
		return exitForgebox
	}
	if q.jsonOut {
		e.printJSON(s)
		return 0
	}
	writeStats(e.stdout, s)
	return 0
}

func (e env) historyExport(args []string) int {
	q := queryFlags{withLimit: true}
	fs := historyFlagSet("export")
	q.register(fs)
	fs.Bool("jsonl", true, "JSON lines, one run per line (the only format)")
	pos, code, done := e.parseHistoryFlags(fs, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		e.errorf("history export: unexpected argument %q", pos[0])
		return exitForgebox
	}
	filter, err := q.filter()
	if err != nil {
		e.errorf("history export: %v", err)
		return exitForgebox
	}
	// An export may be large: no deadline but the reader's.
	ctx := context.Background()
	st, err := e.openHistory(ctx, q.db)
	if err != nil {
		e.errorf("history export: %v", err)
		return exitForgebox
	}
	if st == nil {
		return 0
	}
	defer st.Close()
	if err := st.Export(ctx, e.stdout, filter); err != nil {
		e.errorf("history export: %v", err)
		return exitForgebox
	}
	return 0
}

func (e env) historyPrune(args []string) int {
	var db string
	var days, rows int
	fs := historyFlagSet("prune")
	fs.StringVar(&db, "history-db", "", "the history database `PATH`")
	fs.IntVar(&days, "keep-days", 0, "keep the runs of the last `N` days (default: the configuration's keepDays, else 90)")
	fs.IntVar(&rows, "keep-rows", 0, "keep the latest `N` runs (default: the configuration's keepRows, else 100000)")
	pos, code, done := e.parseHistoryFlags(fs, args)
	if done {
		return code
	}
	if len(pos) > 0 || days < 0 || rows < 0 {
		e.errorf("history prune: give only --keep-days N and --keep-rows N, not negative")
		return exitForgebox
	}
	if days == 0 || rows == 0 {
		s, err := historySettings()
		if err != nil {
			e.errorf("history prune: %v; or give both --keep-days and --keep-rows", err)
			return exitForgebox
		}
		d, r := runner.KeepLimits(s)
		if days == 0 {
			days = d
		}
		if rows == 0 {
			rows = r
		}
	}
	ctx, cancel := historyContext()
	defer cancel()
	st, err := e.openHistory(ctx, db)
	if err != nil {
		e.errorf("history prune: %v", err)
		return exitForgebox
	}
	if st == nil {
		return 0
	}
	defer st.Close()
	n, err := st.Prune(ctx, days, rows)
	if err != nil {
		e.errorf("history prune: %v", err)
		return exitForgebox
	}
	fmt.Fprintf(e.stdout, "removed %d runs from %s (kept the last %d days, at most %d runs)\n", n, st.Path(), days, rows)
	return 0
}

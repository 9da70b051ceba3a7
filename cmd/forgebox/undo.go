package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/forgebox/forgebox/history"
	"github.com/forgebox/forgebox/undo"
)

const undoUsage = `Usage:
  forgebox undo [--dry-run] [--force] [RUN]   put the workspace back as it was before RUN
  forgebox undo --to RUN [--dry-run] [--force] undo RUN and every later run not undone, newest first
  forgebox undo --list                        the workspace's undo records
  forgebox undo --limit SIZE --keep-days N     bound the store (default 2GiB, 14 days; pruned after runs)

A sandboxed run does not write the workspace (nor its --rw directories on
the same file system as the store) while it goes on: it writes an overlay,
carried in when it ends, and what it replaced is kept in an undo record
beneath $XDG_STATE_HOME/forgebox/undo. The MCP server's write_file,
edit_file and multi_edit_file keep what they replace there too. RUN is a record id (or a
unique prefix), or the run's history key (history_key in run --json);
default: the last run in this workspace that changed it and is not undone.
An undo that would overwrite paths changed after RUN (by the person or a
later run) lists them and refuses: undo the later runs first (--to), or
--force, which keeps what it overwrites. Every undo is itself a record:
forgebox undo ID on it redoes the run.

Flags:
`

func (e env) undoCmd(args []string) int {
	fs := flag.NewFlagSet("forgebox undo", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprint(e.stderr, undoUsage)
		fs.PrintDefaults()
	}
	var dry, force, list, jsonOut bool
	var to, ws string
	var limit sizeFlag
	keepDays := fs.Int("keep-days", 0, "keep undo records `N` days at most (with --limit or alone: sets the bound)")
	fs.Var(&limit, "limit", "keep at most `SIZE` of undo records for all workspaces together, oldest pruned first")
	fs.BoolVar(&dry, "dry-run", false, "show what the undo would change and what it would overwrite, and change nothing")
	fs.BoolVar(&force, "force", false, "undo even over paths changed since (what is overwritten is kept in the undo's record)")
	fs.BoolVar(&list, "list", false, "list the workspace's undo records")
	fs.BoolVar(&jsonOut, "json", false, "print JSON")
	fs.StringVar(&to, "to", "", "undo `RUN` and every later run of the workspace, newest first")
	fs.StringVar(&ws, "workspace", "", "the workspace `DIR` (default: the current directory, or the closest directory above it with undo records)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return exitForgebox
	}
	if fs.NArg() > 1 || (to != "" && fs.NArg() > 0) || (list && (to != "" || fs.NArg() > 0 || dry || force)) {
		e.errorf("undo takes at most one RUN, and --to or --list instead of it")
		return exitForgebox
	}
	home, _ := os.UserHomeDir()
	store := undo.StoreFor(stateDir(home))
	if store.Root == "" {
		e.errorf("no state directory: set HOME or XDG_STATE_HOME")
		return exitForgebox
	}
	if limit.n > 0 || *keepDays > 0 {
		l := store.Limits()
		if limit.n > 0 {
			l.MaxBytes = limit.n
		}
		if *keepDays > 0 {
			l.MaxAge = time.Duration(*keepDays) * 24 * time.Hour
		}
		if err := store.SetLimits(l); err != nil {
			e.errorf("%v", err)
			return exitForgebox
		}
		removed, err := store.Prune(time.Now())
		if err != nil {
			e.errorf("prune: %v", err)
			return exitForgebox
		}
		fmt.Fprintf(e.stdout, "undo store %s: at most %s, %d days; %d record(s) pruned now\n", store.Root, humanBytes(l.MaxBytes), int(l.MaxAge.Hours()/24), len(removed))
		return 0
	}
	ws, err := undoWorkspace(store, ws)
	if err != nil {
		e.errorf("%v", err)
		return exitForgebox
	}
	if list {
		return e.undoList(store, ws, jsonOut)
	}
	targets, err := undoTargets(store, ws, fs.Arg(0), to)
	if err != nil {
		e.errorf("%v", err)
		return exitForgebox
	}
	if dry {
		return e.undoDry(store, targets, jsonOut)
	}
	var done []*undo.Manifest
	for _, m := range targets {
		u, err := store.Undo(m, force, time.Now())
		var ce *undo.ConflictError
		if errors.As(err, &ce) {
			e.printUndone(done, jsonOut)
			e.errorf("%v", err)
			if later := laterRuns(store, m); len(later) > 0 {
				e.errorf("nothing was changed; later runs changed the workspace after it (%s): undo them first with forgebox undo --to %s, or --force to overwrite (what is overwritten is kept, undoable)", strings.Join(later, ", "), m.ID)
			} else {
				e.errorf("nothing was changed; they were changed outside forgebox after the run (by you or a program): --force overwrites them, keeping them in the undo's record (undoable)")
			}
			return 1
		}
		if err != nil {
			if u != nil {
				done = append(done, u)
			}
			e.printUndone(done, jsonOut)
			e.errorf("undo %s: %v", m.ID, err)
			return exitForgebox
		}
		done = append(done, u)
	}
	e.printUndone(done, jsonOut)
	return 0
}

// undoWorkspace is the workspace whose records an undo acts on: the given
// directory, else the current one or the closest above it that has records.
func undoWorkspace(store undo.Store, ws string) (string, error) {
	given := ws != ""
	if !given {
		var err error
		if ws, err = os.Getwd(); err != nil {
			return "", err
		}
	}
	ws, err := filepath.Abs(ws)
	if err == nil {
		ws, err = filepath.EvalSymlinks(ws)
	}
	if err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	if given {
		return ws, nil
	}
	for d := ws; ; d = filepath.Dir(d) {
		if recs, _ := store.Records(d); len(recs) > 0 {
			return d, nil
		}
		if d == filepath.Dir(d) {
			return ws, nil
		}
	}
}

// undoTargets are the records to undo, in order.
func undoTargets(store undo.Store, ws, ref, to string) ([]*undo.Manifest, error) {
	if to == "" {
		if ref != "" {
			m, err := store.Find(ws, ref)
			if err != nil {
				return nil, err
			}
			return []*undo.Manifest{m}, nil
		}
		m, err := store.Last(ws)
		if err != nil {
			return nil, err
		}
		if m == nil {
			return nil, fmt.Errorf("no run in %s left an undo record that is not undone", ws)
		}
		return []*undo.Manifest{m}, nil
	}
	first, err := store.Find(ws, to)
	if err != nil {
		return nil, err
	}
	if first.UndoneBy != "" {
		return nil, fmt.Errorf("record %s is already undone (by %s)", first.ID, first.UndoneBy)
	}
	recs, err := store.Records(ws)
	if err != nil {
		return nil, err
	}
	var out []*undo.Manifest
	for i := len(recs) - 1; i >= 0; i-- {
		m := recs[i]
		if m.ID < first.ID {
			break
		}
		if m.Kind == undo.KindRun && m.UndoneBy == "" && m.Summary.Changed() || m.ID == first.ID {
			out = append(out, m)
		}
	}
	return out, nil
}

func (e env) undoDry(store undo.Store, targets []*undo.Manifest, jsonOut bool) int {
	type plan struct {
		ID        string          `json:"id"`
		Command   string          `json:"command"`
		Changes   []undo.Change   `json:"changes"`
		Conflicts []undo.Conflict `json:"conflicts"`
	}
	var plans []plan
	for _, m := range targets {
		ch, cf, err := store.Plan(m)
		if err != nil {
			e.errorf("%v", err)
			return exitForgebox
		}
		plans = append(plans, plan{m.ID, m.Command, nonNilSlice(ch), nonNilSlice(cf)})
	}
	if jsonOut {
		e.printJSON(plans)
		return 0
	}
	for _, p := range plans {
		fmt.Fprintf(e.stdout, "undo %s (%s) would:\n", p.ID, p.Command)
		for _, c := range p.Changes {
			fmt.Fprintf(e.stdout, "  %-7s %s\n", c.Action, c.Path)
		}
		for _, c := range p.Conflicts {
			if c.Kept {
				fmt.Fprintf(e.stdout, "  changed since %s (%s): overwritten, the current one kept in the undo's record (git rebuilds it)\n", c.Path, c.Why)
				continue
			}
			fmt.Fprintf(e.stdout, "  CHANGED SINCE %s (%s): refused without --force\n", c.Path, c.Why)
		}
	}
	return 0
}

func (e env) printUndone(done []*undo.Manifest, jsonOut bool) {
	if jsonOut {
		if done == nil {
			done = []*undo.Manifest{}
		}
		e.printJSON(done)
		return
	}
	for _, u := range done {
		fmt.Fprintf(e.stdout, "undid %s: %s; to take this undo back: forgebox undo %s\n", u.UndoOf, u.Summary, u.ID)
		for _, w := range u.Warnings {
			e.errorf("warning: %s", w)
		}
	}
}

func (e env) undoList(store undo.Store, ws string, jsonOut bool) int {
	recs, err := store.Records(ws)
	if err != nil {
		e.errorf("%v", err)
		return exitForgebox
	}
	if jsonOut {
		if recs == nil {
			recs = []*undo.Manifest{}
		}
		for _, m := range recs {
			m.Entries = nil
		}
		e.printJSON(recs)
		return 0
	}
	u, _ := store.Usage()
	fmt.Fprintf(e.stdout, "undo records of %s (the store %s keeps %s in %d records, at most %s and %d days):\n", ws, store.Root,
		humanBytes(u.Bytes), u.Records, humanBytes(u.Limits.MaxBytes), int(u.Limits.MaxAge.Hours()/24))
	for _, m := range recs {
		renderRecord(e.stdout, m)
	}
	return 0
}

func renderRecord(w io.Writer, m *undo.Manifest) {
	state := ""
	if m.UndoneBy != "" {
		state = " [undone by " + m.UndoneBy + "]"
	}
	fmt.Fprintf(w, "  %s  %-4s %s  %s%s\n", m.ID, m.Kind, m.Summary, m.Command, state)
}

// laterRuns are the runs after m not undone.
func laterRuns(store undo.Store, m *undo.Manifest) []string {
	recs, _ := store.Records(m.Workspace)
	var out []string
	for _, r := range recs {
		if r.ID > m.ID && r.Kind == undo.KindRun && r.UndoneBy == "" && r.Summary.Changed() {
			out = append(out, r.ID)
		}
	}
	return out
}

func nonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// undoShown is a run's undo record as history show gives it.
type undoShown struct {
	ID       string       `json:"id"`
	UndoneBy string       `json:"undone_by,omitempty"`
	Summary  undo.Summary `json:"changes"`
	Entries  []undo.Entry `json:"entries"`
}

// runUndoRecord is the undo record of a history run, or nil.
func runUndoRecord(r *history.Run) *undoShown {
	if r.Workspace == "" || r.Key == "" {
		return nil
	}
	home, _ := os.UserHomeDir()
	m := undo.StoreFor(stateDir(home)).ByHistory(r.Workspace, r.Key)
	if m == nil {
		return nil
	}
	var top []undo.Entry
	for _, e := range m.Entries {
		if !e.Sub {
			e.Path = m.Shown(e) // a --rw path's absolute
			top = append(top, e)
		}
	}
	return &undoShown{ID: m.ID, UndoneBy: m.UndoneBy, Summary: m.Summary, Entries: nonNilSlice(top)}
}

func writeUndoRecord(w io.Writer, u *undoShown) {
	if u == nil {
		return
	}
	state := "forgebox undo " + u.ID
	if u.UndoneBy != "" {
		state = "undone by " + u.UndoneBy
	}
	fmt.Fprintf(w, "%-19s%s (%s)\n", "changes:", u.Summary, state)
	for i, e := range u.Entries {
		if i == 30 {
			fmt.Fprintf(w, "%19s... and %d more\n", "", len(u.Entries)-30)
			break
		}
		fmt.Fprintf(w, "%19s%-8s %s\n", "", e.Op, e.Path)
	}
}

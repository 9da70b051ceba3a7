package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/forgebox/forgebox/undo"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// UndoInput is the undo tool's arguments.
type UndoInput struct {
	ID     string `json:"id,omitempty" jsonschema:"the undo record to take back: a command result's changes.undo_id, or a write's or an edit's undo_id (default: the latest command or write of this server that changed the workspace and is not undone)"`
	DryRun bool   `json:"dry_run,omitempty" jsonschema:"only show what the undo would change and what it would overwrite"`
}

// UndoOutput is the undo tool's result.
type UndoOutput struct {
	ID        string          `json:"id" jsonschema:"the record taken back (or that would be)"`
	Undone    bool            `json:"undone" jsonschema:"the workspace was put back as it was before that command"`
	Redo      string          `json:"redo_id,omitempty" jsonschema:"the record of this undo: undoing it redoes the command"`
	Changes   []undo.Change   `json:"changes" jsonschema:"what the undo changes (or would): each path, and remove, restore or mode"`
	Conflicts []undo.Conflict `json:"conflicts" jsonschema:"paths changed after that command, which the undo would overwrite"`
	Blocked   *Blocked        `json:"blocked,omitempty" jsonschema:"why the undo was not done, and what to do"`
}

const undoDescription = `Put the workspace back as it was before one of your earlier commands (run_shell_command, git), when its result had changes.undo_id.
It restores every file the command changed, created or deleted, .git included (a git reset --hard, a git clean, an rm -rf are undone byte for byte), and keeps what it replaces, so an undo can itself be undone (its redo_id).
You may undo the commands of this server's session that nothing changed since; anything else (another session's command, or paths changed after the command) needs the person: the result says so. dry_run shows what it would do.
write_file, edit_file and multi_edit_file are undone alike (their result's undo_id); the other file tools (move, copy, delete, make_directory), shell sessions, effects outside the workspace and network effects are not.`

func (s *server) addUndoTool(srv *mcp.Server) {
	if s.c.Undo.Root == "" {
		return
	}
	addTool(srv, &mcp.Tool{Name: "undo", Title: "Undo a command's changes to the workspace", Description: undoDescription,
		Annotations: changes(true, false), Meta: resultSchemaMeta[UndoOutput]("undo")}, s.undoTool)
}

// ownRecord notes a record of a command this server ran: the model may
// take those back without asking.
func (s *server) ownRecord(id string) {
	if id == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.own == nil {
		s.own = map[string]bool{}
	}
	s.own[id] = true
}

func (s *server) isOwn(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.own[id]
}

func (s *server) undoTool(_ context.Context, _ *mcp.CallToolRequest, in UndoInput) (*mcp.CallToolResult, any, error) {
	store, ws := s.c.Undo, s.c.Workspace
	m, err := s.undoTarget(in.ID)
	if err != nil {
		return textResult(err.Error(), true), nil, nil
	}
	out := UndoOutput{ID: m.ID}
	ch, cf, err := store.Plan(m)
	if err != nil {
		return textResult(err.Error(), true), nil, nil
	}
	out.Changes, out.Conflicts = ch, cf
	if ch == nil {
		out.Changes = []undo.Change{}
	}
	if cf == nil {
		out.Conflicts = []undo.Conflict{}
	}
	var b strings.Builder
	switch {
	case in.DryRun:
		fmt.Fprintf(&b, "undo %s (%s) would change %d path(s)", m.ID, m.Command, len(ch))
	case !s.isOwn(m.ID):
		out.Blocked = &Blocked{Layer: "policy rule", Message: fmt.Sprintf("record %s is not of a command this server ran: only the person may undo it", m.ID),
			Hint: fmt.Sprintf("ask the person; they can run forgebox undo %s in %s (forgebox undo --dry-run %s shows what it does)", m.ID, ws, m.ID)}
	case len(undo.Blocking(cf)) > 0:
		out.Blocked = &Blocked{Layer: "policy rule", Message: fmt.Sprintf("%d path(s) changed after that command would be overwritten", len(cf)),
			Hint: fmt.Sprintf("undo the later commands first, or ask the person: forgebox undo --force %s keeps what it overwrites", m.ID)}
	default:
		u, err := store.Undo(m, false, time.Now())
		var ce *undo.ConflictError
		switch {
		case errors.As(err, &ce):
			out.Conflicts = ce.Conflicts
			out.Blocked = &Blocked{Layer: "policy rule", Message: ce.Error(), Hint: "ask the person: forgebox undo --force " + m.ID}
		case err != nil:
			out.Blocked = &Blocked{Layer: "forgebox", Message: err.Error(), Hint: "this is forgebox failing; report it to the person"}
			if u != nil {
				out.Redo = u.ID
			}
		default:
			out.Undone, out.Redo = true, u.ID
			s.ownRecord(u.ID)
			fmt.Fprintf(&b, "undid %s (%s): %s; to take this undo back: undo {\"id\": %q}", m.ID, m.Command, u.Summary, u.ID)
		}
	}
	if out.Blocked != nil {
		fmt.Fprintf(&b, "NOT UNDONE: %s\n[%s] %s\nhint: %s", m.ID, out.Blocked.Layer, out.Blocked.Message, out.Blocked.Hint)
	}
	for _, c := range out.Changes {
		fmt.Fprintf(&b, "\n  %s %s", c.Action, c.Path)
	}
	for _, c := range out.Conflicts {
		fmt.Fprintf(&b, "\n  changed since: %s (%s)", c.Path, c.Why)
	}
	res := textResult(b.String(), out.Blocked != nil)
	res.Meta = mcp.Meta{ResultMeta: out}
	return res, nil, nil
}

// undoTarget is the record an undo call names, or this server's latest.
func (s *server) undoTarget(id string) (*undo.Manifest, error) {
	if id != "" {
		return s.c.Undo.Find(s.c.Workspace, id)
	}
	recs, err := s.c.Undo.Records(s.c.Workspace)
	if err != nil {
		return nil, err
	}
	for i := len(recs) - 1; i >= 0; i-- {
		if m := recs[i]; s.isOwn(m.ID) && m.UndoneBy == "" && m.Summary.Changed() {
			return m, nil
		}
	}
	return nil, errors.New("no command of this server left an undo record that is not undone: give the id (a result's changes.undo_id)")
}

// fileKeep is what a file tool keeps of the file it replaces, for undo.
type fileKeep struct {
	s    *server
	snap *undo.Snapshot
	// note is said in the result: the record, or why there is none.
	note string
}

// keepForUndo keeps the file a write or an edit of path would replace, in
// an undo record of the workspace, so that the undo tool (for the model:
// the server's own) and forgebox undo take the change back like a
// command's. Where undo cannot keep it the change goes on, and the result
// says so; without undo (serve --no-undo) nothing is kept.
func (s *server) keepForUndo(tool, path string) *fileKeep {
	k := &fileKeep{s: s}
	if s.c.Undo.Root == "" {
		return k
	}
	rel, err := s.c.Files.Target(path)
	if err != nil {
		return k // the tool refuses it, with its own message
	}
	k.snap, err = s.c.Undo.Snapshot(s.c.Workspace, tool+" "+rel, []string{rel}, time.Now())
	if err != nil {
		k.note = fmt.Sprintf(" (no undo for this change: %v)", err)
	}
	return k
}

// discard drops what was kept: the change was refused.
func (k *fileKeep) discard() {
	if k.snap != nil {
		k.snap.Discard()
	}
}

// done records the change; it returns the record's id and the note for
// the result.
func (k *fileKeep) done() (string, string) {
	if k.snap == nil {
		return "", k.note
	}
	m, err := k.snap.Done(time.Now())
	switch {
	case err != nil:
		return "", fmt.Sprintf(" (no undo for this change: %v)", err)
	case m == nil || m.ID == "":
		return "", ""
	}
	k.s.ownRecord(m.ID)
	if _, err := k.s.c.Undo.MaybePrune(time.Now()); err != nil {
		return m.ID, fmt.Sprintf("; undo: {\"id\": %q} (pruning the undo store: %v)", m.ID, err)
	}
	return m.ID, fmt.Sprintf("; undo: {\"id\": %q}", m.ID)
}

package policy

// Undo (Containment.Undo): a run whose every change to the workspace is
// kept undoable (forgebox's undo store) loses no work to a command that
// only destroys workspace content — an rm -r of workspace directories,
// git reset --hard, git clean -fdx, git checkout -- ., truncate. When the
// sandbox also contains the command (nothing else is writable, no
// network), such findings run unasked, with a reason that says how to
// take them back. A finding at or above the block threshold (the whole
// workspace, the repository's .git) stays as it is: undo is a
// convenience, not a protection.

// undoable records a finding whose only harm is to workspace content
// (Finding.Undoable).
func (j *judge) undoable(cat Category, risk int, format string, args ...any) {
	j.add(cat, risk, format, args...)
	j.markUndoable()
}

// markUndoable marks the last finding as Undoable.
func (j *judge) markUndoable() {
	if n := len(j.findings); n > 0 {
		j.findings[n-1].Undoable = true
	}
}

// inWorkspace reports whether every argument names a path of the
// workspace known as written: its content, its root or its .git.
func (j *judge) inWorkspace(args []Arg) bool {
	if len(args) == 0 {
		return false
	}
	for _, a := range args {
		if !a.Static {
			return false
		}
		switch p, _ := j.where(a); p {
		case PlaceWorkspace, PlaceWorkspaceRoot, PlaceGitDir:
		default:
			return false
		}
	}
	return true
}

// containUndo caps the undoable findings of a contained run with undo at
// what runs unasked.
func containUndo(findings []layered, c Containment, t Thresholds) {
	if !c.Contained || !c.Undo {
		return
	}
	for i := range findings {
		f := &findings[i]
		if !f.Undoable || f.Risk <= t.AutoApprove || f.Risk >= t.Block {
			continue
		}
		f.Risk = t.AutoApprove
		f.Reason += "; contained and undoable (undo: forgebox undo)"
	}
}

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/forgebox/forgebox/pathtree"
	"github.com/forgebox/forgebox/undo"
)

// The workspace's undo overlay (Spec.Undo, package undo): planned here,
// mounted by the child on top of the workspace's grant (opOverlay with
// opFlagKeep), committed once the tree is dead.

// UndoPossible says whether a run of s would have undo, and if not why:
// the rule runner.Containment weighs (the judge) and planUndo follows.
// It does not say whether the kernel will take the overlay; a refusal
// there is reported after the run (Enforced.Undo false).
func UndoPossible(s Spec) error {
	if !s.Undo {
		return errors.New("undo is off")
	}
	if s.profile() == ProfileReadOnly {
		return errors.New("the workspace is read-only")
	}
	_, ws, err := runDirs(s)
	if err != nil {
		return err
	}
	return undo.StoreFor(s.StateDir).Check(ws)
}

// planUndo begins the run's undo record, or says in a warning why the run
// goes without; it fails when the run requires undo (Spec.RequireUndo).
// The --rw directories the store can hold are kept in the same record;
// the others are named in a warning (the judge counts undo only for the
// workspace, so a run never requires them).
func (p *prepared) planUndo(s Spec, l *layout, grants map[string]bool) error {
	store := undo.StoreFor(s.StateDir)
	// forgebox's state is hidden from every run, with undo or not: the
	// undo store holds what was deleted in every workspace, the history
	// every run's output, the Git config copies other runs' .git/config
	// (stateHidden).
	l.State = stateHidden(s.StateDir)
	if !s.Undo || l.Profile == ProfileReadOnly {
		if s.RequireUndo {
			return &SetupError{Step: "undo", Message: "the command was allowed only because forgebox undo could take it back, and this run has no undo: run it with --no-undo to be asked about it instead"}
		}
		return nil
	}
	var roots []string
	for _, root := range l.Writable {
		if root == l.Workspace {
			continue
		}
		if !grants[root] {
			p.warnings = append(p.warnings, fmt.Sprintf("--rw %s has no undo: it is a file, and undo keeps directories", root))
			continue
		}
		if err := store.CheckRw(root); err != nil {
			p.warnings = append(p.warnings, fmt.Sprintf("--rw %s has no undo: %v", root, err))
			continue
		}
		roots = append(roots, root)
	}
	pend, err := store.Begin(l.Workspace, roots, displayCommand(s), time.Now())
	if err != nil {
		if s.RequireUndo {
			return &SetupError{Step: "undo", Message: fmt.Sprintf("the command was allowed only because forgebox undo could take it back, and undo cannot be set up (%v): run it with --no-undo to be asked about it instead", err)}
		}
		p.warnings = append(p.warnings, fmt.Sprintf("this run has no undo: %v", err))
		return nil
	}
	for _, id := range pend.Recovered {
		p.warnings = append(p.warnings, fmt.Sprintf("an earlier run in this workspace ended with forgebox before its changes were carried in: they are now, undoable as record %s", id))
	}
	p.undo, p.undoStore = pend, store
	l.Undo, l.UndoRequired = pend.Dir(), s.RequireUndo
	for i, root := range pend.Roots() {
		if l.UndoRw == nil {
			l.UndoRw = map[string]string{}
		}
		l.UndoRw[root] = pend.RootDir(i)
	}
	return nil
}

// hostStateDir is forgebox's state directory (Spec.StateDir) as the host
// has it: made if missing (0700), so that what later runs write there
// while this one lives (a session lives for hours) is hidden from it too
// (stateHidden); and with no symbolic link on its way (XDG_STATE_HOME or
// the home may lead there through one), since the child clones the
// caches and the undo records beneath it without following any. Where it
// cannot be made, it is left as given: the run goes without what needs it.
func hostStateDir(stateDir string) string {
	if stateDir == "" || os.MkdirAll(stateDir, 0o700) != nil {
		return stateDir
	}
	if real, err := filepath.EvalSymlinks(stateDir); err == nil {
		return real
	}
	return stateDir
}

// HiddenState is what of forgebox's state a run hides (stateHidden), for
// the surfaces that act outside a run: the MCP file tools hide the same.
func HiddenState(s Spec) string { return stateHidden(hostStateDir(s.StateDir)) }

// stateHidden is the part of forgebox's state directory a run's view
// hides (an empty read-only directory there): all of it. What a run needs
// of it (its own Git config copy, its caches) is mounted by its own items,
// which the hiding leaves in place.
func stateHidden(stateDir string) string {
	if st, err := os.Lstat(stateDir); stateDir != "" && err == nil && st.IsDir() {
		return stateDir
	}
	return ""
}

// undoRefused is the warning for an overlay the kernel refused on root
// (the workspace or a --rw path): the command wrote it itself.
func (p *prepared) undoRefused(root string, errno error) string {
	if slices.Contains(p.enforced.UndoRw, root) {
		p.enforced.UndoRw = slices.DeleteFunc(p.enforced.UndoRw, func(r string) bool { return r == root })
	} else {
		p.enforced.Undo = false
	}
	if p.undo != nil && !p.undo.Drop(root) {
		p.undo.Discard()
		p.undo = nil
	}
	return fmt.Sprintf("%s has no undo: the kernel refused its overlay (%v); the command wrote it directly", root, errno)
}

// commitUndo carries the run's changes into the workspace. Called once
// the command's tree is dead, before the protected paths are checked
// (they are checked on what the commit left).
//
// A run that changed nothing leaves an empty record, removed in the
// background: the caller waits for the returned channel before it returns.
func (p *prepared) commitUndo(res *Result) <-chan struct{} {
	released := make(chan struct{})
	if p.undo == nil {
		close(released)
		return released
	}
	pend := p.undo
	p.undo = nil
	m, err := pend.Commit(time.Now())
	if err == nil && m != nil && p.guard != nil {
		// What the commit put in place is all the command wrote in the
		// roots it kept: the post-run check looks at no other file's
		// set-ID bits there.
		kept := pend.Kept()
		for _, root := range kept {
			// A writable root beneath it that undo did not keep (a --rw
			// file, an overlay refused) was written directly.
			if slices.ContainsFunc(p.enforced.Writable, func(w string) bool {
				return w != root && pathtree.Within(w, root) && !slices.Contains(kept, w)
			}) {
				continue
			}
			files := map[string]bool{}
			for _, e := range m.Entries {
				if e.After != nil && m.RootPath(e.Root) == root {
					files[e.Path] = true
				}
			}
			p.guard.committed(root, files)
		}
	}
	go func() {
		pend.Release()
		close(released)
	}()
	if res == nil {
		return released
	}
	if m != nil {
		res.Changes = &Changes{Summary: m.Summary, UndoID: m.ID}
		res.Warnings = append(res.Warnings, m.Warnings...)
		var during []string
		for _, e := range m.Entries {
			if e.HostChanged {
				during = append(during, m.Shown(e))
			}
		}
		if len(during) > 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("changed on the host while the run went on, and replaced by the run: %s (the versions replaced are kept: forgebox undo %s)", strings.Join(during, ", "), m.ID))
		}
	}
	if err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("carrying the run's changes into the workspace: %v", err))
	}
	if m != nil && m.ID != "" {
		// The store stays within its bounds (forgebox undo --limit).
		if _, err := p.undoStore.MaybePrune(time.Now()); err != nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("pruning the undo store: %v", err))
		}
	}
	return released
}

// displayCommand is the command as a record shows it.
func displayCommand(s Spec) string {
	if s.Command != "" {
		return s.Command
	}
	return strings.Join(s.Argv, " ")
}

package policy

import (
	"strings"
	"testing"
)

// The verdicts undo changes: what only destroys workspace content runs
// unasked in a contained run with undo, and is asked about as before
// without undo or without containment. What the judge blocks, or what
// reaches outside the workspace, does not change.
func TestUndoVerdicts(t *testing.T) {
	e := New(Default())
	ctx := func(c Containment) *Context {
		return &Context{Workspace: "/w", Cwd: "/w", Home: "/home/u", Sandbox: c}
	}
	undoable := ctx(Containment{Contained: true, How: "the sandbox", Undo: true})
	noUndo := ctx(Containment{Contained: true, How: "the sandbox"})
	reaching := ctx(Containment{How: "--net host", Undo: true})
	for _, tc := range []struct {
		line     string
		withUndo Action // contained, with undo
		without  Action // contained without undo, and not contained with undo
	}{
		{"rm -rf src", Allow, Ask},
		{"rm -r src build2", Allow, Ask},
		{"git reset --hard", Allow, Ask},
		{"git reset --hard HEAD~1", Allow, Ask},
		{"git clean -fdx", Allow, Ask},
		{"git clean -f", Allow, Ask},
		{"git checkout -- .", Allow, Ask},
		{"git checkout -f main", Allow, Ask},
		{"git restore src/main.c", Allow, Ask},
		{"truncate -s 0 src/main.c", Allow, Ask},
		{"rm -rf .git/objects", Allow, Ask},
		// Unchanged: blocked or outside the workspace.
		{"rm -rf .", Deny, Deny},
		{"rm -rf .git", Deny, Deny},
		{"rm -rf /w", Deny, Deny},
		{"rm -rf ../other", Ask, Ask},
		{"rm -rf src ../other", Ask, Ask},
		{"rm -rf $DIR", Ask, Ask},
		{"git stash drop", Ask, Ask},
	} {
		in := e.DecideLine(undoable, tc.line)
		if in.Action != tc.withUndo {
			t.Errorf("%q contained with undo: %s, want %s\n%v", tc.line, in.Action, tc.withUndo, in.Reasons)
		}
		if tc.withUndo == Allow && tc.without != Allow && !strings.Contains(strings.Join(in.Reasons, "; "), "undo: forgebox undo") {
			t.Errorf("%q contained with undo: reasons %q do not say how to undo it", tc.line, in.Reasons)
		}
		for name, c := range map[string]*Context{"contained without undo": noUndo, "not contained, with undo": reaching} {
			if d := e.DecideLine(c, tc.line); d.Action != tc.without {
				t.Errorf("%q %s: %s, want %s\n%v", tc.line, name, d.Action, tc.without, d.Reasons)
			}
		}
	}
}

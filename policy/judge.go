package policy

import (
	"fmt"
	"strings"
)

// judge collects the findings on one simple command. The built-in
// knowledge (known*.go) reports through it; nested code goes back to the
// engine through shell and argv.
type judge struct {
	st  *state
	ctx *Context
	cmd *Command
	// layer is the unwrapping step the findings belong to: 0 for the
	// outermost wrapper, len(cmd.Wrappers) for the command itself. An
	// allow rule that matches form i covers the findings of layers >= i.
	layer    int
	findings []layered
	writes   []Write
}

type layered struct {
	Finding
	layer int
}

// add records a finding on the command being judged.
func (j *judge) add(cat Category, risk int, format string, args ...any) {
	reason := format
	if len(args) > 0 {
		reason = fmt.Sprintf(format, args...)
	}
	j.findings = append(j.findings, layered{Finding{Category: cat, Risk: clampRisk(risk), Reason: reason}, j.layer})
}

// reach records a finding whose risk is only what the command could reach
// outside the workspace (Finding.Reach): judged as found when nothing
// contains the command, and as contained when its sandbox does.
func (j *judge) reach(cat Category, risk int, format string, args ...any) {
	j.add(cat, risk, format, args...)
	j.findings[len(j.findings)-1].Reach = true
}

// projectCode records that the command runs code forgebox does not read:
// a script of the workspace, inline code, the project's own build, test
// or package scripts. In the workspace that code only changes the
// workspace, but it may send data or change something remote: a reach.
// Contained, it runs unasked; reaching out (--net host, a --rw path
// outside the workspace, the hook without --wrap) it is asked about once
// per session, as an unknown program is.
func (j *judge) projectCode(format string, args ...any) {
	j.reach(Caution, 3, format+", code forgebox does not read", args...)
}

// reachLast marks the last finding as a reach (Finding.Reach): what it
// acts on lies beyond the sandbox (a database server, a remote machine).
func (j *judge) reachLast() {
	j.findings[len(j.findings)-1].Reach = true
}

// undoable marks the last finding: all it destroys is content of the
// workspace (Finding.Undoable). Only what is asked every time without
// undo (R3) or twice a session is marked; what is approved once per
// session (git tag -d, git branch -d) stays a question.
func (j *judge) undoable() {
	j.findings[len(j.findings)-1].Undoable = true
}

// inWorkspace reports whether every argument names a path of the
// workspace as written: its content, its root or its .git (what undo
// keeps, Finding.Undoable).
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

func clampRisk(r int) int {
	return min(max(r, 0), 10)
}

// shell judges code that the command runs as a shell line (bash -c CODE,
// eval, a here-document fed to sh). Its commands become judgements of
// their own, one level deeper. Code that is not static is judged by what
// can be seen, and the command asks.
func (j *judge) shell(code string, static bool, how string) {
	if !static {
		j.add(Caution, 5, "%s runs shell code computed at run time", how)
	}
	defer j.enter()()
	j.st.line(code, j.cmd.Depth+1, how)
}

// enter makes the judge's directory (moved by env -C, sudo -D, git -C)
// the one nested commands start in; the returned func restores it.
func (j *judge) enter() func() {
	saved := j.st.ctx
	j.st.ctx = j.ctx
	return func() { j.st.ctx = saved }
}

// argv judges another simple command this one runs (find -exec, xargs,
// watch -x), one level deeper.
func (j *judge) argv(args []Arg, how string) {
	if len(args) == 0 {
		return
	}
	c := &Command{Args: args, Name: programName(args[0]), Depth: j.cmd.Depth + 1, Source: joinArgs(args)}
	defer j.enter()()
	j.st.command(c, how)
}

// place says where a path argument points.
func (j *judge) place(a Arg) Place { return j.ctx.PlaceOf(a) }

// name is the program as the knowledge knows it.
func (j *judge) name() string { return j.cmd.Name }

// quote renders an arg for a reason.
func quote(a Arg) string {
	if strings.ContainsAny(a.Value, " \t\n'\"") {
		return fmt.Sprintf("%q", a.Value)
	}
	return a.Value
}

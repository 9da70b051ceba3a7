package policy

// Next is what a decision lets happen next.
type Next int

const (
	// Proceed: the command runs.
	Proceed Next = iota
	// Refuse: the command never runs, whatever anyone approves.
	Refuse
	// AskPerson: a person must approve it first.
	AskPerson
)

// Next is the one gate every surface passes a decision through: the
// command line, the MCP tools, the shell sessions and the Claude Code
// hook. approvedOnce says a person already approved this command for this
// run (--yes, an answer through the client). Only an ask can be approved;
// a decision at R4 is a denial (see decision), so it is never approved.
func (d *Decision) Next(approvedOnce bool) Next {
	switch {
	case d == nil:
		return Refuse
	case d.Action == Allow:
		return Proceed
	case d.Action != Ask:
		return Refuse
	case approvedOnce:
		return Proceed
	}
	return AskPerson
}

// Approvable reports whether a person may approve d with scope s: an ask,
// and one of the scopes it offers. Every way of recording an approval
// checks it.
func (d *Decision) Approvable(s Scope) bool {
	return d != nil && d.Action == Ask && d.Offers(s)
}

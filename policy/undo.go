package policy

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

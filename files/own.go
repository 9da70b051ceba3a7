package files

// The caller's own configuration and state (Options.Own) are not the
// project's: forgebox keeps its configuration, approvals and history
// there, and a rule written into them would be honoured by every later
// run, in every workspace. They are guarded apart from the protected
// names, by host path rather than by name in the workspace, and an
// operation that would change them is refused whatever the other guards
// say.

// configureOwn places the own paths in the workspace: as given, with the
// host's links resolved, and the whole workspace when one holds it. A
// path outside the workspace has no form: no operation reaches it.
func (f *FS) configureOwn(paths []string) error {
	for _, p := range paths {
		g, err := f.hostForms("own", p)
		if err != nil {
			return err
		}
		if len(g.forms) > 0 {
			f.own = append(f.own, g)
		}
	}
	return nil
}

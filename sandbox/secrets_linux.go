package sandbox

// HiddenSecrets lists what a run with this spec would hide on this host
// now as secrets: the entries of the table that exist (symlinks resolved).
// It is
// what forgebox doctor reports and what the MCP file tools refuse to read.
func HiddenSecrets(s Spec) []string {
	found := existingSecrets(homeDirs(s))
	out := make([]string, len(found))
	for i, h := range found {
		out[i] = h.Path
	}
	return out
}

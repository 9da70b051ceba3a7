package sandbox

// HiddenSecrets lists what a run with this spec would hide on this host
// now as secrets: the entries of the table that exist (symlinks resolved)
// and every other path that reaches them through the mount table. It is
// what forgebox doctor reports and what the MCP file tools refuse to read.
func HiddenSecrets(s Spec) []string {
	found := existingSecrets(basesFor(s, homeDirs(s)))
	found = append(found, sameFileElsewhere(found, readMountinfo())...)
	out := make([]string, len(found))
	for i, h := range found {
		out[i] = h.Path
	}
	return out
}

//go:build !linux

package sandbox

// HiddenSecrets lists the secret locations for this spec's homes, whether
// they exist or not: macOS's profile and Windows's grants deny them by
// name.
func HiddenSecrets(s Spec) []string { return secretCandidates(basesFor(s, homeDirs(s))) }

package conpty

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strings"
)

// runSIDMark is the first sub-authority of every run SID: "fbx1".
const runSIDMark = 0x66627831

// RunSID makes a SID for one run: S-1-9 (the authority of third-party
// resource managers), a constant that marks it as forgebox's, and 96
// random bits. It stands for no account: only that run's token holds it,
// and the ACEs the run adds name it, so that the undo finds exactly those.
func RunSID() (string, error) {
	var r [12]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", fmt.Errorf("make a run SID: %w", err)
	}
	return fmt.Sprintf("S-1-9-%d-%d-%d-%d", runSIDMark,
		binary.LittleEndian.Uint32(r[0:]), binary.LittleEndian.Uint32(r[4:]), binary.LittleEndian.Uint32(r[8:])), nil
}

// IsRunSID reports whether s has the form RunSID makes: what a leftover
// ACE of a run that died looks like.
func IsRunSID(s string) bool {
	rest, ok := strings.CutPrefix(s, fmt.Sprintf("S-1-9-%d-", runSIDMark))
	if !ok || strings.Count(rest, "-") != 2 {
		return false
	}
	_, err := ParseSID(s)
	return err == nil
}

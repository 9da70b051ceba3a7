//go:build linux && !cgo

package sandbox

// Built without cgo, the binary has no child init: every sandboxed run fails
// closed with an UnavailableError.
const childLinked = false

func wireConstantC(int) int { return -1 }

func claimPrefork() (sock, pid, pidfd int, ok bool) { return -1, -1, -1, false }

package sandbox

// The child's narrative lives in init_linux.c: an ELF constructor that runs
// before the Go runtime when the binary is started with initVerb, and never
// returns. This file only links it in.

/*
#cgo CFLAGS: -O2 -Wall
#include "init_linux.h"
int forgebox_wire_constant(int which);
int forgebox_claim_prefork(int *sock, int *pid, int *pidfd);
*/
import "C"

// childLinked reports whether the C child is part of this binary.
const childLinked = true

// wireConstantC returns the C side's value of the which-th wire constant,
// in the order of the table in init_linux.c.
func wireConstantC(which int) int { return int(C.forgebox_wire_constant(C.int(which))) }

// claimPrefork hands over the child the constructor started before the Go
// runtime, once. ok is false when there is none (not `forgebox run`, or
// FORGEBOX_NO_PREFORK set, or already claimed).
func claimPrefork() (sock, pid, pidfd int, ok bool) {
	var s, p, f C.int
	if C.forgebox_claim_prefork(&s, &p, &f) == 0 {
		return -1, -1, -1, false
	}
	return int(s), int(p), int(f), true
}

package seccomp

// A Program is a compiled filter, ready for the sandbox child to load.
type Program struct {
	// BPF is the struct sock_filter array exactly as seccomp(2) takes it:
	// 8 bytes per instruction in the native byte order. The child passes it
	// as struct sock_fprog{len(BPF)/8, BPF} to
	// seccomp(SECCOMP_SET_MODE_FILTER, 0, ...) after
	// prctl(PR_SET_NO_NEW_PRIVS, 1), right before execve.
	BPF []byte
	// Denied names what the filter refuses, sorted, one Rule.Label each,
	// for the run's `enforced` report.
	Denied []string
	// Notify, built with Options.Attribute, is BPF with every refusal
	// (but the Fallback ones) and every Watch answered
	// SECCOMP_RET_USER_NOTIF instead: loaded with
	// SECCOMP_FILTER_FLAG_NEW_LISTENER, its listener's owner answers each
	// call as Decide says. Where no listener can be made, the child loads
	// BPF instead.
	Notify []byte

	calls map[uint32]notified // what Notify sends, by syscall number
	arch  uint32              // AUDIT_ARCH_* of the program
}

// Len returns the number of BPF instructions.
func (p *Program) Len() int { return len(p.BPF) / 8 }

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
}

// Len returns the number of BPF instructions.
func (p *Program) Len() int { return len(p.BPF) / 8 }

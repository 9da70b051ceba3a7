package seccomp

// Mode and flag bits the kernel reads the same on every architecture
// Compile accepts (asm-generic and x86 agree on these).
const (
	modeSetuid = 0o4000 // S_ISUID
	modeSetgid = 0o2000 // S_ISGID
	openCreat  = 0o100  // O_CREAT
	// openTmpfile is __O_TMPFILE; O_TMPFILE is it with O_DIRECTORY, whose
	// value differs between architectures. The bit alone is enough: the
	// kernel creates nothing without it.
	openTmpfile = 0o20000000
)

// setidRules keep the setuid and setgid bits off every file the sandbox
// creates or changes: a file in a writable root outlives the run, and a
// setuid shell left in the workspace by a command running as root makes any
// host user root (issue 16, class 3). Each syscall that sets a mode is
// refused when the mode has either bit; the bits are single bits of the mode,
// so the upper half of the register, which the kernel ignores, cannot matter.
//
// mkdir and mkdirat need no rule: the kernel keeps only the permission bits
// and the sticky bit of their mode, and a directory gets setgid only by
// inheriting it from a setgid parent, which the host made so. chmod of a
// directory with setgid is refused with the rest: the filter cannot tell a
// directory from a file.
func setidRules() []Rule {
	const why = "a setuid or setgid file in a writable root outlives the run: run by anyone on the host, it runs as its owner or group"
	bits := []struct {
		name string
		bit  uint64
	}{{"S_ISUID", modeSetuid}, {"S_ISGID", modeSetgid}}
	var rs []Rule
	// The mode's argument for calls that always take one.
	for _, c := range []struct {
		syscall string
		mode    uint
	}{
		{"chmod", 1}, {"fchmod", 1}, {"fchmodat", 2}, {"fchmodat2", 2},
		{"mknod", 1}, {"mknodat", 2}, {"creat", 1},
	} {
		for _, b := range bits {
			rs = append(rs, Rule{
				Syscall: c.syscall,
				Conds:   []Cond{{Arg: c.mode, Op: MaskedEqual, Mask: b.bit, Value: b.bit}},
				Errno:   EPERM,
				Label:   c.syscall + "(mode with S_ISUID or S_ISGID)",
				Why:     b.name + ": " + why,
			})
		}
	}
	// open and openat read the mode only when they create a file.
	for _, c := range []struct {
		syscall     string
		flags, mode uint
	}{{"open", 1, 2}, {"openat", 2, 3}} {
		for _, create := range []uint64{openCreat, openTmpfile} {
			for _, b := range bits {
				rs = append(rs, Rule{
					Syscall: c.syscall,
					Conds: []Cond{
						{Arg: c.flags, Op: MaskedEqual, Mask: create, Value: create},
						{Arg: c.mode, Op: MaskedEqual, Mask: b.bit, Value: b.bit},
					},
					Errno: EPERM,
					Label: c.syscall + "(O_CREAT or O_TMPFILE, mode with S_ISUID or S_ISGID)",
					Why:   b.name + ": " + why,
				})
			}
		}
	}
	rs = append(rs, Rule{
		Syscall:  "openat2",
		Errno:    ENOSYS,
		Label:    "openat2",
		Fallback: true,
		Why:      "its mode sits in a struct the filter cannot read; ENOSYS makes callers fall back to openat, whose mode it can",
	})
	return rs
}

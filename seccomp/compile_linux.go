//go:build linux && cgo

package seccomp

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

// maxInstructions is BPF_MAXINSNS, the longest filter the kernel loads.
const maxInstructions = 4096

// Compile builds the filter for the native architecture with libseccomp.
// Syscalls that do not exist there are left out, of the program and of
// Program.Denied. It costs about a quarter of a millisecond (libseccomp
// 2.5.4, amd64), mostly inside libseccomp.
func Compile(o Options) (*Program, error) {
	arch, err := libseccomp.GetNativeArch()
	if err != nil {
		return nil, fmt.Errorf("compile seccomp filter: native architecture: %w", err)
	}
	// Rules take clone's flags from its first argument and use asm-generic
	// errno values; both hold here and were tested here.
	if arch != libseccomp.ArchAMD64 && arch != libseccomp.ArchARM64 {
		return nil, fmt.Errorf("compile seccomp filter for %s: %w", arch, errors.ErrUnsupported)
	}

	f, err := libseccomp.NewFilter(libseccomp.ActAllow)
	if err != nil {
		return nil, fmt.Errorf("compile seccomp filter: %w", err)
	}
	defer f.Release()
	// Calls through another ABI (i386 int 0x80, x32 numbers) kill the
	// process: no ordinary program makes them, and a denylist written for
	// one syscall table means nothing for another.
	if err := f.SetBadArchAction(libseccomp.ActKillProcess); err != nil {
		return nil, fmt.Errorf("compile seccomp filter: bad-architecture action: %w", err)
	}
	// Only seccomp_load reads this attribute; the child sets no_new_privs
	// itself before loading the exported program.
	if err := f.SetNoNewPrivsBit(false); err != nil {
		return nil, fmt.Errorf("compile seccomp filter: no_new_privs attribute: %w", err)
	}
	// A binary tree by syscall number: a handful of comparisons per call
	// instead of one per listed syscall. Where libseccomp refuses it (before
	// 2.5) the program is longer, not different.
	_ = f.SetOptimize(2)

	var denied []string
	// With Attribute, refusals and watches are compiled with marker
	// actions that no loaded program keeps (variants): one compilation
	// yields both programs.
	calls := map[uint32]notified{}
	for _, r := range Rules(o) {
		nr, ok, err := syscallNumber(r.Syscall)
		if err != nil {
			return nil, fmt.Errorf("compile seccomp filter: %w", err)
		}
		if !ok {
			continue
		}
		action := libseccomp.ActErrno.SetReturnCode(int16(r.Errno))
		if o.Attribute && !r.Fallback {
			action = libseccomp.ActTrace.SetReturnCode(int16(r.Errno))
			c := calls[uint32(nr)]
			c.name, c.refusals = r.Syscall, append(c.refusals, r)
			calls[uint32(nr)] = c
		}
		if err := addRule(f, nr, action, r.Conds); err != nil {
			return nil, fmt.Errorf("compile seccomp filter: rule %s (%s): %w", r.Label, r.Syscall, err)
		}
		denied = append(denied, r.Label)
	}
	for _, w := range Watches(o) {
		nr, ok, err := syscallNumber(w.Syscall)
		if err != nil {
			return nil, fmt.Errorf("compile seccomp filter: %w", err)
		}
		if !ok {
			continue
		}
		// Which of two overlapping rules with different actions wins is
		// libseccomp's choice: a watch on a refused syscall could let a
		// refusal through in BPF. Decide would still refuse, but BPF
		// would not.
		if c := calls[uint32(nr)]; len(c.refusals) > 0 {
			return nil, fmt.Errorf("compile seccomp filter: watch on %s, which rules also refuse", w.Syscall)
		}
		if err := addRule(f, nr, libseccomp.ActLog, w.Conds); err != nil {
			return nil, fmt.Errorf("compile seccomp filter: watch on %s: %w", w.Syscall, err)
		}
		calls[uint32(nr)] = notified{name: w.Syscall, watched: true}
	}

	bpf, err := exportBPF(f)
	if err != nil {
		return nil, fmt.Errorf("compile seccomp filter: %w", err)
	}
	slices.Sort(denied)
	p := &Program{BPF: bpf, Denied: slices.Compact(denied)}
	if o.Attribute {
		if p.BPF, p.Notify, err = variants(bpf); err != nil {
			return nil, fmt.Errorf("compile seccomp filter: %w", err)
		}
		p.calls = calls
		p.arch = auditArch(arch)
	}
	return p, nil
}

// auditArch is the AUDIT_ARCH_* value the kernel puts in a notification.
func auditArch(a libseccomp.ScmpArch) uint32 {
	if a == libseccomp.ArchARM64 {
		return unix.AUDIT_ARCH_AARCH64
	}
	return unix.AUDIT_ARCH_X86_64
}

// syscallNumber resolves a name for the native architecture; ok is false
// when the architecture has no such syscall.
func syscallNumber(name string) (nr libseccomp.ScmpSyscall, ok bool, err error) {
	nr, err = libseccomp.GetSyscallFromName(name)
	if err == nil {
		// libseccomp numbers syscalls of other architectures below zero.
		return nr, nr >= 0, nil
	}
	// Syscalls newer than the libseccomp this is built with (Debian 12 has
	// 2.5.4, which knows Linux up to 6.0 or so).
	switch name {
	case "open_tree_attr":
		return unix.SYS_OPEN_TREE_ATTR, true, nil
	case "fchmodat2":
		return unix.SYS_FCHMODAT2, true, nil
	}
	major, minor, micro := libseccomp.GetLibraryVersion()
	return 0, false, fmt.Errorf("syscall %q unknown to libseccomp %d.%d.%d", name, major, minor, micro)
}

func addRule(f *libseccomp.ScmpFilter, nr libseccomp.ScmpSyscall, action libseccomp.ScmpAction, cs []Cond) error {
	if len(cs) == 0 {
		return f.AddRule(nr, action)
	}
	conds := make([]libseccomp.ScmpCondition, 0, len(cs))
	for _, c := range cs {
		var (
			sc  libseccomp.ScmpCondition
			err error
		)
		switch c.Op {
		case MaskedEqual:
			// Mask first, then the value: MakeCondition's comment has
			// them the other way round, libseccomp does not.
			sc, err = libseccomp.MakeCondition(c.Arg, libseccomp.CompareMaskedEqual, c.Mask, c.Value)
		case GreaterEqual:
			sc, err = libseccomp.MakeCondition(c.Arg, libseccomp.CompareGreaterEqual, c.Value)
		default:
			err = fmt.Errorf("unknown comparison %d", c.Op)
		}
		if err != nil {
			return fmt.Errorf("argument %d: %w", c.Arg, err)
		}
		conds = append(conds, sc)
	}
	return f.AddRuleConditional(nr, action, conds)
}

// exportBPF writes the program to a memfd and reads it back: libseccomp
// 2.5 exports only to a file descriptor (seccomp_export_bpf_mem is 2.6).
func exportBPF(f *libseccomp.ScmpFilter) ([]byte, error) {
	fd, err := unix.MemfdCreate("forgebox-seccomp", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("export BPF: memfd_create: %w", err)
	}
	mem := os.NewFile(uintptr(fd), "forgebox-seccomp")
	defer mem.Close()
	if err := f.ExportBPF(mem); err != nil {
		return nil, fmt.Errorf("export BPF: %w", err)
	}
	if _, err := mem.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("export BPF: %w", err)
	}
	bpf, err := io.ReadAll(mem)
	if err != nil {
		return nil, fmt.Errorf("export BPF: %w", err)
	}
	if n := len(bpf); n == 0 || n%8 != 0 || n/8 > maxInstructions {
		return nil, fmt.Errorf("export BPF: %d bytes is not a loadable program of at most %d instructions", n, maxInstructions)
	}
	return bpf, nil
}

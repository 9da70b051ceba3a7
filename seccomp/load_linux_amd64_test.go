//go:build cgo

package seccomp

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// tinyELF returns a static x86-64 executable that runs code and nothing else.
func tinyELF(code []byte) []byte {
	const (
		base  = 0x400000
		ehdr  = 64
		phdr  = 56
		entry = base + ehdr + phdr
	)
	le := binary.LittleEndian
	b := make([]byte, ehdr+phdr)
	copy(b, "\x7fELF\x02\x01\x01") // 64-bit, little-endian, version 1
	le.PutUint16(b[16:], uint16(elf.ET_EXEC))
	le.PutUint16(b[18:], uint16(elf.EM_X86_64))
	le.PutUint32(b[20:], uint32(elf.EV_CURRENT))
	le.PutUint64(b[24:], entry)
	le.PutUint64(b[32:], ehdr) // program headers follow the ELF header
	le.PutUint16(b[52:], ehdr)
	le.PutUint16(b[54:], phdr)
	le.PutUint16(b[56:], 1)
	p := b[ehdr:]
	le.PutUint32(p[0:], uint32(elf.PT_LOAD))
	le.PutUint32(p[4:], uint32(elf.PF_R|elf.PF_X))
	le.PutUint64(p[16:], base) // p_vaddr; p_offset is 0: the whole file
	le.PutUint64(p[24:], base)
	le.PutUint64(p[32:], uint64(len(b)+len(code)))
	le.PutUint64(p[40:], uint64(len(b)+len(code)))
	le.PutUint64(p[48:], 0x1000)
	return append(b, code...)
}

// TestLoadForeignABI makes syscalls through the i386 and x32 ABIs from a
// 64-bit process under the filter: the kernel must kill it with SIGSYS.
func TestLoadForeignABI(t *testing.T) {
	exit0 := []byte{0xb8, 60, 0, 0, 0, 0x31, 0xff, 0x0f, 0x05} // mov eax, 60 (exit); xor edi, edi; syscall
	cases := []struct {
		name    string
		code    []byte
		killed  bool
		control string // why the kernel might not run the code even without a filter
	}{
		{"native getpid", []byte{0xb8, 39, 0, 0, 0, 0x0f, 0x05}, false, ""},                         // mov eax, 39; syscall
		{"i386 getpid via int 0x80", []byte{0xb8, 20, 0, 0, 0, 0xcd, 0x80}, true, "IA32 emulation"}, // mov eax, 20; int 0x80
		{"x32 getpid", []byte{0xb8, 39, 0, 0, 0x40, 0x0f, 0x05}, true, ""},                          // mov eax, 0x40000027; syscall
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			exe := filepath.Join(dir, filepath.Base(t.Name()))
			if err := os.WriteFile(exe, tinyELF(append(c.code, exit0...)), 0o755); err != nil {
				t.Fatal(err)
			}
			if f, err := elf.Open(exe); err != nil {
				t.Fatalf("tinyELF does not parse: %v", err)
			} else {
				f.Close()
			}
			// Without the filter the program must exit 0, or the test
			// proves nothing.
			if err := exec.Command(exe).Run(); err != nil {
				if errors.Is(err, fs.ErrPermission) {
					t.Skipf("cannot execute files in %s: %v", dir, err)
				}
				if c.control != "" {
					t.Skipf("without a filter %s fails (%v): kernel lacks %s", c.name, err, c.control)
				}
				t.Fatalf("without a filter: %v", err)
			}
			out, st := startChild(t, "exec:"+exe)
			ws := st.Sys().(syscall.WaitStatus)
			switch {
			case c.killed && !(ws.Signaled() && ws.Signal() == syscall.SIGSYS):
				t.Errorf("under the filter: %v, want killed by SIGSYS\n%s", st, out)
			case !c.killed && !st.Success():
				t.Errorf("under the filter: %v, want exit 0\n%s", st, out)
			}
		})
	}
}

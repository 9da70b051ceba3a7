//go:build cgo

package seccomp

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from this run")

// TestGolden keeps a readable listing of the program in testdata, one per
// libseccomp version (another version lays the program out differently).
func TestGolden(t *testing.T) {
	major, minor, micro := libseccomp.GetLibraryVersion()
	golden := filepath.Join("testdata", fmt.Sprintf("filter_amd64_libseccomp-%d.%d.%d.golden", major, minor, micro))
	o := Options{RestrictNetwork: true}
	p, err := Compile(o)
	if err != nil {
		t.Fatalf("Compile(%+v): %v", o, err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Compile(%+v) with libseccomp %d.%d.%d on amd64: %d instructions\n", o, major, minor, micro, p.Len())
	fmt.Fprintf(&b, "# Denied:\n#   %s\n", strings.Join(p.Denied, "\n#   "))
	names := map[uint32]string{}
	for _, r := range Rules(o) {
		if nr, ok, _ := syscallNumber(r.Syscall); ok {
			names[uint32(nr)] = r.Syscall
		}
	}
	b.WriteString(listing(instructions(t, p), names))
	if *update {
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if os.IsNotExist(err) {
		t.Skipf("no %s: run go test -run TestGolden -update to write it", golden)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("program differs from %s; if the change is meant, run go test -run TestGolden -update and review the diff", golden)
	}
}

// listing prints the program with absolute jump targets and what each load
// and constant means; names maps syscall numbers to names.
func listing(ins []bpf.Instruction, names map[uint32]string) string {
	ops := map[bpf.JumpTest]string{
		bpf.JumpEqual: "==", bpf.JumpNotEqual: "!=", bpf.JumpGreaterThan: ">", bpf.JumpLessThan: "<",
		bpf.JumpGreaterOrEqual: ">=", bpf.JumpLessOrEqual: "<=", bpf.JumpBitsSet: "&", bpf.JumpBitsNotSet: "!&",
	}
	var b strings.Builder
	loaded := -1 // offset of the last load into A
	for i, in := range ins {
		var text, note string
		switch in := in.(type) {
		case bpf.LoadAbsolute:
			loaded = int(in.Off)
			text = fmt.Sprintf("ld [%d]", in.Off)
			switch off := int(in.Off); {
			case off == 0:
				note = "nr"
			case off == 4:
				note = "arch"
			case off >= 16 && off < 64:
				note = fmt.Sprintf("args[%d] %s half", (off-16)/8, map[bool]string{true: "low", false: "high"}[off%8 == 0])
			}
		case bpf.ALUOpConstant:
			text = fmt.Sprintf("%s", in)
			if in.Op == bpf.ALUOpAnd {
				text = fmt.Sprintf("and #%#x", in.Val)
			}
		case bpf.JumpIf:
			text = fmt.Sprintf("if A %s %#x goto %d", ops[in.Cond], in.Val, i+1+int(in.SkipTrue))
			if in.SkipFalse != 0 {
				text += fmt.Sprintf(" else %d", i+1+int(in.SkipFalse))
			}
			switch {
			case loaded == 4 && in.Val == unix.AUDIT_ARCH_X86_64:
				note = "AUDIT_ARCH_X86_64"
			case loaded == 0 && in.Val == 0x40000000:
				note = "x32 syscall bit"
			case loaded == 0 && in.Val == 0xffffffff:
				note = "nr -1: a tracer skipping the call"
			case loaded == 0 && (in.Cond == bpf.JumpEqual || in.Cond == bpf.JumpNotEqual):
				note = names[in.Val]
			}
		case bpf.RetConstant:
			text = "ret " + retString(in.Val)
		default:
			text = fmt.Sprint(in)
		}
		if note != "" {
			fmt.Fprintf(&b, "%4d  %-36s ; %s\n", i, text, note)
		} else {
			fmt.Fprintf(&b, "%4d  %s\n", i, text)
		}
	}
	return b.String()
}

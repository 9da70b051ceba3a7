package vm

import (
	"bytes"
	"fmt"
	"io/fs"
	"strconv"
	"testing"
	"time"
)

// newcEntry is one parsed record of a newc archive.
type newcEntry struct {
	name     string
	mode     uint32
	uid, gid int
	data     string
}

// readNewc parses a newc archive, checking the alignment the kernel needs.
func readNewc(t *testing.T, b []byte) []newcEntry {
	t.Helper()
	var out []newcEntry
	field := func(off, i int) int {
		v, err := strconv.ParseUint(string(b[off+6+8*i:off+14+8*i]), 16, 32)
		if err != nil {
			t.Fatalf("header field %d at %d: %v", i, off, err)
		}
		return int(v)
	}
	for off := 0; ; {
		if off%4 != 0 || off+110 > len(b) || string(b[off:off+6]) != "070701" {
			t.Fatalf("no newc header at offset %d", off)
		}
		size, namesize := field(off, 6), field(off, 11)
		name := string(b[off+110 : off+110+namesize-1])
		dataOff := (off + 110 + namesize + 3) &^ 3
		if name == "TRAILER!!!" {
			return out
		}
		out = append(out, newcEntry{name: name, mode: uint32(field(off, 1)), uid: field(off, 2), gid: field(off, 3), data: string(b[dataOff : dataOff+size])})
		off = (dataOff + size + 3) &^ 3
	}
}

func TestImageWriteTo(t *testing.T) {
	var im Image
	im.File("/etc/passwd", []byte("root:x:0:0::/root:/bin/sh\n"), 0o644, 0, 0)
	im.Dir("/home/u", 0o750, 1000, 1000)
	im.Symlink("/bin/sh", "/bin/busybox")
	im.Dir("/tmp", fs.ModeSticky|0o777, 0, 0)
	im.File("/init", []byte("#!/bin/sh\n"), 0o755, 0, 0)

	var b bytes.Buffer
	n, err := im.WriteTo(&b)
	if err != nil || n != int64(b.Len()) {
		t.Fatalf("WriteTo = %d, %v; wrote %d bytes", n, err, b.Len())
	}
	var got []string
	for _, e := range readNewc(t, b.Bytes()) {
		got = append(got, fmt.Sprintf("%s %o %d:%d %q", e.name, e.mode, e.uid, e.gid, e.data))
	}
	want := []string{
		`bin 40755 0:0 ""`,
		`bin/sh 120777 0:0 "/bin/busybox"`,
		`etc 40755 0:0 ""`,
		`etc/passwd 100644 0:0 "root:x:0:0::/root:/bin/sh\n"`,
		`home 40755 0:0 ""`,
		`home/u 40750 1000:1000 ""`,
		`init 100755 0:0 "#!/bin/sh\n"`,
		`tmp 41777 0:0 ""`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("archive holds\n%q\nwant\n%q", got, want)
	}
}

func TestParseConsole(t *testing.T) {
	text := []string{
		"[    3.1] Run /init as init process",
		"FBVM-FACT init cgroup_requested v2",
		"FBVM-FACT root landlock_abi 6",
		"FBVM-START root/doctor",
		"FBVM-RESULT root/doctor pass user_namespaces=ok sandbox_launch=ok",
		"FBVM-START root/run_true",
		"FBVM-LOG root/run_true exit 1 after 5ms",
		"FBVM-RES[    9.9] random: crng init done", // a kernel message cuts a line
		"FBVM-RESULT root/run_true fail exit 1, enforced=<nil>",
		"FBVM-START root/timeout",
		"FBVM-END root",
		"FBVM-DONE",
	}
	var c consoleLog
	for i, l := range text {
		c = append(c, consoleLine{at: time.Duration(i) * time.Second, text: l})
	}
	r := parseConsole(c)
	var got []string
	for _, ch := range r.checks {
		got = append(got, fmt.Sprintf("%s %s %q %q", ch.name, ch.status, ch.detail, ch.logs))
	}
	want := []string{
		`root/doctor pass "user_namespaces=ok sandbox_launch=ok" []`,
		`root/run_true fail "exit 1, enforced=<nil>" ["exit 1 after 5ms"]`,
		`root/timeout  "" []`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("checks = %q, want %q", got, want)
	}
	if r.fact("root", "landlock_abi") != "6" || r.fact("init", "cgroup_requested") != "v2" || r.fact("user", "kernel") != "?" {
		t.Errorf("facts = %v", r.facts)
	}
	if !r.done || !r.ended["root"] || r.ended["user"] || r.firstAt != time.Second || r.doneAt != 11*time.Second {
		t.Errorf("done=%v ended=%v firstAt=%v doneAt=%v", r.done, r.ended, r.firstAt, r.doneAt)
	}
}

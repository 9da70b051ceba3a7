package history

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// selfStart returns this process's start time in clock ticks since boot
// (/proc/self/stat field 22): with the PID it names the process even after
// the PID is reused. 0 when unknown.
func selfStart() int64 {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0
	}
	return statStart(b)
}

// statStart parses field 22 of a /proc/PID/stat line. The command name
// (field 2) may hold spaces and parentheses, so fields are counted from the
// last ')'.
func statStart(b []byte) int64 {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	const field22 = 22 - 3 // f[0] is field 3 (state)
	if len(f) <= field22 {
		return 0
	}
	n, err := strconv.ParseInt(f[field22], 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// systemBootID returns the kernel's boot ID, which changes on every boot: a
// running row from another boot is abandoned whatever its PID says.
func systemBootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// ProcessAlive reports whether the process pid that started at start (clock
// ticks since boot) under bootID still exists. It suits Options.Alive on
// Linux; an unreadable /proc answers true, so that a row is never abandoned
// on a guess.
func ProcessAlive(pid int, start int64, bootID string) bool {
	if cur := systemBootID(); bootID != "" && cur != "" && bootID != cur {
		return false
	}
	if pid <= 0 {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if os.IsNotExist(err) {
		return false
	}
	if err != nil {
		return true
	}
	// A zombie has exited: its forgebox will never finish the row.
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X') {
		return false
	}
	return start == 0 || statStart(b) == start
}

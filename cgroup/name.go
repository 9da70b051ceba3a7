package cgroup

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// namePrefix starts the name of every group forgebox creates.
const namePrefix = "forgebox-"

// maxIDLen keeps a group name well under the 255 bytes of a file name.
const maxIDLen = 128

// ErrInvalidID is returned for a group id that is empty, too long, or not
// made of letters, digits, '.', '_' and '-'.
var ErrInvalidID = errors.New("invalid group id")

// owner identifies the forgebox process that created a group. The start
// time tells a live owner from an unrelated process that reused its pid;
// the pid namespace keeps one namespace's cleanup off another's groups,
// whose pids it cannot check.
type owner struct {
	PID   int
	Start uint64 // start time in clock ticks after boot, /proc/PID/stat field 22
	PidNS uint64 // inode number of the owner's pid namespace
}

// groupName is forgebox-PID-START-PIDNS-ID.
func groupName(o owner, id string) string {
	return fmt.Sprintf("%s%d-%d-%d-%s", namePrefix, o.PID, o.Start, o.PidNS, id)
}

// parseGroupName is the inverse of groupName; ok is false for any other name.
func parseGroupName(name string) (o owner, id string, ok bool) {
	rest, found := strings.CutPrefix(name, namePrefix)
	if !found {
		return owner{}, "", false
	}
	f := strings.SplitN(rest, "-", 4)
	if len(f) != 4 || checkID(f[3]) != nil {
		return owner{}, "", false
	}
	pid, err1 := strconv.Atoi(f[0])
	start, err2 := strconv.ParseUint(f[1], 10, 64)
	ns, err3 := strconv.ParseUint(f[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || pid <= 0 {
		return owner{}, "", false
	}
	return owner{PID: pid, Start: start, PidNS: ns}, f[3], true
}

func checkID(id string) error {
	if id == "" || len(id) > maxIDLen {
		return fmt.Errorf("%w %q: want 1 to %d characters", ErrInvalidID, id, maxIDLen)
	}
	for _, c := range id {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("%w %q: %q is not a letter, digit, '.', '_' or '-'", ErrInvalidID, id, c)
		}
	}
	return nil
}

// parseStartTime takes field 22 (starttime) from a /proc/PID/stat line.
// The command name (field 2) may hold spaces and parentheses: fields are
// counted after its last ')'.
func parseStartTime(stat string) (uint64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("parse /proc stat %q: no command name", stat)
	}
	f := strings.Fields(stat[i+1:])
	const field = 22 - 3 // f[0] is field 3, the state
	if len(f) <= field {
		return 0, fmt.Errorf("parse /proc stat %q: %d fields", stat, len(f)+2)
	}
	return strconv.ParseUint(f[field], 10, 64)
}

package cgroup

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Number is the resource's number for setrlimit(2) on this architecture.
func (r Resource) Number() (int, error) {
	switch r {
	case ResourceNproc:
		return unix.RLIMIT_NPROC, nil
	}
	return 0, fmt.Errorf("unknown resource limit %q", r)
}

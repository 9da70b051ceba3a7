//go:build !linux

package cgroup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
)

// Probe reports that this system has no cgroups.
func Probe() Host {
	return Host{Version: VersionNone, UID: -1, CPUs: runtime.NumCPU(),
		Why: "cgroups exist only on Linux"}
}

// Group is never created outside Linux.
type Group struct{}

func unsupported(op string) error {
	return fmt.Errorf("%s: cgroups on %s: %w", op, runtime.GOOS, errors.ErrUnsupported)
}

// Create fails with errors.ErrUnsupported.
func Create(Host, string, Limits) (*Group, error) { return nil, unsupported("create cgroup") }

func (*Group) Name() string                   { return "" }
func (*Group) Paths() []string                { return nil }
func (*Group) Add(int) error                  { return unsupported("add to cgroup") }
func (*Group) Dir() (*os.File, error)         { return nil, unsupported("open cgroup") }
func (*Group) JoinFiles() ([]*os.File, error) { return nil, unsupported("open cgroup") }
func (*Group) Stats() (Stats, error)          { return Stats{}, unsupported("read cgroup stats") }
func (*Group) Destroy(context.Context) error  { return unsupported("destroy cgroup") }

// CleanStale fails with errors.ErrUnsupported.
func CleanStale(context.Context, Host) ([]string, error) {
	return nil, unsupported("clean stale cgroups")
}

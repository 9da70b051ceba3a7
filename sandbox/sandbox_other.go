//go:build !linux && !darwin && !windows

package sandbox

import (
	"context"
	"errors"
	"runtime"
)

// Run fails closed where forgebox has no sandbox yet.
func Run(ctx context.Context, spec Spec, st Streams) (*Result, error) {
	return nil, &UnavailableError{Layer: "sandbox", Reason: "no sandbox backend for " + runtime.GOOS + " in this version", Err: errors.ErrUnsupported}
}

// QuickReport describes the host without launching anything.
func QuickReport() Report {
	return Report{OS: runtime.GOOS, Checks: []Check{{Name: CheckSandbox, Detail: "no sandbox backend for " + runtime.GOOS + " in this version"}}}
}

// Diagnose reports that nothing can be enforced here.
func Diagnose(ctx context.Context) Report {
	r := QuickReport()
	r.Missing = []string{"sandbox: no backend for " + runtime.GOOS}
	return r
}

// ReleasePrefork does nothing here: only Linux forks a child early.
func ReleasePrefork() {}

// CheckRoots fails closed where forgebox has no sandbox: nothing can be
// confined to a workspace.
func CheckRoots(s Spec) error {
	return &UnavailableError{Layer: "sandbox", Reason: "no sandbox backend for " + runtime.GOOS + " in this version", Err: errors.ErrUnsupported}
}

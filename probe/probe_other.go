//go:build !linux

package probe

import (
	"errors"
	"runtime"
)

// Do fails every operation where the probe has no implementation.
func Do(op string, args []string) Verdict {
	err := errors.ErrUnsupported
	return Verdict{Op: op, Args: args, Err: "the probe does not run on " + runtime.GOOS + ": " + err.Error()}
}

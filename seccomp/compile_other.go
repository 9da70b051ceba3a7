//go:build !linux || !cgo

package seccomp

import (
	"errors"
	"fmt"
	"runtime"
)

// Compile fails closed: seccomp is Linux's, and compiling needs libseccomp,
// which needs cgo.
func Compile(Options) (*Program, error) {
	if runtime.GOOS == "linux" {
		return nil, fmt.Errorf("compile seccomp filter: built without cgo, which libseccomp needs: %w", errors.ErrUnsupported)
	}
	return nil, fmt.Errorf("compile seccomp filter: seccomp exists only on linux, not %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

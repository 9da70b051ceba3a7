//go:build !linux

package landlock

import (
	"errors"
	"os"
)

// ABI reports that Landlock exists only on Linux.
func ABI() (int, error) { return 0, errors.ErrUnsupported }

// Build fails: there is no Landlock here.
func Build(Policy, int) (*os.File, int, error) { return nil, 0, errors.ErrUnsupported }

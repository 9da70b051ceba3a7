//go:build !linux

package selftest

import (
	"context"
	"errors"
	"runtime"

	"github.com/forgebox/forgebox/sandbox"
)

// run fails closed where forgebox has no sandbox to attack.
func run(ctx context.Context, spec sandbox.Spec, o Options, ch choices) (*Report, error) {
	return nil, &sandbox.UnavailableError{Layer: "sandbox", Reason: "no sandbox backend for " + runtime.GOOS + " in this version", Err: errors.ErrUnsupported}
}

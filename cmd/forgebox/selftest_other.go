//go:build !linux

package main

import (
	"context"
	"errors"
	"runtime"

	"github.com/forgebox/forgebox/sandbox"
)

// runSelftest fails closed where forgebox has no sandbox to attack.
func runSelftest(ctx context.Context, spec sandbox.Spec, ch choices) (*selftestReport, error) {
	return nil, &sandbox.UnavailableError{Layer: "sandbox", Reason: "no sandbox backend for " + runtime.GOOS + " in this version", Err: errors.ErrUnsupported}
}

package sandbox

import (
	"errors"
	"fmt"
	"syscall"
)

// ErrInvalid marks a spec that cannot run as given: bad paths, an empty
// command, NUL bytes, oversized arguments. Nothing was started.
var ErrInvalid = errors.New("invalid run")

// UnavailableError says that a protection the run needs is missing on this
// host (cmd/forgebox turns it into advice).
type UnavailableError struct {
	Layer  string // "namespaces", "sandbox child", ...
	Reason string
	Err    error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("%s unavailable: %s", e.Layer, e.Reason)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// SetupError reports the step of the sandbox setup that failed in the child.
type SetupError struct {
	Step    string
	Errno   syscall.Errno
	Message string
}

func (e *SetupError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("%s: %v", e.Step, e.Errno)
	}
	return fmt.Sprintf("%s: %s", e.Step, e.Message)
}

func (e *SetupError) Unwrap() error {
	if e.Errno == 0 {
		return nil
	}
	return e.Errno
}

// ExecError reports that the command itself could not be executed.
type ExecError struct {
	Program string
	Errno   syscall.Errno
}

func (e *ExecError) Error() string {
	if e.Errno == syscall.ENOENT {
		return fmt.Sprintf("%s: command not found", e.Program)
	}
	return fmt.Sprintf("cannot execute %s: %v", e.Program, e.Errno)
}

func (e *ExecError) Unwrap() error { return e.Errno }

// NotFound reports whether the program was missing (exit status 127) rather
// than present but not executable (126).
func (e *ExecError) NotFound() bool { return e.Errno == syscall.ENOENT || e.Errno == syscall.ENOTDIR }

// invalidError is a spec problem, worded for the user; errors.Is matches
// ErrInvalid.
type invalidError struct{ msg string }

func (e *invalidError) Error() string        { return e.msg }
func (e *invalidError) Is(target error) bool { return target == ErrInvalid }

func invalidf(format string, args ...any) error {
	return &invalidError{msg: fmt.Sprintf(format, args...)}
}

// Invalidf reports bad input found by a caller (flags, for example) in the
// same way as the sandbox's own checks: errors.Is(err, ErrInvalid).
func Invalidf(format string, args ...any) error { return invalidf(format, args...) }

// The exit codes of a command that did not run, as a shell gives them:
// every surface (forgebox run, its JSON, the MCP tools) uses these.
const (
	ExitForgebox      = 125 // forgebox itself failed, or refused its input
	ExitNotExecutable = 126 // denied, not approved, or not executable
	ExitNotFound      = 127
)

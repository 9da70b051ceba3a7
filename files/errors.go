package files

import (
	"errors"
	"fmt"
	"syscall"
)

// Kind classifies a refusal or failure so that a server can tell a model
// what went wrong without parsing text. The values are stable.
type Kind string

// The kinds of Error.
const (
	KindOutside   Kind = "outside-workspace" // the path, or a link on the way, leads out of the workspace
	KindProtected Kind = "protected"         // the operation would change a protected path
	KindHidden    Kind = "hidden"            // the path holds secrets
	KindNotFound  Kind = "not-found"
	KindExists    Kind = "exists"
	KindNotDir    Kind = "not-a-directory"
	KindIsDir     Kind = "is-a-directory"
	KindSymlink   Kind = "symlink" // the operation refuses to go through a final symbolic link
	KindSpecial   Kind = "special-file"
	KindTooLarge  Kind = "too-large"
	KindBinary    Kind = "binary"          // Edit: the file is not text (a NUL byte or invalid UTF-8)
	KindNoMatch   Kind = "no-match"        // Edit: the old text does not occur in the file
	KindAmbiguous Kind = "ambiguous-match" // Edit: the old text occurs more than once
	KindInvalid   Kind = "invalid"         // bad input: empty path, NUL byte, invalid UTF-8, over-long path, bad offset
	// KindPermission: the operating system refused access (file
	// permissions, a read-only mount).
	KindPermission  Kind = "permission-denied"
	KindUnsupported Kind = "unsupported" // no confinement for this operating system
	KindIO          Kind = "io"          // any other failure of the operating system
)

// Error is what every operation of FS returns when it fails. Path is the
// path as the caller gave it; Hint is one short sentence a model can act on.
type Error struct {
	Op   string `json:"op"`
	Path string `json:"path"`
	Kind Kind   `json:"kind"`
	Hint string `json:"hint"`
	Err  error  `json:"-"` // the underlying cause, when there is one
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("%s %q: %s", e.Op, e.Path, e.Kind)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the kind of err, KindIO for an error this package did not
// classify, and "" for nil.
func KindOf(err error) Kind {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindIO
}

// refusal builds an Error without an underlying cause.
func refusal(op, path string, kind Kind, hint string, args ...any) *Error {
	return &Error{Op: op, Path: path, Kind: kind, Hint: fmt.Sprintf(hint, args...)}
}

// osError classifies what the operating system said about path. An *Error
// passes through with its op and path filled in if they are missing.
func osError(op, path string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		c := *e
		if c.Op == "" {
			c.Op = op
		}
		if c.Path == "" {
			c.Path = path
		}
		return &c
	}
	kind, hint := classify(err)
	return &Error{Op: op, Path: path, Kind: kind, Hint: hint, Err: err}
}

func classify(err error) (Kind, string) {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return KindIO, "the operation failed; the error says why"
	}
	switch errno {
	case syscall.ENOENT:
		return KindNotFound, "the path does not exist; list its directory to see what does"
	case syscall.EEXIST, syscall.ENOTEMPTY:
		return KindExists, "something already exists at this path"
	case syscall.ENOTDIR:
		return KindNotDir, "a component of the path is not a directory"
	case syscall.EISDIR:
		return KindIsDir, "the path is a directory"
	case syscall.EACCES, syscall.EPERM, syscall.EROFS:
		return KindPermission, "the operating system refused access to this path"
	case syscall.ENAMETOOLONG:
		return KindInvalid, "the path or one of its names is too long"
	case syscall.ELOOP:
		return KindInvalid, "too many symbolic links on the way"
	case syscall.EFBIG, syscall.ENOSPC, syscall.EDQUOT:
		return KindTooLarge, "the file system has no room for this"
	}
	return KindIO, "the operation failed; the error says why"
}

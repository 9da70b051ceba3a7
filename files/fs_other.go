//go:build !linux

package files

import (
	"errors"
	"runtime"
)

// handle has nothing to hold where there is no confinement.
type handle struct{}

// openRoot fails closed: the confinement rests on openat(2) with
// O_NOFOLLOW relative to held directory descriptors (and openat2(2) where
// it exists), which this package implements only for Linux. A portable
// check-then-use fallback (Lstat each component, then act on the path)
// would lose to a link swapped in between, so there is none.
func openRoot(string) (handle, error) {
	return handle{}, unsupported()
}

func unsupported() error {
	return &Error{Op: "open", Kind: KindUnsupported,
		Hint: "file tools are not available on " + runtime.GOOS + " in this version", Err: errors.ErrUnsupported}
}

func (handle) close() error { return nil }

func (f *FS) list(string) (Listing, error)                  { return Listing{}, unsupported() }
func (f *FS) read(string, int64, int64) (ReadResult, error) { return ReadResult{}, unsupported() }
func (f *FS) write(string, string, bool) error              { return unsupported() }
func (f *FS) mkdir(string) error                            { return unsupported() }
func (f *FS) move(string, string) error                     { return unsupported() }
func (f *FS) copy(string, string) error                     { return unsupported() }
func (f *FS) remove(string, bool) error                     { return unsupported() }
func (f *FS) mayRemove(string) error                        { return unsupported() }
func (f *FS) edit(string, []Edit) (EditResult, error)       { return EditResult{}, unsupported() }
func (f *FS) targetPath(string) (string, error)             { return "", unsupported() }

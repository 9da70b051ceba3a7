//go:build !unix

package caches

import (
	"io"
	"io/fs"
	"path/filepath"
)

// Hold is a no-op where the private caches are not used (they need Linux
// mount namespaces); Clear still works.
func (w Workspace) Hold() (io.Closer, bool, error) { return io.NopCloser(nil), false, nil }

func lockExclusive(Workspace) (io.Closer, error) { return io.NopCloser(nil), nil }

func diskUsage(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d != nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

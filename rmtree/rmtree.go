// Package rmtree removes a directory tree that its own modes protect:
// overlay leaves its work directory mode 0, and Go's module cache is
// read-only by design, so os.RemoveAll alone fails on them. It is the one
// place forgebox does that (the private caches, the undo records).
package rmtree

import (
	"io/fs"
	"os"
	"path/filepath"
)

// All removes dir and everything beneath it, making directories writable
// and searchable on the way when a plain removal fails. It follows no
// symbolic link: a link is removed, not what it names.
func All(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		if err != nil && d != nil && d.IsDir() {
			// Unreadable before the chmod: walk it again now; WalkDir
			// calls back for a directory before reading it, so each
			// level is opened up before it is entered.
			return filepath.WalkDir(p, func(q string, e fs.DirEntry, _ error) error {
				if e != nil && e.IsDir() {
					os.Chmod(q, 0o700)
				}
				return nil
			})
		}
		return nil
	})
	return os.RemoveAll(dir)
}

package undo

import (
	"fmt"
	"path"
	"strconv"

	"golang.org/x/sys/unix"
)

// hostDirs resolves the workspace's directories for a commit or an undo
// without following a symlink and without leaving the workspace
// (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS). Whatever replaces a
// directory of the workspace with a symlink while forgebox renames there
// (the person, or a run without undo in the same workspace) makes the
// rename fail; it never moves a file outside the workspace, nor one from
// outside into a record.
type hostDirs struct {
	ws   string
	root int
	fds  map[string]int
}

func openHostDirs(ws string) (*hostDirs, error) {
	// The root is canonical (the run resolved it): a symlink on its way
	// now, even above it, would move files in and out of another
	// directory.
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC | unix.O_NOFOLLOW,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	fd, err := unix.Openat2(unix.AT_FDCWD, ws, &how)
	if err != nil {
		return nil, fmt.Errorf("open workspace %s: %w", ws, err)
	}
	return &hostDirs{ws: ws, root: fd, fds: map[string]int{}}, nil
}

// path is rel (slash-separated, relative to the workspace) as a path
// whose directories are pinned: /proc/self/fd/N/NAME, N the directory
// opened beneath the workspace. Only NAME is looked up by the calls that
// take it, without following it for lstat and rename.
func (d *hostDirs) path(rel string) (string, error) {
	dir, name := path.Dir(rel), path.Base(rel)
	if rel == "" || rel == "." {
		// The workspace itself (its mode): /proc/self/fd/N would be the
		// link, not the directory, to lstat; N/. is the directory pinned.
		return "/proc/self/fd/" + strconv.Itoa(d.root) + "/.", nil
	}
	fd, ok := d.fds[dir]
	if !ok {
		if len(d.fds) >= 64 {
			d.closeDirs()
		}
		how := unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
		var err error
		if fd, err = unix.Openat2(d.root, dir, &how); err != nil {
			return "", fmt.Errorf("open %s in the workspace: %w", dir, err)
		}
		d.fds[dir] = fd
	}
	return "/proc/self/fd/" + strconv.Itoa(fd) + "/" + name, nil
}

func (d *hostDirs) closeDirs() {
	for k, fd := range d.fds {
		unix.Close(fd)
		delete(d.fds, k)
	}
}

func (d *hostDirs) close() {
	d.closeDirs()
	unix.Close(d.root)
}

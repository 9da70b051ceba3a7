package sandbox

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// listDir returns the entries of dir with their types (from getdents, no
// stat), or nil when it cannot be listed. One listing is cheaper than a
// lookup per name when most names are absent.
func listDir(dir string) map[string]fs.FileMode {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	return listDirFD(fd)
}

// listDirFD lists the directory open at fd without consuming fd.
func listDirFD(fd int) map[string]fs.FileMode {
	if fd < 0 {
		return nil
	}
	d, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(d), ".")
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil
	}
	m := make(map[string]fs.FileMode, len(entries))
	for _, e := range entries {
		m[e.Name()] = e.Type()
	}
	return m
}

// noFollow is how paths the command may have touched are opened: no
// symlink anywhere on the way.
var noFollow = unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// openNoFollow opens name relative to dirfd with flags, refusing symlinks
// in every component.
func openNoFollow(dirfd int, name string, flags int) (int, error) {
	return unix.Openat2(dirfd, name, &unix.OpenHow{Flags: uint64(flags | unix.O_NOFOLLOW | unix.O_CLOEXEC), Resolve: uint64(noFollow)})
}

// openDir opens name relative to dirfd as a directory, refusing symlinks.
func openDir(dirfd int, name string) (int, error) {
	return openNoFollow(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY)
}

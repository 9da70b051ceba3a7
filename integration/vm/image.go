package vm

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// Image is the content of an initramfs: directories, files and symlinks by
// absolute path. Parents are created as needed (root-owned, 0755).
type Image struct {
	entries map[string]entry
}

type entry struct {
	mode     fs.FileMode
	uid, gid int
	data     []byte // file content, or symlink target
}

// Dir adds a directory.
func (im *Image) Dir(name string, perm fs.FileMode, uid, gid int) {
	im.add(name, entry{mode: fs.ModeDir | perm, uid: uid, gid: gid})
}

// File adds a regular file.
func (im *Image) File(name string, data []byte, perm fs.FileMode, uid, gid int) {
	im.add(name, entry{mode: perm, uid: uid, gid: gid, data: data})
}

// Symlink adds a symbolic link to target.
func (im *Image) Symlink(name, target string) {
	im.add(name, entry{mode: fs.ModeSymlink | 0o777, data: []byte(target)})
}

// Has reports whether name was added (or is a parent of something added).
func (im *Image) Has(name string) bool {
	_, ok := im.entries[clean(name)]
	return ok
}

func (im *Image) add(name string, e entry) {
	if im.entries == nil {
		im.entries = map[string]entry{}
	}
	name = clean(name)
	for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
		if _, ok := im.entries[dir]; !ok {
			im.entries[dir] = entry{mode: fs.ModeDir | 0o755}
		}
	}
	im.entries[name] = e
}

// clean turns "/usr/bin/" into "usr/bin", the form cpio archives use.
func clean(name string) string {
	return strings.TrimPrefix(path.Clean("/"+name), "/")
}

// WriteTo writes the image as a cpio archive in the "newc" format the
// kernel unpacks into its rootfs (Documentation/driver-api/early-userspace/
// buffer-format.rst), parents before children.
func (im *Image) WriteTo(w io.Writer) (int64, error) {
	names := make([]string, 0, len(im.entries))
	for name := range im.entries {
		names = append(names, name)
	}
	sort.Strings(names) // "a" sorts before "a/b"
	cw := &countingWriter{w: bufio.NewWriter(w)}
	for i, name := range names {
		e := im.entries[name]
		if err := writeNewc(cw, uint32(i+1), name, e.cpioMode(), e.uid, e.gid, e.data); err != nil {
			return cw.n, err
		}
	}
	if err := writeNewc(cw, 0, "TRAILER!!!", 0, 0, 0, nil); err != nil {
		return cw.n, err
	}
	return cw.n, cw.w.(*bufio.Writer).Flush()
}

// cpioMode is the st_mode of the entry.
func (e entry) cpioMode() uint32 {
	m := uint32(e.mode.Perm())
	switch {
	case e.mode&fs.ModeDir != 0:
		m |= 0o040000
	case e.mode&fs.ModeSymlink != 0:
		m |= 0o120000
	default:
		m |= 0o100000
	}
	if e.mode&fs.ModeSticky != 0 {
		m |= 0o1000
	}
	return m
}

func writeNewc(w io.Writer, ino uint32, name string, mode uint32, uid, gid int, data []byte) error {
	nlink := 1
	if mode&0o170000 == 0o040000 {
		nlink = 2
	}
	// magic, ino, mode, uid, gid, nlink, mtime, filesize, devmajor,
	// devminor, rdevmajor, rdevminor, namesize (with its NUL), check.
	hdr := fmt.Sprintf("070701%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x",
		ino, mode, uid, gid, nlink, 0, len(data), 0, 0, 0, 0, len(name)+1, 0)
	// The name follows the 110-byte header and is padded, with its NUL,
	// to a multiple of four; so is the data.
	if _, err := io.WriteString(w, hdr+name+"\x00"+pad(len(hdr)+len(name)+1)); err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		return err
	}
	_, err := io.WriteString(w, pad(len(data)))
	return err
}

func pad(n int) string {
	return strings.Repeat("\x00", (4-n%4)%4)
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

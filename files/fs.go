package files

import (
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// Options configure an FS.
type Options struct {
	// Root is the workspace, an absolute path to an existing directory.
	// Every path an operation takes is relative to it; an absolute path is
	// accepted only when it begins with Root.
	Root string
	// Protected are slash-separated paths relative to Root that these
	// tools may read but not change: neither the path nor anything under
	// it, and not by removing or replacing a directory above it. They need
	// not exist: creating them is refused too.
	Protected []string
	// IsProtected, when set, is the sandbox's rule for protected paths at
	// any depth (a path's components below Root, to the protected path it
	// is or lies in): applied to every path an operation changes or
	// creates, in addition to Protected.
	IsProtected func(rel []string) (string, bool)
	// Hidden are absolute host paths that are never read: those inside
	// Root may be neither read, listed, copied, moved, deleted nor
	// written, and a hard link to a hidden file is not read either.
	Hidden []string
	// Own are absolute host paths of the caller's own configuration and
	// state (directories or files): nothing may change, create, delete,
	// move or copy onto them or anything under them, nor remove or replace
	// a directory that holds one, wherever the workspace is; reading is
	// allowed. See own.go.
	Own []string
	// MaxRead bounds the bytes one Read returns (DefaultMaxRead when 0).
	MaxRead int64
	// MaxWrite bounds the content of one Write (DefaultMaxWrite when 0).
	MaxWrite int64
	// MaxList bounds the entries of one List (DefaultMaxList when 0).
	MaxList int
}

// Defaults of Options.
const (
	DefaultMaxRead  = 256 << 10
	DefaultMaxWrite = 8 << 20
	DefaultMaxList  = 10000
)

// Bounds of one Copy: a copy is a convenience for source trees, not a
// backup tool, and an agent should not fill the disk with one call.
const (
	copyMaxEntries = 100000
	copyMaxBytes   = 1 << 30
)

// FS performs file operations confined to one workspace. It is safe for
// concurrent use; Close releases the workspace's descriptor.
type FS struct {
	root      string     // the workspace with its symbolic links resolved, for messages
	roots     [][]string // the workspace's components: resolved, and as given when different
	protected []guard    // as configured; the forms through links are found per operation
	rule      func([]string) (string, bool)
	hidden    []guard
	hiddenAbs []string // every hidden path, for the identity check against hard links
	own       []guard  // the caller's own configuration and state inside the workspace
	maxRead   int64
	maxWrite  int64
	maxList   int
	// mu is held shared by every operation and exclusively by Close: a
	// descriptor closed under a running walk could be reused by another
	// open, and the walk would go on from whatever that is.
	mu sync.RWMutex
	h  handle // the platform's hold on the root
}

// EntryType is the kind of a directory entry.
type EntryType string

// The types of Entry.
const (
	TypeFile    EntryType = "file"
	TypeDir     EntryType = "dir"
	TypeSymlink EntryType = "symlink"
	TypeOther   EntryType = "other" // device, fifo, socket
)

// Entry is one name in a directory, described without following it.
type Entry struct {
	Name string    `json:"name" jsonschema:"the name in the directory"`
	Type EntryType `json:"type" jsonschema:"file, dir, symlink or other (a device, fifo or socket)"`
	Size int64     `json:"size" jsonschema:"the size in bytes (of a link: of its target's name)"`
	// Mode is the permission bits in octal, as chmod takes them ("0755").
	Mode    string    `json:"mode" jsonschema:"the permission bits in octal, as chmod takes them, e.g. \"0755\" (set-id and sticky bits included)"`
	ModTime time.Time `json:"mtime" jsonschema:"the time of the last change of the content, RFC 3339"`
	// Link is a symbolic link's target, as written in the link.
	Link string `json:"link,omitempty" jsonschema:"a symbolic link's target, as written in the link"`
	// Hidden marks a name that holds secrets: only the name is shown.
	Hidden bool `json:"hidden,omitempty" jsonschema:"the name holds secrets: only the name is shown"`
}

// Listing is the content of a directory.
type Listing struct {
	Path    string  `json:"path" jsonschema:"the directory, relative to the workspace, links resolved"`
	Entries []Entry `json:"entries" jsonschema:"the directory's entries, sorted by name"`
	// Truncated: the directory holds more than MaxList entries; Entries
	// are MaxList of them (in directory order), sorted by name.
	Truncated bool `json:"truncated" jsonschema:"the directory holds more entries than one listing returns; these are the first found"`
}

// ReadResult is a part of a file.
type ReadResult struct {
	Path string `json:"path" jsonschema:"the file, relative to the workspace, links resolved"`
	// Content is the text read, or its bytes in base64 when Binary.
	Content string `json:"content" jsonschema:"the text read, or the bytes in base64 when binary is true"`
	// Offset is where Content starts: the requested offset, moved past at
	// most 3 bytes of a character that began before it.
	Offset int64 `json:"offset" jsonschema:"the byte where content starts: the offset asked for, moved past a character that began before it"`
	// Length is the number of bytes of the file Content stands for, so
	// the next read starts at Offset+Length.
	Length int64 `json:"length" jsonschema:"the bytes of the file content stands for: the next part starts at offset + length"`
	Size   int64 `json:"size" jsonschema:"the file's size when it was read"`
	EOF    bool  `json:"eof" jsonschema:"nothing follows content"`
	// Binary: the bytes read hold a NUL byte or invalid UTF-8, and
	// Content is their base64.
	Binary bool `json:"binary" jsonschema:"the bytes read are not text (a NUL byte or invalid UTF-8): content is their base64"`
}

// New confines operations to o.Root. The root is resolved once, here: a
// later change of the symbolic links leading to it does not move it.
func New(o Options) (*FS, error) {
	const op = "open"
	if err := checkInput(op, o.Root); err != nil {
		return nil, err
	}
	if !filepath.IsAbs(o.Root) {
		return nil, refusal(op, o.Root, KindInvalid, "the workspace root must be an absolute path")
	}
	given := filepath.Clean(o.Root)
	real, err := filepath.EvalSymlinks(given)
	if err != nil {
		return nil, osError(op, o.Root, err)
	}
	h, err := openRoot(real)
	if err != nil {
		return nil, osError(op, o.Root, err)
	}
	f := &FS{root: real, roots: [][]string{split(real)}, h: h,
		maxRead: o.MaxRead, maxWrite: o.MaxWrite, maxList: o.MaxList}
	if given != real {
		f.roots = append(f.roots, split(given))
	}
	if err := f.configure(o); err != nil {
		h.close()
		return nil, err
	}
	return f, nil
}

func (f *FS) configure(o Options) error {
	f.rule = o.IsProtected
	for _, p := range o.Protected {
		comps, err := f.protectedForm(p)
		if err != nil {
			return err
		}
		f.protected = append(f.protected, guard{name: join(comps), forms: [][]string{comps}})
	}
	for _, p := range o.Hidden {
		g, err := f.hiddenForms(p)
		if err != nil {
			return err
		}
		f.hiddenAbs = append(f.hiddenAbs, filepath.Clean(p))
		if len(g.forms) > 0 {
			f.hidden = append(f.hidden, g)
		}
	}
	if err := f.configureOwn(o.Own); err != nil {
		return err
	}
	if f.maxRead <= 0 {
		f.maxRead = DefaultMaxRead
	}
	if f.maxWrite <= 0 {
		f.maxWrite = DefaultMaxWrite
	}
	if f.maxList <= 0 {
		f.maxList = DefaultMaxList
	}
	return nil
}

// protectedForm checks a configured protected path: relative to the root
// (or absolute inside it), without "..", which would make its meaning
// depend on links.
func (f *FS) protectedForm(p string) ([]string, error) {
	const op = "protect"
	r, err := f.parse(op, p)
	if err != nil {
		return nil, err
	}
	if slices.Contains(r.comps, "..") {
		return nil, refusal(op, p, KindInvalid, `a protected path may not contain ".."`)
	}
	return r.comps, nil
}

// hiddenForms places a hidden host path in the workspace, as given and
// with the host's links resolved; a path outside the workspace has no form
// but its files are still recognised by identity.
func (f *FS) hiddenForms(p string) (guard, error) {
	return f.hostForms("hide", p)
}

// hostForms places an absolute host path in the workspace, as given and
// with the host's links resolved; a path holding the workspace holds all
// of it, and one elsewhere has no form.
func (f *FS) hostForms(op, p string) (guard, error) {
	if err := checkInput(op, p); err != nil {
		return guard{}, err
	}
	if !filepath.IsAbs(p) {
		return guard{}, refusal(op, p, KindInvalid, "the path must be absolute")
	}
	g := guard{name: filepath.Clean(p)}
	candidates := []string{g.name}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		candidates = append(candidates, real)
	}
	for _, c := range candidates {
		comps, ok := f.strip(filepath.ToSlash(c))
		if !ok && f.holdsRoot(c) {
			// A secret directory holding the workspace hides all of it.
			comps, ok = []string{}, true
		}
		if ok && !slices.ContainsFunc(g.forms, func(x []string) bool { return slices.Equal(x, comps) }) {
			g.forms = append(g.forms, comps)
		}
	}
	return g, nil
}

// holdsRoot reports whether the workspace lies inside host path p.
func (f *FS) holdsRoot(p string) bool {
	comps := split(filepath.ToSlash(p))
	for _, root := range f.roots {
		if within(root, comps) {
			return true
		}
	}
	return false
}

// Root returns the workspace with its symbolic links resolved.
func (f *FS) Root() string { return f.root }

// Close releases the workspace once the operations in flight are done.
// Operations after Close fail.
func (f *FS) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.h.close()
}

// hold keeps the workspace open for one operation; call the result when
// it is done.
func (f *FS) hold() func() {
	f.mu.RLock()
	return f.mu.RUnlock
}

// List describes the entries of a directory, sorted by name, without
// following them. Hidden names are listed as hidden, without details.
func (f *FS) List(path string) (Listing, error) {
	defer f.hold()()
	return f.list(path)
}

// Read returns up to limit bytes of a regular file from offset (limit 0, or
// more than MaxRead, means MaxRead). Text is returned as it is; bytes that
// are not UTF-8 text come back whole as base64 with Binary set. Symbolic
// links inside the workspace are followed.
func (f *FS) Read(path string, offset, limit int64) (ReadResult, error) {
	defer f.hold()()
	return f.read(path, offset, limit)
}

// Write replaces or creates a regular file with content, atomically: a
// temporary file in the same directory is renamed over the old one, which
// keeps its permission bits (set-id bits dropped). A new file is 0644 less
// the umask. It refuses a final symbolic link, a directory, and device,
// fifo and socket files. A file with other hard links is replaced, not
// changed: the other names keep the old content. With mkdirParents,
// missing directories on the way are made (0755 less the umask).
func (f *FS) Write(path, content string, mkdirParents bool) error {
	defer f.hold()()
	return f.write(path, content, mkdirParents)
}

// Edit replaces exact text in an existing text file: each edit in turn,
// on what the one before left, all or nothing. An edit's old text must
// occur exactly once, or at least once with All; no match, or more than
// one without All, fails with KindNoMatch or KindAmbiguous and the lines
// where it occurs. The file is changed as Write changes it (atomically,
// keeping its permission bits, never through a final symbolic link, never
// a protected or hidden path); a file that is not text (KindBinary) or
// larger than MaxWrite, before or after, is refused, and so is a file that
// changed between the read and the write.
func (f *FS) Edit(path string, edits []Edit) (EditResult, error) {
	defer f.hold()()
	return f.edit(path, edits)
}

// Target is the file that Write or Edit of path would replace or create:
// its canonical path below the root (slash-separated, symbolic links on
// the way resolved, the final name not followed), so that a caller can
// keep it before the change (package undo). It changes nothing, and fails
// as the walk of Write would.
func (f *FS) Target(path string) (string, error) {
	defer f.hold()()
	return f.targetPath(path)
}

// Mkdir makes a directory and the missing ones above it (0755 less the
// umask). An existing directory is not an error.
func (f *FS) Mkdir(path string) error {
	defer f.hold()()
	return f.mkdir(path)
}

// Move renames from to to. It never replaces: when to exists, it fails
// with KindExists (delete it first). A symbolic link is moved as a link.
func (f *FS) Move(from, to string) error {
	defer f.hold()()
	return f.move(from, to)
}

// Copy copies a file, a symbolic link or a directory tree to a path that
// does not exist yet. Links are copied as links, and only when they still
// resolve inside the workspace from their new place; devices, fifos and
// sockets are refused. Permission bits are kept, less group and other
// write and the set-id bits. The copy appears under its name only once it
// is complete.
func (f *FS) Copy(from, to string) error {
	defer f.hold()()
	return f.copy(from, to)
}

// MayDelete returns the refusal Delete would give path before removing
// anything (the root, forgebox's own files, protected and hidden paths),
// so that a caller puts no deletion to a person that could not happen.
// Delete checks again: this is not a guarantee that it succeeds.
func (f *FS) MayDelete(path string) error {
	defer f.hold()()
	return f.mayRemove(path)
}

// Delete removes a file, a symbolic link (not what it points to), or with
// recursive a directory tree. It refuses the root itself.
func (f *FS) Delete(path string, recursive bool) error {
	defer f.hold()()
	return f.remove(path, recursive)
}

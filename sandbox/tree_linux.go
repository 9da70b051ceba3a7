package sandbox

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/forgebox/forgebox/pathtree"
	"golang.org/x/sys/unix"
)

// A tree index is what forgebox knows of a writable root between runs:
// every directory (but the insides of Git directories) with its inode and
// change time when last seen, and every protected entry at any depth
// (.git, .envrc, .vscode, ... see Protected) with its inode.
//
// The post-run check rests on one property of the kernel: creating,
// removing or renaming an entry sets the change time (ctime) of the
// directory holding it, and no system call sets a ctime to anything but
// the current time (utimensat sets ctime to now, too). So a protected
// entry can only have appeared during a run in a directory whose ctime is
// not older than the run's start, and only those directories are read.
// The cost of a check is one stat per indexed directory plus the reading
// of the directories that changed.
type treeIndex struct {
	root  string
	dirs  map[string]dirRec // slash-separated paths below root; "" is root
	marks map[string]uint64 // protected entries, by path, to their inode
	dirty bool
	// overflow is set when a check found more directories than the index
	// holds: what it could not record is read again by the next check.
	overflow bool
	// fine is set once a ctime with nanoseconds was seen: the file system
	// keeps fine times. Without it (FAT keeps 2 s, old ext3 1 s) a run's
	// start is rounded down to the 2 s before it.
	fine bool
	// skip are directories not walked, by path, with the inode they must
	// have: the host directories under the run's private caches, which
	// the run cannot change. Another directory at the same path (one
	// the run put there) is walked.
	skip map[string]uint64
}

// setSkip sets the directories not walked, and forgets what an index made
// before (without them) recorded beneath them: the check would otherwise
// read them again as soon as they change.
func (ix *treeIndex) setSkip(skip map[string]uint64) {
	ix.skip = skip
	for rel := range skip {
		for r := range ix.dirs {
			if pathtree.Beneath(r, rel) {
				delete(ix.dirs, r)
				ix.dirty = true
			}
		}
		for r := range ix.marks {
			if pathtree.Beneath(r, rel) {
				delete(ix.marks, r)
				ix.dirty = true
			}
		}
	}
}

// skipped reports whether the directory entry e at rel is one not walked.
func (ix *treeIndex) skipped(rel string, ino uint64) bool {
	want, ok := ix.skip[rel]
	return ok && want == ino
}

type dirRec struct {
	ino   uint64
	ctime int64 // nanoseconds
}

// treeMaxDirs bounds an index: a writable root with more directories
// cannot be checked at a cost a run can pay, and is refused (or, with
// --best-effort, checked only as far as the bound).
const treeMaxDirs = 400_000

// coarseNow is the clock file systems stamp ctimes from: a change made
// after this reading gets a ctime no older than it (a fine-grained clock
// can be up to a tick ahead of the stamps).
func coarseNow() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_REALTIME_COARSE, &ts) != nil {
		return 0
	}
	return ts.Nano()
}

// errTreeTooLarge is returned when a root has more than treeMaxDirs
// directories.
var errTreeTooLarge = errors.New("too many directories to check")

func newTreeIndex(root string) *treeIndex {
	return &treeIndex{root: root, dirs: map[string]dirRec{}, marks: map[string]uint64{}, dirty: true}
}

func relJoin(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

func relDepth(rel string) int {
	if rel == "" {
		return 0
	}
	return strings.Count(rel, "/") + 1
}

func ctimeOf(st *unix.Stat_t) int64 { return st.Ctim.Sec*1e9 + st.Ctim.Nsec }

// openBeneath opens the directory rel below the root's descriptor without
// following a symlink anywhere: the command may have planted them.
func openBeneath(rootfd int, rel string) (int, error) {
	if rel == "" {
		return unix.Openat(rootfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	}
	return unix.Openat2(rootfd, rel, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
}

// dtUnreadable marks, in the walk's reports, a directory that cannot be
// listed or entered.
const dtUnreadable = 0xff

// dirent is one entry of a directory, as getdents reports it.
type dirent struct {
	name string
	ino  uint64
	typ  uint8
}

// readEntries lists the directory open at fd (without consuming fd).
func readEntries(fd int, buf []byte) ([]dirent, error) {
	if _, err := unix.Seek(fd, 0, io.SeekStart); err != nil {
		return nil, err
	}
	var out []dirent
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return out, err
		}
		if n <= 0 {
			return out, nil
		}
		for b := buf[:n]; len(b) >= 19; {
			reclen := int(binary.LittleEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				return out, fmt.Errorf("getdents: bad record")
			}
			name := b[19:reclen]
			if i := slices.Index(name, 0); i >= 0 {
				name = name[:i]
			}
			if s := string(name); s != "." && s != ".." {
				typ := b[18]
				ino := binary.LittleEndian.Uint64(b[0:8])
				if typ == unix.DT_UNKNOWN {
					var st unix.Stat_t
					if unix.Fstatat(fd, s, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
						typ = dtOf(st.Mode)
					}
				}
				out = append(out, dirent{name: s, ino: ino, typ: typ})
			}
			b = b[reclen:]
		}
	}
}

func dtOf(mode uint32) uint8 {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return unix.DT_DIR
	case unix.S_IFLNK:
		return unix.DT_LNK
	case unix.S_IFREG:
		return unix.DT_REG
	}
	return unix.DT_UNKNOWN
}

// walk adds the directory open at fd (at rel) and everything below it to
// the index, and calls found for each protected entry on the way.
// file, when set, is called for each regular file on the way.
func (ix *treeIndex) walk(fd int, rel string, buf []byte, found, file func(dirfd int, dirRel string, e dirent)) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	switch {
	case len(ix.dirs) < treeMaxDirs:
		ix.dirs[rel] = dirRec{ino: st.Ino, ctime: ctimeOf(&st)}
	case found == nil:
		return errTreeTooLarge // indexing before a run: refused
	default:
		// Checking after a run: judge everything all the same (a run
		// that makes directories by the million must not end the check
		// before what it planted), and say the index is full.
		ix.overflow = true
	}
	ix.fine = ix.fine || st.Ctim.Nsec != 0
	ix.dirty = true
	entries, err := readEntries(fd, buf)
	if err != nil {
		return fmt.Errorf("list %s: %w", filepath.Join(ix.root, rel), err)
	}
	depth := relDepth(rel)
	if looksBare(entries) {
		ix.marks[relJoin(rel, "HEAD")] = st.Ino
		if found != nil {
			found(fd, rel, dirent{name: "HEAD", ino: st.Ino})
		}
	}
	for _, e := range entries {
		if protectedEntry(e.name, depth) {
			ix.marks[relJoin(rel, e.name)] = e.ino
			if found != nil {
				found(fd, rel, e)
			}
		}
		if file != nil && e.typ == unix.DT_REG {
			file(fd, rel, e)
		}
		if e.typ != unix.DT_DIR || e.name == ".git" || ix.skipped(relJoin(rel, e.name), e.ino) {
			continue
		}
		cfd, err := unix.Openat(fd, e.name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			// Unreadable: what is below cannot be checked. The check
			// decides (a directory the run made unreadable goes).
			if found != nil && (err == unix.EACCES || err == unix.EPERM) {
				found(fd, rel, dirent{name: e.name, ino: e.ino, typ: dtUnreadable})
			}
			continue
		}
		err = ix.walk(cfd, relJoin(rel, e.name), buf, found, file)
		unix.Close(cfd)
		if err != nil {
			return err
		}
	}
	return nil
}

// build indexes the root from scratch.
func (ix *treeIndex) build() error {
	fd, err := unix.Open(ix.root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", ix.root, err)
	}
	defer unix.Close(fd)
	ix.dirs, ix.marks = map[string]dirRec{}, map[string]uint64{}
	return ix.walk(fd, "", make([]byte, 32<<10), nil, nil)
}

// statAll stats every indexed directory, on two threads: this is the
// check's fixed cost.
func (ix *treeIndex) statAll(rootfd int) map[string]*unix.Stat_t {
	rels := make([]string, 0, len(ix.dirs))
	for rel := range ix.dirs {
		rels = append(rels, rel)
	}
	out := make([]*unix.Stat_t, len(rels))
	var wg sync.WaitGroup
	const workers = 2
	for w := 0; w < workers; w++ {
		wg.Go(func() {
			for i := w; i < len(rels); i += workers {
				st := new(unix.Stat_t)
				var err error
				if rels[i] == "" {
					err = unix.Fstat(rootfd, st)
				} else {
					err = unix.Fstatat(rootfd, rels[i], st, unix.AT_SYMLINK_NOFOLLOW)
				}
				if err == nil {
					out[i] = st
				}
			}
		})
	}
	wg.Wait()
	m := make(map[string]*unix.Stat_t, len(rels))
	for i, rel := range rels {
		m[rel] = out[i]
	}
	return m
}

// The index file: a header line, then records. Paths are length-prefixed,
// so any byte a file name may hold is kept.
const treeMagic = "forgebox-tree 1\n"

func (ix *treeIndex) save(path string) error {
	tmp := path + ".tmp" + randomSuffix()
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 64<<10)
	w.WriteString(treeMagic)
	var b [binary.MaxVarintLen64]byte
	put := func(kind byte, rel string, a, c uint64) {
		w.WriteByte(kind)
		w.Write(b[:binary.PutUvarint(b[:], uint64(len(rel)))])
		w.WriteString(rel)
		w.Write(b[:binary.PutUvarint(b[:], a)])
		w.Write(b[:binary.PutUvarint(b[:], c)])
	}
	// The marks come first: a run needs them before it starts, the
	// directories only once it is over.
	fine := uint64(0)
	if ix.fine {
		fine = 1
	}
	put('r', ix.root, fine, 0)
	for rel, ino := range ix.marks {
		put('m', rel, ino, 0)
	}
	for rel, d := range ix.dirs {
		put('d', rel, d.ino, uint64(d.ctime))
	}
	err = w.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("save tree index %s: %w", path, err)
	}
	ix.dirty = false
	return nil
}

// indexFile is an index as read from its file: the marks, and the
// directories still to be parsed.
type indexFile struct {
	ix   *treeIndex
	rest []byte
	id   fileStamp
}

// fileStamp tells whether a file was replaced since it was read.
type fileStamp struct {
	ino, size uint64
	mtime     int64
}

func stampOf(path string) fileStamp {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return fileStamp{}
	}
	return fileStamp{ino: st.Ino, size: uint64(st.Size), mtime: st.Mtim.Nano()}
}

// readIndexFile reads the index of root from path up to its directories;
// nil when there is none or it is unreadable, damaged, or another root's.
func readIndexFile(path, root string) *indexFile {
	id := stampOf(path)
	data, err := os.ReadFile(path)
	if err != nil || !strings.HasPrefix(string(data), treeMagic) {
		return nil
	}
	ix := &treeIndex{root: root, dirs: map[string]dirRec{}, marks: map[string]uint64{}}
	b := data[len(treeMagic):]
	kind, rel, fine, _, b, ok := indexRecord(b)
	if !ok || kind != 'r' || rel != root {
		return nil
	}
	ix.fine = fine == 1
	for len(b) > 0 && b[0] == 'm' {
		var ino uint64
		if _, rel, ino, _, b, ok = indexRecord(b); !ok {
			return nil
		}
		ix.marks[rel] = ino
	}
	return &indexFile{ix: ix, rest: b, id: id}
}

// dirs parses the directories; false when the file is damaged.
func (f *indexFile) dirs() bool {
	b := f.rest
	f.ix.dirs = make(map[string]dirRec, len(b)/40)
	for len(b) > 0 {
		kind, rel, ino, ctime, rest, ok := indexRecord(b)
		if !ok || kind != 'd' {
			return false
		}
		f.ix.dirs[rel] = dirRec{ino: ino, ctime: int64(ctime)}
		b = rest
	}
	_, ok := f.ix.dirs[""]
	return ok
}

func indexRecord(b []byte) (kind byte, rel string, a, c uint64, rest []byte, ok bool) {
	if len(b) == 0 {
		return 0, "", 0, 0, nil, false
	}
	kind, b = b[0], b[1:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return 0, "", 0, 0, nil, false
	}
	rel, b = string(b[k:k+int(n)]), b[k+int(n):]
	if a, k = binary.Uvarint(b); k <= 0 {
		return 0, "", 0, 0, nil, false
	}
	b = b[k:]
	if c, k = binary.Uvarint(b); k <= 0 {
		return 0, "", 0, 0, nil, false
	}
	return kind, rel, a, c, b[k:], true
}

// loadTreeIndex reads a whole index; nil when there is none or it is
// damaged.
func loadTreeIndex(path, root string) *treeIndex {
	f := readIndexFile(path, root)
	if f == nil || !f.dirs() {
		return nil
	}
	return f.ix
}

// treeStore is where the indexes of writable roots are kept, with a lock
// and the start times of the runs not yet checked; "" keeps nothing (each
// run then indexes its roots from scratch).
type treeStore struct{ dir string }

func (s treeStore) key(root string) string {
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(s.dir, hex.EncodeToString(sum[:12]))
}

func randomSuffix() string {
	var r [6]byte
	if _, err := io.ReadFull(rand.Reader, r[:]); err != nil {
		return fmt.Sprint(os.Getpid())
	}
	return hex.EncodeToString(r[:])
}

func (s Spec) treeStore() treeStore {
	if s.StateDir == "" {
		return treeStore{}
	}
	return treeStore{dir: filepath.Join(s.StateDir, "trees")}
}

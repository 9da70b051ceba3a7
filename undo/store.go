package undo

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/forgebox/forgebox/pathtree"
)

// Store is the undo records of every workspace, beneath forgebox's state
// directory.
type Store struct {
	Root string
}

// StoreFor is the store kept in forgebox's state directory; the zero Store
// (no state directory) keeps nothing.
func StoreFor(stateDir string) Store {
	if stateDir == "" {
		return Store{}
	}
	return Store{Root: filepath.Join(stateDir, "undo")}
}

const (
	lockName  = "lock"
	tmpPrefix = "tmp-" // a record being made (Begin)
)

// ErrUnavailable is wrapped by every reason a run cannot have undo.
var ErrUnavailable = errors.New("undo unavailable")

func unavailable(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrUnavailable, fmt.Sprintf(format, a...))
}

// Check says whether runs in workspace ws (a canonical absolute path) can
// have undo: the store must lie outside the workspace (an overlay's upper
// layer cannot lie in its lower one, and the command must not reach the
// store) and on the workspace's file system (a commit is rename(2)). It
// changes nothing: where the store does not exist yet, its closest
// existing parent stands for it. It is the one rule for whether undo is
// possible: the judge (runner.Containment) and the sandbox both ask it.
func (s Store) Check(ws string) error { return s.check(ws, "the workspace") }

// CheckRw is Check for a --rw directory, which a run keeps in its record
// beside the workspace (Begin).
func (s Store) CheckRw(root string) error { return s.check(root, "--rw path") }

func (s Store) check(ws, what string) error {
	if s.Root == "" {
		return unavailable("forgebox has no state directory to keep undo records in (set HOME or XDG_STATE_HOME)")
	}
	if ws == "" || !filepath.IsAbs(ws) || !filepath.IsAbs(s.Root) {
		return unavailable("%s %q or undo store %q is not an absolute path", what, ws, s.Root)
	}
	existing, rest := filepath.Clean(s.Root), ""
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		if existing == filepath.Dir(existing) {
			return unavailable("undo store %s: no parent exists", s.Root)
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = filepath.Dir(existing)
	}
	root, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return unavailable("undo store %s: %v", s.Root, err)
	}
	root = filepath.Join(root, rest)
	if pathtree.Within(root, ws) {
		return unavailable("the undo store %s lies inside %s %s: runs there have no undo (set XDG_STATE_HOME outside it)", root, what, ws)
	}
	if pathtree.Within(ws, root) {
		return unavailable("%s %s lies inside the undo store %s", what, ws, root)
	}
	same, err := sameFS(existing, ws)
	if err != nil {
		return unavailable("%v", err)
	}
	if !same {
		return unavailable("the undo store %s is on another file system than %s %s (undo moves files with rename(2)): set XDG_STATE_HOME to a directory on that file system", root, what, ws)
	}
	return nil
}

// Key is the directory of a workspace's records.
func (s Store) dirOf(ws string) string {
	sum := sha256.Sum256([]byte(ws))
	base := filepath.Base(ws)
	base = strings.Map(func(r rune) rune {
		if r == '/' || r == 0 || r < ' ' {
			return '_'
		}
		return r
	}, base)
	if len(base) > 40 {
		base = base[:40]
	}
	return filepath.Join(s.Root, hex.EncodeToString(sum[:8])+"-"+base)
}

// newID is a record's name: its time, sortable, and the process.
func newID(now time.Time) string {
	return now.UTC().Format("20060102T150405.000000") + "-" + strconv.Itoa(os.Getpid())
}

// Records lists the records of workspace ws, oldest first. A directory
// without a manifest (a run going on, or one whose forgebox died) is not
// a record.
func (s Store) Records(ws string) ([]*Manifest, error) {
	if s.Root == "" {
		return nil, nil
	}
	dir := s.dirOf(ws)
	names, err := readNames(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*Manifest
	for _, n := range names {
		if n == lockName {
			continue
		}
		m, err := readManifest(filepath.Join(dir, n))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b *Manifest) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// Find is the record named by ref: a run's history key, or a record id
// (or a unique prefix of one).
func (s Store) Find(ws, ref string) (*Manifest, error) {
	recs, err := s.Records(ws)
	if err != nil {
		return nil, err
	}
	for _, m := range recs {
		if m.HistoryKey == ref {
			return m, nil
		}
	}
	var found []*Manifest
	for _, m := range recs {
		if strings.HasPrefix(m.ID, ref) {
			found = append(found, m)
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("no undo record %q in workspace %s", ref, ws)
	case 1:
		return found[0], nil
	}
	return nil, fmt.Errorf("undo record %q is ambiguous (%d records start so)", ref, len(found))
}

// Last is the latest run of workspace ws that changed it and is not
// undone, or nil.
func (s Store) Last(ws string) (*Manifest, error) {
	recs, err := s.Records(ws)
	if err != nil {
		return nil, err
	}
	for i := len(recs) - 1; i >= 0; i-- {
		if m := recs[i]; m.Kind == KindRun && m.UndoneBy == "" && m.Summary.Changed() {
			return m, nil
		}
	}
	return nil, nil
}

// ByHistory is the record of the history run key in workspace ws, or nil.
func (s Store) ByHistory(ws, key string) *Manifest {
	recs, _ := s.Records(ws)
	for _, m := range recs {
		if m.HistoryKey == key {
			return m
		}
	}
	return nil
}

// SetHistory notes the history key of a record.
func (s Store) SetHistory(ws, id, key string) error {
	l, err := lockWorkspace(s.dirOf(ws))
	if err != nil {
		return err
	}
	defer l.unlock()
	m, err := readManifest(filepath.Join(s.dirOf(ws), id))
	if err != nil {
		return err
	}
	m.HistoryKey = key
	return m.write()
}

func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	slices.Sort(names)
	return names, err
}

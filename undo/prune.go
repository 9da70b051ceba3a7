package undo

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/forgebox/forgebox/rmtree"
)

// Limits bound the store: records older than MaxAge go, then the oldest
// until what the records keep is at most MaxBytes.
type Limits struct {
	MaxBytes int64         `json:"max_bytes"`
	MaxAge   time.Duration `json:"max_age_ns"`
}

// DefaultLimits bound a store without a limits file.
var DefaultLimits = Limits{MaxBytes: 2 << 30, MaxAge: 14 * 24 * time.Hour}

const limitsName = "limits.json"

// Limits reads the store's bounds (DefaultLimits where it has none).
func (s Store) Limits() Limits {
	l := DefaultLimits
	if b, err := os.ReadFile(filepath.Join(s.Root, limitsName)); err == nil {
		var got Limits
		if json.Unmarshal(b, &got) == nil && got.MaxBytes > 0 && got.MaxAge > 0 {
			l = got
		}
	}
	return l
}

// SetLimits writes the store's bounds.
func (s Store) SetLimits(l Limits) error {
	if s.Root == "" {
		return errors.New("no undo store")
	}
	if l.MaxBytes <= 0 || l.MaxAge <= 0 {
		return fmt.Errorf("undo limits must be positive (got %d bytes, %v)", l.MaxBytes, l.MaxAge)
	}
	if err := os.MkdirAll(s.Root, 0o700); err != nil {
		return err
	}
	b, _ := json.Marshal(l)
	tmp := filepath.Join(s.Root, limitsName+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(s.Root, limitsName))
}

// Usage is what the store keeps.
type Usage struct {
	Root    string `json:"root"`
	Bytes   int64  `json:"bytes"`
	Records int    `json:"records"`
	Limits  Limits `json:"limits"`
}

// Usage adds up the records of every workspace (their manifests' Kept).
func (s Store) Usage() (Usage, error) {
	u := Usage{Root: s.Root, Limits: s.Limits()}
	all, err := s.all()
	for _, m := range all {
		u.Bytes += m.Kept
		u.Records++
	}
	return u, err
}

// all is every record of every workspace.
func (s Store) all() ([]*Manifest, error) {
	if s.Root == "" {
		return nil, nil
	}
	dirs, err := readNames(s.Root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	var out []*Manifest
	for _, d := range dirs {
		names, _ := readNames(filepath.Join(s.Root, d))
		for _, n := range names {
			if m, err := readManifest(filepath.Join(s.Root, d, n)); err == nil {
				out = append(out, m)
			}
		}
	}
	return out, err
}

const pruneStamp = "pruned"

// PruneEvery is how often a run prunes the store.
const PruneEvery = 10 * time.Minute

// MaybePrune prunes the store when it was last pruned PruneEvery ago or
// more: a run's commit calls it, so that the store stays bounded without
// reading every manifest after every run.
func (s Store) MaybePrune(now time.Time) ([]string, error) {
	stamp := filepath.Join(s.Root, pruneStamp)
	if st, err := os.Stat(stamp); err == nil && now.Sub(st.ModTime()) < PruneEvery {
		return nil, nil
	}
	if f, err := os.Create(stamp); err == nil {
		f.Close()
	}
	return s.Prune(now)
}

// Prune removes the records past the store's limits, oldest first, and
// what runs that died while being prepared left (tmp-). It returns the
// ids removed.
func (s Store) Prune(now time.Time) ([]string, error) {
	l := s.Limits()
	all, err := s.all()
	if err != nil {
		return nil, err
	}
	slices.SortFunc(all, func(a, b *Manifest) int { return strings.Compare(a.ID, b.ID) })
	var total int64
	for _, m := range all {
		total += m.Kept
	}
	var removed []string
	for _, m := range all {
		if now.Sub(m.End) <= l.MaxAge && total <= l.MaxBytes {
			break
		}
		// Under the workspace's lock: an undo reading the record, or a
		// commit writing beside it, finishes first.
		l, err := lockWorkspace(filepath.Dir(m.dir))
		if err != nil {
			return removed, err
		}
		err = rmtree.All(m.dir)
		l.unlock()
		if err != nil {
			return removed, err
		}
		total -= m.Kept
		removed = append(removed, m.ID)
	}
	dirs, _ := readNames(s.Root)
	for _, d := range dirs {
		names, _ := readNames(filepath.Join(s.Root, d))
		for _, n := range names {
			p := filepath.Join(s.Root, d, n)
			if st, err := os.Lstat(p); err == nil && strings.HasPrefix(n, tmpPrefix) && now.Sub(st.ModTime()) > 24*time.Hour {
				rmtree.All(p)
			}
		}
	}
	return removed, nil
}

package caches

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultLimit bounds the private caches of all workspaces together.
const DefaultLimit int64 = 5 << 30

// MeasureEvery is how often, at most, a run's end measures the caches:
// a walk of every upper directory costs too much to pay per run.
const MeasureEvery = 10 * time.Minute

const (
	usageFile = "usage.json"
	limitFile = "limit"
)

// Usage is the last measurement, kept in <root>/usage.json.
type Usage struct {
	Measured time.Time        `json:"measured"`
	Total    int64            `json:"total_bytes"`
	Bytes    map[string]int64 `json:"bytes"` // by key
	Evicted  []string         `json:"evicted,omitempty"`
}

// Limit is the configured bound: the number in <root>/limit, in bytes, or
// DefaultLimit.
func Limit(root string) int64 {
	b, err := os.ReadFile(filepath.Join(root, limitFile))
	if err != nil {
		return DefaultLimit
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n < 0 {
		return DefaultLimit
	}
	return n
}

// SetLimit stores the bound; 0 keeps no private cache beyond the run
// that is using it.
func SetLimit(root string, n int64) error {
	if n < 0 {
		return errors.New("the cache limit must not be negative")
	}
	if err := mkdirPrivate(root); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, limitFile), []byte(strconv.FormatInt(n, 10)+"\n"), 0o600)
}

// LastUsage reads the last measurement; ok is false when there is none.
func LastUsage(root string) (u Usage, ok bool) {
	b, err := os.ReadFile(filepath.Join(root, usageFile))
	if err != nil || json.Unmarshal(b, &u) != nil {
		return Usage{}, false
	}
	return u, true
}

// Maintain is called after a run: unless the caches were measured less
// than MeasureEvery ago, it measures them and removes the least recently
// used workspaces' caches until the total is within the limit. Caches a
// run holds are never removed. It returns what it evicted.
func Maintain(root string, now time.Time) ([]string, error) {
	if root == "" {
		return nil, nil
	}
	if u, ok := LastUsage(root); ok && now.Sub(u.Measured) < MeasureEvery && now.After(u.Measured) {
		return nil, nil
	}
	list, err := List(root)
	if err != nil {
		return nil, err
	}
	// A workspace that is gone (a temporary directory, a selftest's)
	// will not use its caches again.
	var live []Info
	var gone []Info
	for _, in := range list {
		if _, err := os.Stat(in.Workspace); in.Workspace != "" && errors.Is(err, fs.ErrNotExist) {
			gone = append(gone, in)
		} else {
			live = append(live, in)
		}
	}
	keep, evict := plan(live, Limit(root))
	evict = append(gone, evict...)
	u := Usage{Measured: now, Bytes: map[string]int64{}}
	for _, in := range keep {
		u.Bytes[in.Key] = in.Bytes
		u.Total += in.Bytes
	}
	for _, in := range evict {
		if err := (Workspace{Root: root, Key: in.Key}).Clear(); err != nil {
			u.Bytes[in.Key] = in.Bytes // busy: it stays, and is counted
			u.Total += in.Bytes
			continue
		}
		u.Evicted = append(u.Evicted, cmpOr(in.Workspace, in.Key))
	}
	b, _ := json.Marshal(u)
	return u.Evicted, writeUsage(root, b)
}

// writeUsage replaces <root>/usage.json. Runs measure at the same time, so
// each writes its own temporary file: a shared name let one run rename
// away the file another was about to rename.
func writeUsage(root string, b []byte) error {
	tmp, err := os.CreateTemp(root, "."+usageFile+".*.tmp")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(root, usageFile))
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// plan splits the workspaces into those kept and those evicted, least
// recently used first, until the kept ones fit in limit.
func plan(list []Info, limit int64) (keep, evict []Info) {
	list = slices.Clone(list)
	slices.SortFunc(list, func(a, b Info) int { return b.LastUsed.Compare(a.LastUsed) }) // newest first
	var total int64
	for _, in := range list {
		if total+in.Bytes <= limit {
			total += in.Bytes
			keep = append(keep, in)
		} else {
			evict = append(evict, in)
		}
	}
	return keep, evict
}

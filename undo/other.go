//go:build !linux

package undo

import (
	"errors"
	"os"
	"time"
)

// Undo needs the workspace's overlay, which only the Linux sandbox mounts.
var errOS = errors.New("undo needs Linux (an overlay of the workspace)")

func sameFS(a, b string) (bool, error) { return false, errOS }

func removeAll(p string) error { return os.RemoveAll(p) }

type wsLock struct{}

func lockWorkspace(dir string) (*wsLock, error) { return nil, errOS }

func (l *wsLock) unlock() {}

// Conflict is a path changed since the record's run.
type Conflict struct {
	Path string `json:"path"`
	Why  string `json:"why"`
	Kept bool   `json:"kept,omitempty"`
}

// Blocking are the conflicts an undo refuses without --force.
func Blocking(cf []Conflict) []Conflict { return cf }

// Change is what an undo does to one path.
type Change struct {
	Path   string `json:"path"`
	Action string `json:"action"`
}

// ConflictError is an undo refused because paths changed since the run.
type ConflictError struct {
	ID        string
	Conflicts []Conflict
}

func (e *ConflictError) Error() string {
	return "undo " + e.ID + " would overwrite paths changed after that run"
}

// Plan fails: see errOS.
func (s Store) Plan(m *Manifest) ([]Change, []Conflict, error) { return nil, nil, errOS }

// Undo fails: see errOS.
func (s Store) Undo(m *Manifest, force bool, now time.Time) (*Manifest, error) { return nil, errOS }

// Snapshot is the record of a change the file tools make: see errOS.
type Snapshot struct{}

// Snapshot fails: see errOS.
func (s Store) Snapshot(ws, command string, rels []string, now time.Time) (*Snapshot, error) {
	return nil, errOS
}

// Done fails: see errOS.
func (sn *Snapshot) Done(end time.Time) (*Manifest, error) { return nil, errOS }

// Discard does nothing.
func (sn *Snapshot) Discard() {}

//go:build !linux

package sandbox

import "errors"

// UndoPossible: only the Linux sandbox mounts the workspace's overlay that
// undo needs; elsewhere a run writes the workspace directly.
func UndoPossible(s Spec) error {
	return errors.New("undo needs the Linux sandbox (an overlay of the workspace)")
}

// HiddenState is forgebox's state directory: the file tools hide it here
// too (Linux's sandbox hides it from every run).
func HiddenState(s Spec) string { return s.StateDir }

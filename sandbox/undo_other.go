//go:build !linux

package sandbox

import "errors"

// UndoPossible: only the Linux sandbox mounts the workspace's overlay that
// undo needs; elsewhere a run writes the workspace directly.
func UndoPossible(s Spec) error {
	return errors.New("undo needs the Linux sandbox (an overlay of the workspace)")
}

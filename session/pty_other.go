//go:build !linux

package session

import (
	"errors"
	"fmt"
	"runtime"
	"time"
)

// ptyProcess is Linux-only for now: the kill logic reads /proc, and on macOS
// a PTY master in the runtime poller (kqueue) is unreliable. Everything
// fails closed.
type ptyProcess struct{}

var errNoPTY = fmt.Errorf("interactive sessions on %s: %w", runtime.GOOS, errors.ErrUnsupported)

func startPTY(Options) (*ptyProcess, error)           { return nil, errNoPTY }
func (*ptyProcess) read([]byte) (int, error)          { return 0, errNoPTY }
func (*ptyProcess) write([]byte, time.Duration) error { return errNoPTY }
func (*ptyProcess) tryWrite([]byte)                   {}
func (*ptyProcess) setSize(int, int) error            { return errNoPTY }
func (*ptyProcess) canonical() bool                   { return false }
func (*ptyProcess) wait() int                         { return -1 }
func (*ptyProcess) terminate(time.Duration)           {}
func (*ptyProcess) closeMaster() error                { return errNoPTY }

func (*ptyProcess) programInForeground() bool { return false }

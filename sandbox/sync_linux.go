package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// syncConn is the parent's end of the socket shared with the child. It
// goes through Go's network poller: a goroutine blocked in a raw recvmsg
// would keep the runtime's monitor thread polling every 20µs.
type syncConn struct {
	conn *net.UnixConn
	fds  []int // descriptors received and not yet claimed
}

func newSyncConn(fd int) (*syncConn, error) {
	f := os.NewFile(uintptr(fd), "forgebox-sync")
	defer f.Close()
	c, err := net.FileConn(f)
	if err != nil {
		return nil, err
	}
	uc, ok := c.(*net.UnixConn)
	if !ok {
		c.Close()
		return nil, fmt.Errorf("sync socket is a %T", c)
	}
	return &syncConn{conn: uc}, nil
}

func (c *syncConn) readFull(p []byte) error {
	oob := make([]byte, unix.CmsgSpace(4*4))
	for got := 0; got < len(p); {
		n, oobn, _, _, err := c.conn.ReadMsgUnix(p[got:], oob)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return errEOF
			}
			return err
		}
		if oobn > 0 {
			msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
			if err == nil {
				for _, m := range msgs {
					if fds, err := unix.ParseUnixRights(&m); err == nil {
						c.fds = append(c.fds, fds...)
					}
				}
			}
		}
		if n == 0 {
			return errEOF
		}
		got += n
	}
	return nil
}

var errEOF = fmt.Errorf("sandbox child closed the connection")

// readFrame returns the next frame's type and payload.
func (c *syncConn) readFrame() (byte, []byte, error) {
	var hdr [5]byte
	if err := c.readFull(hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.LittleEndian.Uint32(hdr[:4])
	if n < 1 || n > maxFrame {
		return 0, nil, fmt.Errorf("sandbox child sent a bad frame (%d bytes)", n)
	}
	payload := make([]byte, n-1)
	if err := c.readFull(payload); err != nil {
		return 0, nil, err
	}
	return hdr[4], payload, nil
}

func (c *syncConn) writeAll(p []byte) error {
	_, err := c.conn.Write(p)
	return err
}

// writeWithFDs writes a frame with descriptors attached to its first bytes.
func (c *syncConn) writeWithFDs(p []byte, fds []int) error {
	n, _, err := c.conn.WriteMsgUnix(p, unix.UnixRights(fds...), nil)
	if err != nil {
		return err
	}
	return c.writeAll(p[n:])
}

// takeFD hands over the next received descriptor.
func (c *syncConn) takeFD() int {
	if len(c.fds) == 0 {
		return -1
	}
	fd := c.fds[0]
	c.fds = c.fds[1:]
	return fd
}

// close wakes a blocked reader and releases everything.
func (c *syncConn) close() {
	c.conn.Close()
	for _, fd := range c.fds {
		unix.Close(fd)
	}
	c.fds = nil
}

// childEvent is one message from the child.
type childEvent struct {
	typ    byte
	pidfd  int
	master *os.File
	proxy  *os.File // the proxy's listener, inside the sandbox's network namespace
	notify *os.File // the seccomp notification listener, nil without one
	setup  *SetupError
	exit   exitInfo
	marks  []mark
	// cacheFallbacks has bit i set for the i-th overlay op the child
	// could not mount (it bound the private cache instead); cacheErrno
	// is the first refusal.
	cacheFallbacks uint32
	cacheErrno     unix.Errno
	err            error // the connection failed or ended
}

type exitInfo struct {
	signaled bool
	code     int
	usage    Usage
}

func decodeEvent(c *syncConn, typ byte, p []byte) childEvent {
	ev := childEvent{typ: typ, pidfd: -1}
	bad := func() childEvent {
		return childEvent{err: fmt.Errorf("sandbox child sent a malformed message (type %d)", typ)}
	}
	switch typ {
	case msgReady:
		if len(p) < 12 {
			return bad()
		}
		// p[0:4] is the command's pid in its namespace, for --trace only
		have := binary.LittleEndian.Uint32(p[4:])
		marks := int(binary.LittleEndian.Uint32(p[8:]))
		q := p[12:]
		for ; marks > 0; marks-- {
			if len(q) < 1 || len(q) < 1+int(q[0])+8 {
				return bad()
			}
			sl := int(q[0])
			ev.marks = append(ev.marks, mark{step: string(q[1 : 1+sl]), ns: int64(binary.LittleEndian.Uint64(q[1+sl:]))})
			q = q[1+sl+8:]
		}
		if len(q) >= 8 {
			ev.cacheFallbacks = binary.LittleEndian.Uint32(q)
			ev.cacheErrno = unix.Errno(binary.LittleEndian.Uint32(q[4:]))
		}
		if have&readyPidfd != 0 {
			ev.pidfd = c.takeFD()
		}
		if have&readyMaster != 0 {
			if fd := c.takeFD(); fd >= 0 {
				unix.SetNonblock(fd, true) // so that reads go through the poller
				ev.master = os.NewFile(uintptr(fd), "/dev/ptmx")
			}
		}
		if have&readyProxy != 0 {
			if fd := c.takeFD(); fd >= 0 {
				ev.proxy = os.NewFile(uintptr(fd), "proxy-listener")
			}
		}
		if have&readyNotify != 0 {
			if fd := c.takeFD(); fd >= 0 {
				ev.notify = os.NewFile(uintptr(fd), "seccomp-listener")
			}
		}
	case msgError:
		if len(p) < 6 {
			return bad()
		}
		errno := binary.LittleEndian.Uint32(p)
		sl := int(binary.LittleEndian.Uint16(p[4:]))
		if len(p) < 6+sl+2 {
			return bad()
		}
		step := string(p[6 : 6+sl])
		ml := int(binary.LittleEndian.Uint16(p[6+sl:]))
		if len(p) != 8+sl+ml {
			return bad()
		}
		ev.setup = &SetupError{Step: step, Errno: syscall.Errno(errno), Message: string(p[8+sl:])}
	case msgExit:
		if len(p) != 32 {
			return bad()
		}
		le := binary.LittleEndian
		ev.exit = exitInfo{signaled: le.Uint32(p) == 1, code: int(le.Uint32(p[4:])), usage: Usage{
			UserTime:    microseconds(le.Uint64(p[8:])),
			SystemTime:  microseconds(le.Uint64(p[16:])),
			MaxRSSBytes: int64(le.Uint64(p[24:])) * 1024,
		}}
	default:
		return bad()
	}
	return ev
}

// mark is a point of the setup timeline, on CLOCK_MONOTONIC.
type mark struct {
	step string
	ns   int64
}

func monotonicNow() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

package netproxy

import (
	"net"
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestBoundClientSendQueue: a loopback client's connection gets the bounded
// send buffer (Linux caps the request at net.core.wmem_max, then reports
// twice that).
func TestBoundClientSendQueue(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	boundClientSendQueue(s)
	rc, err := s.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var got int
	var gerr error
	rc.Control(func(fd uintptr) { got, gerr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF) })
	want := clientSendBuffer
	if b, err := os.ReadFile("/proc/sys/net/core/wmem_max"); err == nil {
		if limit, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			want = min(want, limit)
		}
	}
	if gerr != nil || got != 2*want {
		t.Errorf("SO_SNDBUF = %d, %v; want %d", got, gerr, 2*want)
	}
}

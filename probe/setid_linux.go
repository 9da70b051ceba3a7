package probe

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// modeOp attempts what issue 16's class 3 and 6 attacks do: give a file
// the setuid or setgid bit, reach a pathname Unix socket by datagram, and
// wait for the host to bind one.
func modeOp(op string, a []string) (out string, err error, ok bool) {
	p := arg(a, 0)
	mode := func() uint32 {
		m, _ := strconv.ParseUint(arg(a, 1), 8, 32)
		return uint32(m)
	}
	switch op {
	case "create-mode": // PATH MODE: open(O_CREAT|O_EXCL) with that mode
		fd, err := syscall.Open(p, syscall.O_CREAT|syscall.O_EXCL|syscall.O_WRONLY|syscall.O_CLOEXEC, mode())
		if err == nil {
			syscall.Close(fd)
		}
		return "", err, true
	case "mkdir-mode": // PATH MODE
		return "", syscall.Mkdir(p, mode()), true
	case "mknod-mode": // PATH MODE: a regular file, by mknod
		return "", syscall.Mknod(p, syscall.S_IFREG|mode(), 0), true
	case "mode": // PATH: the permission bits, in octal
		fi, err := os.Lstat(p)
		if err != nil {
			return "", err, true
		}
		return fmt.Sprintf("%#o", uint32(fi.Mode().Perm())|setidBits(fi.Mode())), nil, true
	case "wait-file": // PATH [SECONDS]: until PATH exists
		secs, _ := strconv.Atoi(arg(a, 1))
		deadline := time.Now().Add(time.Duration(max(secs, 10)) * time.Second)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(p); err == nil {
				return "", nil, true
			}
			time.Sleep(20 * time.Millisecond)
		}
		return "", fmt.Errorf("%s did not appear", p), true
	case "connect-unixgram": // PATH: socket(AF_UNIX, SOCK_DGRAM), connect, send
		c, err := net.DialTimeout("unixgram", p, 2*time.Second)
		if err != nil {
			return "", err, true
		}
		defer c.Close()
		_, err = c.Write([]byte("forgebox-probe"))
		return "", err, true
	case "sendto-unixgram": // PATH: socket(AF_UNIX, SOCK_DGRAM), sendto
		fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			return "", os.NewSyscallError("socket", err), true
		}
		defer syscall.Close(fd)
		return "", syscall.Sendto(fd, []byte("forgebox-probe"), 0, &syscall.SockaddrUnix{Name: p}), true
	case "socketpair-sendto": // PATH TYPE: socketpair(AF_UNIX, TYPE), sendto from one end
		typ := map[string]int{"dgram": syscall.SOCK_DGRAM, "raw": syscall.SOCK_RAW, "stream": syscall.SOCK_STREAM}[arg(a, 1)]
		fds, err := syscall.Socketpair(syscall.AF_UNIX, typ|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			return "", os.NewSyscallError("socketpair", err), true
		}
		defer syscall.Close(fds[0])
		defer syscall.Close(fds[1])
		return "", syscall.Sendto(fds[0], []byte("forgebox-probe"), 0, &syscall.SockaddrUnix{Name: p}), true
	case "unix-selftalk": // DIR: bind a socket in DIR, connect to it, accept
		l, err := net.Listen("unix", filepath.Join(p, "selftalk.sock"))
		if err != nil {
			return "", err, true
		}
		defer l.Close()
		c, err := net.DialTimeout("unix", l.Addr().String(), 2*time.Second)
		if err != nil {
			return "", err, true
		}
		defer c.Close()
		s, err := l.Accept()
		if err == nil {
			s.Close()
		}
		return "", err, true
	}
	return "", nil, false
}

func setidBits(m os.FileMode) uint32 {
	var b uint32
	if m&os.ModeSetuid != 0 {
		b |= 0o4000
	}
	if m&os.ModeSetgid != 0 {
		b |= 0o2000
	}
	if m&os.ModeSticky != 0 {
		b |= 0o1000
	}
	return b
}

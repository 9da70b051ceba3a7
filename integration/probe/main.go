// Command probe attempts operations and reports, for each, whether it
// succeeded and with which errno it failed. The integration tests run it
// inside the sandbox and assert on its verdicts, then check the host.
//
// Usage: probe 'OP ARG...' ['OP ARG...' ...]
//
// Each argument is one operation, its words separated by spaces. One JSON
// line per operation is printed: {"op":..., "args":[...], "ok":bool,
// "errno":"EROFS", "out":"..."}. Operations:
//
//	write PATH TEXT        create or truncate PATH and write TEXT
//	append PATH TEXT       append TEXT to PATH
//	read PATH              out = the content
//	readdir PATH           out = the names, comma separated
//	stat PATH              out = mode and size
//	mkdir PATH | rmdir PATH | unlink PATH | rename OLD NEW | symlink TARGET PATH | link OLD NEW
//	chmod PATH OCTAL | chown PATH UID GID | utime PATH | setxattr PATH | truncate PATH
//	connect-unix PATH      connect to a pathname Unix socket
//	connect-abstract NAME  connect to an abstract Unix socket
//	connect-tcp HOST:PORT  connect over TCP
//	serve-loopback         listen on 127.0.0.1 and connect to it
//	kill PID SIGNAL        send a signal
//	tiocsti FD TEXT        push TEXT into the input of the terminal on FD
//	open-tty               open /dev/tty
//	interfaces             out = the network interfaces
//	pids                   out = the process ids in /proc
//	hostname               out = the hostname
//	id                     out = uid,gid,euid
package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

type verdict struct {
	Op    string   `json:"op"`
	Args  []string `json:"args"`
	OK    bool     `json:"ok"`
	Errno string   `json:"errno,omitempty"`
	Err   string   `json:"err,omitempty"`
	Out   string   `json:"out,omitempty"`
}

func main() {
	enc := json.NewEncoder(os.Stdout)
	for _, a := range os.Args[1:] {
		f := strings.Fields(a)
		if len(f) == 0 {
			continue
		}
		v := verdict{Op: f[0], Args: f[1:]}
		out, err := do(f[0], f[1:])
		v.Out = out
		if err == nil {
			v.OK = true
		} else {
			v.Err = err.Error()
			if e, ok := errnoOf(err); ok {
				v.Errno = errnoName(e)
			}
		}
		enc.Encode(v)
	}
}

func arg(a []string, i int) string {
	if i < len(a) {
		return a[i]
	}
	return ""
}

func do(op string, a []string) (string, error) {
	p := arg(a, 0)
	switch op {
	case "write":
		return "", os.WriteFile(p, []byte(arg(a, 1)), 0o644)
	case "append":
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return "", err
		}
		defer f.Close()
		_, err = f.WriteString(arg(a, 1))
		return "", err
	case "read":
		b, err := os.ReadFile(p)
		return string(b), err
	case "readdir":
		es, err := os.ReadDir(p)
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		sort.Strings(names)
		return strings.Join(names, ","), err
	case "stat":
		var st syscall.Stat_t
		err := syscall.Lstat(p, &st)
		return fmt.Sprintf("mode=%o size=%d uid=%d", st.Mode, st.Size, st.Uid), err
	case "mkdir":
		return "", syscall.Mkdir(p, 0o755)
	case "rmdir":
		return "", syscall.Rmdir(p)
	case "unlink":
		return "", syscall.Unlink(p)
	case "rename":
		return "", syscall.Rename(p, arg(a, 1))
	case "symlink":
		return "", syscall.Symlink(p, arg(a, 1))
	case "link":
		return "", syscall.Link(p, arg(a, 1))
	case "chmod":
		m, _ := strconv.ParseUint(arg(a, 1), 8, 32)
		return "", syscall.Chmod(p, uint32(m))
	case "chown":
		u, _ := strconv.Atoi(arg(a, 1))
		g, _ := strconv.Atoi(arg(a, 2))
		return "", syscall.Chown(p, u, g)
	case "utime":
		t := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
		return "", os.Chtimes(p, t, t)
	case "setxattr":
		return "", syscall.Setxattr(p, "user.forgebox-probe", []byte("1"), 0)
	case "truncate":
		return "", syscall.Truncate(p, 0)
	case "connect-unix":
		return dial("unix", p)
	case "connect-abstract":
		return dial("unix", "@"+p)
	case "connect-tcp":
		return dial("tcp", p)
	case "serve-loopback":
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			return "", err
		}
		defer l.Close()
		go func() {
			if c, err := l.Accept(); err == nil {
				c.Write([]byte("pong"))
				c.Close()
			}
		}()
		c, err := net.DialTimeout("tcp4", l.Addr().String(), 2*time.Second)
		if err != nil {
			return "", err
		}
		defer c.Close()
		b := make([]byte, 4)
		n, err := c.Read(b)
		return string(b[:n]), err
	case "kill":
		pid, _ := strconv.Atoi(p)
		sig, _ := strconv.Atoi(arg(a, 1))
		return "", syscall.Kill(pid, syscall.Signal(sig))
	case "tiocsti":
		fd, _ := strconv.Atoi(p)
		for _, c := range []byte(arg(a, 1)) {
			b := c
			if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TIOCSTI, uintptr(unsafe.Pointer(&b))); e != 0 {
				return "", e
			}
		}
		return "", nil
	case "open-tty":
		f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
		if err == nil {
			f.Close()
		}
		return "", err
	case "interfaces":
		ifs, err := net.Interfaces()
		var names []string
		for _, i := range ifs {
			names = append(names, i.Name)
		}
		return strings.Join(names, ","), err
	case "pids":
		es, err := os.ReadDir("/proc")
		var pids []string
		for _, e := range es {
			if _, err := strconv.Atoi(e.Name()); err == nil {
				pids = append(pids, e.Name())
			}
		}
		return strings.Join(pids, ","), err
	case "hostname":
		return os.Hostname()
	case "id":
		return fmt.Sprintf("%d,%d,%d", os.Getuid(), os.Getgid(), os.Geteuid()), nil
	}
	return "", fmt.Errorf("unknown operation %q", op)
}

func dial(network, addr string) (string, error) {
	c, err := net.DialTimeout(network, addr, 2*time.Second)
	if err != nil {
		return "", err
	}
	c.Close()
	return "", nil
}

func errnoOf(err error) (syscall.Errno, bool) {
	for err != nil {
		if e, ok := err.(syscall.Errno); ok {
			return e, true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return 0, false
		}
		err = u.Unwrap()
	}
	return 0, false
}

var errnoNames = map[syscall.Errno]string{
	syscall.EROFS: "EROFS", syscall.EACCES: "EACCES", syscall.EPERM: "EPERM", syscall.ENOENT: "ENOENT",
	syscall.EBUSY: "EBUSY", syscall.ECONNREFUSED: "ECONNREFUSED", syscall.ENETUNREACH: "ENETUNREACH",
	syscall.ESRCH: "ESRCH", syscall.ENOTTY: "ENOTTY", syscall.ENXIO: "ENXIO", syscall.EXDEV: "EXDEV",
	syscall.EEXIST: "EEXIST", syscall.ENOTDIR: "ENOTDIR", syscall.EISDIR: "EISDIR", syscall.EINVAL: "EINVAL",
	syscall.ELOOP: "ELOOP", syscall.ENOTEMPTY: "ENOTEMPTY", syscall.EHOSTUNREACH: "EHOSTUNREACH",
	syscall.ETIMEDOUT: "ETIMEDOUT", syscall.EOPNOTSUPP: "EOPNOTSUPP", syscall.ENOSYS: "ENOSYS",
}

func errnoName(e syscall.Errno) string {
	if n, ok := errnoNames[e]; ok {
		return n
	}
	return fmt.Sprintf("errno%d", int(e))
}

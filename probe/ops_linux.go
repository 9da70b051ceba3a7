package probe

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// Do attempts one operation and reports how it went.
func Do(op string, args []string) Verdict {
	v := Verdict{Op: op, Args: args}
	out, err := do(op, args)
	v.Out = out
	if err == nil {
		v.OK = true
		return v
	}
	v.Err = err.Error()
	if e, ok := errnoOf(err); ok {
		v.Errno = errnoName(e)
	}
	return v
}

// proxyConnect asks the HTTP proxy $HTTPS_PROXY names for a tunnel to
// target. It succeeds only when the proxy answers 200; its output is the
// proxy's status line and reason.
func proxyConnect(target string) (string, error) {
	u, err := url.Parse(os.Getenv("HTTPS_PROXY"))
	if err != nil || u.Host == "" {
		return "", errors.New("no proxy: HTTPS_PROXY is not set")
	}
	c, err := net.DialTimeout("tcp", u.Host, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
	if err != nil {
		return "", err
	}
	out := resp.Status
	if r := resp.Header.Get("X-Forgebox-Code"); r != "" {
		out += " (" + r + ")"
	}
	if resp.StatusCode != http.StatusOK {
		return out, fmt.Errorf("the proxy refused: %s", out)
	}
	return out, nil
}

func arg(a []string, i int) string {
	if i < len(a) {
		return a[i]
	}
	return ""
}

// do attempts what the sandbox view and network must refuse or allow:
// files, sockets, signals, the terminal. Other operations are in
// kernelOp and resourceOp.
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
		f, err := os.Open(p)
		if err != nil {
			return "", err
		}
		defer f.Close()
		es, err := f.ReadDir(-1)
		if errors.Is(err, syscall.ENOENT) {
			// A directory removed while open lists as empty: POSIX
			// readdir (and glibc) report end of directory here.
			err = nil
		}
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
	case "resolve": // NAME [SERVER]: look NAME up, through SERVER (HOST:PORT) or /etc/resolv.conf
		return resolve(p, arg(a, 1))
	case "proxy-connect": // ask $HTTPS_PROXY for a CONNECT tunnel to HOST:PORT
		return proxyConnect(p)
	case "serve-loopback":
		l, err := net.Listen("tcp4", cmp.Or(p, "127.0.0.1:0"))
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
	case "listen-tcp":
		return listenTCP(p, arg(a, 1), arg(a, 2))
	case "kill":
		pid, _ := strconv.Atoi(p)
		sig, _ := strconv.Atoi(arg(a, 1))
		return "", syscall.Kill(pid, syscall.Signal(sig))
	case "tiocsti":
		fd, _ := strconv.Atoi(p)
		if p == "tty" {
			f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
			if err != nil {
				return "", err
			}
			defer f.Close()
			fd = int(f.Fd())
		}
		for _, c := range []byte(strings.ReplaceAll(arg(a, 1), `\n`, "\n")) {
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
	case "session":
		pid := os.Getpid()
		sid, _, e := syscall.RawSyscall(syscall.SYS_GETSID, 0, 0, 0)
		if e != 0 {
			return "", e
		}
		var tcsid, tcpgrp int32
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, 0, syscall.TIOCGSID, uintptr(unsafe.Pointer(&tcsid))); e != 0 {
			tcsid = -1
		}
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, 0, syscall.TIOCGPGRP, uintptr(unsafe.Pointer(&tcpgrp))); e != 0 {
			tcpgrp = -1
		}
		return fmt.Sprintf("pid=%d sid=%d pgid=%d tcsid=%d tcpgrp=%d", pid, sid, syscall.Getpgrp(), tcsid, tcpgrp), nil
	case "fds":
		es, err := os.ReadDir("/proc/self/fd")
		var out []string
		for _, e := range es {
			t, _ := os.Readlink("/proc/self/fd/" + e.Name())
			out = append(out, e.Name()+"="+t)
		}
		return strings.Join(out, ","), err
	case "readlink":
		return os.Readlink(p)
	case "cwd":
		return os.Getwd()
	case "mknod":
		return "", syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|3)
	case "umount":
		return "", syscall.Unmount(p, syscall.MNT_DETACH)
	case "mount-tmpfs":
		return "", syscall.Mount("tmpfs", p, "tmpfs", 0, "")
	case "remount-rw":
		return "", syscall.Mount("", p, "", syscall.MS_REMOUNT|syscall.MS_BIND, "")
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
	if out, err, ok := kernelOp(op, a); ok {
		return out, err
	}
	if out, err, ok := modeOp(op, a); ok {
		return out, err
	}
	if out, err, ok := resourceOp(op, a); ok {
		return out, err
	}
	return "", fmt.Errorf("unknown operation %q", op)
}

// resolve looks a name up with Go's own resolver, which sends its queries
// over UDP sockets it connects first, as glibc's does.
func resolve(name, server string) (string, error) {
	r := &net.Resolver{PreferGo: true}
	if server != "" {
		r.Dial = func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "udp", server)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	addrs, err := r.LookupHost(ctx, name)
	return strings.Join(addrs, ","), err
}

// listenTCP listens on addr, writes ready once it does, and counts the
// connections it accepts until stdin ends or secs pass: a server whose
// reach the caller tests from elsewhere meanwhile.
func listenTCP(addr, ready, secs string) (string, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	defer l.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	if err := os.WriteFile(ready, []byte(l.Addr().String()), 0o644); err != nil {
		return "", err
	}
	if err := pause(secs); err != nil {
		return "", err
	}
	return fmt.Sprintf("accepted %d", accepted.Load()), nil
}

func dial(network, addr string) (string, error) {
	c, err := net.DialTimeout(network, addr, 2*time.Second)
	if err != nil {
		return "", err
	}
	c.Close()
	return "", nil
}

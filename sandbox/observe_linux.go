package sandbox

import (
	"os"
	"time"
	"unsafe"

	"github.com/forgebox/forgebox/seccomp"
	"golang.org/x/sys/unix"
)

// observer answers the notifications of the command's seccomp filter (the
// notifying twin, seccomp.Program.Notify) and records what the sandbox
// refused. It reports; it decides nothing the plain filter would not: a
// refused call gets the filter's own errno, a watched one continues. Every
// notification gets an answer, CONTINUE when observing it failed.
type observer struct {
	f       *os.File
	prog    *seccomp.Program
	network Network
	log     refusalLog
	done    chan struct{}
}

// observe starts answering the listener f; the caller stops it.
func observe(f *os.File, prog *seccomp.Program, n Network) *observer {
	o := &observer{f: f, prog: prog, network: n, done: make(chan struct{})}
	go o.run()
	return o
}

// stop ends the observer once the command's tree is gone, and returns
// what it saw. Closing the listener wakes its goroutine if the kernel has
// not already said (POLLHUP) that no process uses the filter any more.
func (o *observer) stop() ([]Refusal, int) {
	o.f.Close()
	select {
	case <-o.done:
	case <-time.After(time.Second):
		// Not expected: receive never blocks once poll said a
		// notification is there. The record is complete all the same.
	}
	return o.log.result()
}

// seccompNotif and seccompNotifResp are struct seccomp_notif and struct
// seccomp_notif_resp (linux/seccomp.h); the ioctl numbers encode their sizes.
type seccompNotif struct {
	id    uint64
	pid   uint32
	flags uint32
	nr    int32
	arch  uint32
	ip    uint64
	args  [6]uint64
}

type seccompNotifResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

func (o *observer) run() {
	defer close(o.done)
	rc, err := o.f.SyscallConn()
	if err != nil {
		return
	}
	for {
		var (
			n        seccompNotif
			got, hup bool
		)
		err := rc.Read(func(fd uintptr) bool {
			// The receive ioctl blocks whatever O_NONBLOCK says, so it
			// comes only after poll has seen a notification.
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			k, err := unix.Poll(pfd, 0)
			switch {
			case err == unix.EINTR || (err == nil && k == 0):
				return false // wait for the poller
			case err != nil:
				hup = true
				return true
			case pfd[0].Revents&unix.POLLIN == 0:
				// POLLHUP: no process uses the filter any more.
				hup = pfd[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0
				return hup
			}
			// Zeroed, as the kernel requires. ENOENT: the caller died
			// between the poll and now.
			n = seccompNotif{}
			_, _, errno := unix.Syscall(unix.SYS_IOCTL, fd, unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&n)))
			got = errno == 0
			return true
		})
		switch {
		case err != nil || hup:
			return
		case got:
			o.answer(&n)
		}
	}
}

// answer observes one call and replies to it.
func (o *observer) answer(n *seccompNotif) {
	resp := seccompNotifResp{id: n.id, flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
	v := o.prog.Decide(n.arch, uint32(n.nr), n.args)
	if v.Refused {
		resp.flags, resp.error = 0, -int32(v.Errno)
		o.log.add(Refusal{Layer: LayerSeccomp, Op: v.Syscall, Rule: v.Label, Errno: v.Errno.String()})
	} else if r, ok := o.watched(n, v.Syscall); ok {
		o.log.add(r)
	}
	o.ioctl(unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
}

// watched reads the destination of a watched connect or sendto and says
// whether the run's network cannot reach it.
func (o *observer) watched(n *seccompNotif, name string) (Refusal, bool) {
	addr, size := n.args[1], n.args[2] // connect(fd, addr, addrlen)
	if name == "sendto" {
		addr, size = n.args[4], n.args[5] // sendto(fd, buf, len, flags, dest_addr, addrlen)
	}
	var buf [128]byte // sizeof(struct sockaddr_storage)
	size = min(size, uint64(len(buf)))
	if addr == 0 || size < 2 {
		return Refusal{}, false
	}
	local := []unix.Iovec{{Base: &buf[0]}}
	local[0].SetLen(int(size))
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: int(size)}}
	k, err := unix.ProcessVMReadv(int(n.pid), local, remote, 0)
	if err != nil || k <= 0 {
		return Refusal{}, false
	}
	// The pid may have died and been reused between the notification and
	// the read: the memory is the caller's only while its id is valid.
	if !o.ioctl(unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&n.id)) {
		return Refusal{}, false
	}
	dst, ok := decodeSockaddr(buf[:k])
	if !ok || !unreachable(o.network, dst) {
		return Refusal{}, false
	}
	return Refusal{Layer: LayerNetwork, Op: name, Target: dst.String()}, true
}

func (o *observer) ioctl(req uintptr, arg unsafe.Pointer) bool {
	rc, err := o.f.SyscallConn()
	if err != nil {
		return false
	}
	var errno unix.Errno
	if err := rc.Control(func(fd uintptr) {
		_, _, errno = unix.Syscall(unix.SYS_IOCTL, fd, req, uintptr(arg))
	}); err != nil {
		return false
	}
	return errno == 0
}

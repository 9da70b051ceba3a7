package sandbox

import (
	"os"
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
	fd      int // f's, in blocking mode
	wake    int // an eventfd that stop writes to
	prog    *seccomp.Program
	network Network
	log     refusalLog
	done    chan struct{}
}

// observe starts answering the listener f; the caller stops it.
func observe(f *os.File, prog *seccomp.Program, n Network) (*observer, error) {
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		f.Close()
		return nil, err
	}
	// Fd puts the listener in blocking mode: the observer waits in
	// poll(2) on it and on wake, holding one thread for the run, rather
	// than in Go's poller. Its end is then plain: stop writes to wake.
	// (Measured, the poller costs no more; a round trip is dominated by
	// the two context switches it takes either way.)
	o := &observer{f: f, fd: int(f.Fd()), wake: wake, prog: prog, network: n, done: make(chan struct{})}
	go o.run()
	return o, nil
}

// stop ends the observer once the command's tree is gone, and returns
// what it saw. The observer also ends by itself when the kernel says
// (POLLHUP) that no process uses the filter any more.
func (o *observer) stop() ([]Refusal, int) {
	one := [8]byte{1}
	unix.Write(o.wake, one[:])
	<-o.done
	o.f.Close()
	unix.Close(o.wake)
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
	for {
		pfd := []unix.PollFd{{Fd: int32(o.fd), Events: unix.POLLIN}, {Fd: int32(o.wake), Events: unix.POLLIN}}
		if _, err := unix.Poll(pfd, -1); err == unix.EINTR {
			continue
		} else if err != nil || pfd[1].Revents != 0 {
			return
		}
		if pfd[0].Revents&unix.POLLIN == 0 {
			if pfd[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0 {
				return // POLLHUP: no process uses the filter any more
			}
			continue
		}
		// The receive ioctl blocks whatever O_NONBLOCK says, so it comes
		// only after poll saw a notification; zeroed, as the kernel
		// requires. ENOENT: the caller died between the poll and now.
		var n seccompNotif
		if o.ioctl(unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&n)) {
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
	// ENOENT: the caller is gone. Anything else would leave it waiting
	// for ever; a kernel that refuses CONTINUE (before 5.5, which
	// attributionKernel keeps out) gets the ENOSYS a missing listener
	// would give.
	if !o.ioctl(unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp)) && resp.flags != 0 {
		resp.flags, resp.error = 0, -int32(unix.ENOSYS)
		o.ioctl(unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
	}
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
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(o.fd), req, uintptr(arg))
	return errno == 0
}

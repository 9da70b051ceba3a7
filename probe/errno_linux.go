package probe

import (
	"fmt"
	"syscall"
)

// errnoOf finds the errno an error wraps, if any.
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

// errnoNames are the names verdicts use; others print as errnoN.
var errnoNames = map[syscall.Errno]string{
	syscall.EPROTONOSUPPORT: "EPROTONOSUPPORT",
	syscall.EROFS:           "EROFS", syscall.EACCES: "EACCES", syscall.EPERM: "EPERM", syscall.ENOENT: "ENOENT",
	syscall.EBUSY: "EBUSY", syscall.ECONNREFUSED: "ECONNREFUSED", syscall.ENETUNREACH: "ENETUNREACH",
	syscall.ESRCH: "ESRCH", syscall.ENOTTY: "ENOTTY", syscall.ENXIO: "ENXIO", syscall.EXDEV: "EXDEV", syscall.EISCONN: "EISCONN",
	syscall.EEXIST: "EEXIST", syscall.ENOTDIR: "ENOTDIR", syscall.EISDIR: "EISDIR", syscall.EINVAL: "EINVAL",
	syscall.ELOOP: "ELOOP", syscall.ENOTEMPTY: "ENOTEMPTY", syscall.EHOSTUNREACH: "EHOSTUNREACH",
	syscall.ETIMEDOUT: "ETIMEDOUT", syscall.EOPNOTSUPP: "EOPNOTSUPP", syscall.ENOSYS: "ENOSYS",
	syscall.ENOSPC: "ENOSPC", syscall.E2BIG: "E2BIG", syscall.EAGAIN: "EAGAIN", syscall.EIO: "EIO", syscall.ENOMEM: "ENOMEM",
}

func errnoName(e syscall.Errno) string {
	if n, ok := errnoNames[e]; ok {
		return n
	}
	return fmt.Sprintf("errno%d", int(e))
}

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
//	readdir PATH           out = the names, comma separated (a directory
//	                       deleted while open reads as empty, as with glibc)
//	stat PATH              out = mode and size
//	mkdir PATH | rmdir PATH | unlink PATH | rename OLD NEW | symlink TARGET PATH | link OLD NEW
//	chmod PATH OCTAL | chown PATH UID GID | utime PATH | setxattr PATH | truncate PATH
//	connect-unix PATH      connect to a pathname Unix socket
//	connect-abstract NAME  connect to an abstract Unix socket
//	connect-tcp HOST:PORT  connect over TCP
//	serve-loopback         listen on 127.0.0.1 and connect to it
//	kill PID SIGNAL        send a signal
//	tiocsti FD TEXT        push TEXT into the input of the terminal on FD
//	                       (FD "tty": a newly opened /dev/tty; \n in TEXT is a newline)
//	open-tty               open /dev/tty
//	session                out = pid, session, process group, and the session
//	                       and foreground group of the terminal on fd 0
//	fds                    out = the open descriptors and what they point to
//	readlink PATH          out = the symlink's target
//	cwd                    out = the working directory
//	mknod PATH             create a character device (1:3, like /dev/null)
//	umount PATH            detach the mount at PATH
//	mount-tmpfs PATH       mount a tmpfs on PATH
//	remount-rw PATH        make the bind mount at PATH writable
//	interfaces             out = the network interfaces
//	pids                   out = the process ids in /proc
//	hostname               out = the hostname
//	id                     out = uid,gid,euid
//
// It runs on Linux only (main_linux.go).
package main

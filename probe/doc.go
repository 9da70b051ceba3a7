// Package probe attempts operations a sandbox must refuse (or allow) and
// reports, for each, whether it succeeded and with which errno it failed.
// forgebox selftest runs it inside a live sandbox through the forgebox
// binary's hidden probe verb, and the integration tests through the small
// integration/probe program; both then check the host.
//
// What it guarantees: each operation is attempted for real, once, and its
// verdict is written as soon as it is done (Main). It judges nothing: the
// caller knows what each outcome should be, and must look at the host too,
// since a refused call can still have had an effect and a successful one
// can have been harmless.
//
// Its threat model is the other way round from forgebox's: the probe is
// the attacker, and it may run where nothing stops it (on the host, or in
// a sandbox whose limits the host cannot enforce). So the operations that
// take resources are bounded (MaxForkbomb processes, MaxHog bytes,
// MaxPause) and clean up after themselves; the others change only the
// paths, processes and sockets their arguments name.
//
// Operations (an argument to Main is one operation, its words separated by
// spaces, or a JSON array of words from Encode):
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
//	resolve NAME [SERVER]  look NAME up over UDP, through SERVER (HOST:PORT) or
//	                       the nameservers of /etc/resolv.conf; out = the addresses
//	serve-loopback [ADDR]  listen on 127.0.0.1 (or ADDR) and connect to it
//	listen-tcp ADDR READY SECONDS
//	                       listen on ADDR, write its address to the file READY,
//	                       and accept until stdin ends or SECONDS pass (at most
//	                       MaxPause); out = "accepted N"
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
// What the kernel layers must refuse (kernel_linux.go):
//
//	ptrace-parent [PID]    attach to the parent (PID 1 of a sandbox), or to PID
//	process-vm-readv       read the parent's memory
//	unshare-user | unshare-mount | clone-newuser | clone3 | setns
//	io-uring-setup | bpf | perf-event-open | keyctl | add-key | userfaultfd
//	init-module | finit-module | kexec-load
//	socket FAMILY [mptcp|raw]   FAMILY: packet, vsock, inet or unix
//	personality | tiocsti-high
//	caps                   out = the capability sets, no_new_privs and seccomp mode
//	setuid-root            setuid(0)
//	exec PROGRAM ARGS...   out = what the program printed (first 4 KiB)
//
// Resources and bait (resources_linux.go, creds_linux.go):
//
//	forkbomb N             keep up to N (at most MaxForkbomb) idle processes
//	                       alive at once; out = "K of N", the error is what
//	                       refused the next fork; all are killed and reaped
//	hog BYTES              map and touch BYTES (at most MaxHog) of memory
//	pause SECONDS          wait until stdin ends or SECONDS pass (at most MaxPause)
//	exec-creds PROGRAM ARGS...
//	                       start PROGRAM with its output blocked and report
//	                       the credentials it runs with: out = "caller=UID
//	                       uid=R,E,S,FS gid=R,E,S,FS cap_prm=HEX cap_eff=HEX"
//
// It runs on Linux; elsewhere every operation fails.
package probe

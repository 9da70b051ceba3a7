#!/bin/sh
# /init of the forgebox test VM (busybox sh). Kernel parameters it reads:
#   fbvm.cgroup=v2|hybrid|v1  v2: cgroup2 alone at /sys/fs/cgroup; hybrid: one
#                             v1 hierarchy per controller, name=systemd, and
#                             cgroup2 at /sys/fs/cgroup/unified (like the
#                             development machine); v1: hybrid without cgroup2
#   fbvm.run=REGEXP           run only the checks whose name matches
# Every line for the host starts with FBVM-; the last one is FBVM-DONE.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin

# Stage 1: the initramfs is the kernel's rootfs, which a real host never has
# as its root (it cannot be unmounted or pivoted away from). Copy it to a
# tmpfs and switch to that.
if [ "$1" != stage2 ]; then
	mount -t tmpfs -o mode=0755 root /newroot || exit 1
	for f in /*; do
		[ "$f" = /newroot ] || cp -a "$f" /newroot/ || exit 1
	done
	exec switch_root /newroot /init stage2
fi

param() {
	for w in $(cat /proc/cmdline); do
		case $w in fbvm.$1=*) echo "${w#*=}" ;; esac
	done
}
fact() {
	echo "FBVM-FACT init $*"
}

mount -t proc -o nosuid,nodev,noexec proc /proc
mount -t sysfs -o nosuid,nodev,noexec sysfs /sys
mount -t securityfs -o nosuid,nodev,noexec securityfs /sys/kernel/security
mount -t devtmpfs -o nosuid devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts -o nosuid,noexec,gid=5,mode=0620,ptmxmode=0666 devpts /dev/pts
mount -t tmpfs -o nosuid,nodev,mode=1777 tmpfs /dev/shm
mount -t tmpfs -o nosuid,nodev,mode=1777 tmpfs /tmp
mount -t tmpfs -o nosuid,nodev,mode=0755 tmpfs /run
hostname fbvm
ip link set lo up

layout=$(param cgroup)
fact cgroup_requested "${layout:-none}"
case $layout in
v2)
	mount -t cgroup2 -o nosuid,nodev,noexec,nsdelegate cgroup2 /sys/fs/cgroup
	fact cgroup_v2_controllers "$(cat /sys/fs/cgroup/cgroup.controllers)"
	;;
hybrid | v1)
	mount -t tmpfs -o nosuid,nodev,noexec,mode=0755 cgroup /sys/fs/cgroup
	mounted= refused=
	for c in $(awk 'NR > 1 && $4 == 1 { print $1 }' /proc/cgroups); do
		mkdir /sys/fs/cgroup/$c
		if mount -t cgroup -o nosuid,nodev,noexec,$c cgroup /sys/fs/cgroup/$c 2>/dev/null; then
			mounted="$mounted $c"
		else
			rmdir /sys/fs/cgroup/$c
			refused="$refused $c"
		fi
	done
	mkdir /sys/fs/cgroup/systemd
	mount -t cgroup -o nosuid,nodev,noexec,none,name=systemd cgroup /sys/fs/cgroup/systemd
	if [ "$layout" = hybrid ]; then
		mkdir /sys/fs/cgroup/unified
		mount -t cgroup2 -o nosuid,nodev,noexec cgroup2 /sys/fs/cgroup/unified
		fact cgroup_unified_controllers "$(cat /sys/fs/cgroup/unified/cgroup.controllers)"
	fi
	fact cgroup_v1_controllers "${mounted# }"
	[ -z "$refused" ] || fact cgroup_v1_refused "${refused# }"
	;;
esac

# Debian's kernels gate unprivileged user namespaces behind this sysctl;
# allow them, as Debian does by default, and say what the default was.
if [ -e /proc/sys/kernel/unprivileged_userns_clone ]; then
	fact unprivileged_userns_clone_default "$(cat /proc/sys/kernel/unprivileged_userns_clone)"
	echo 1 >/proc/sys/kernel/unprivileged_userns_clone
fi
fact lsm "$(cat /sys/kernel/security/lsm 2>/dev/null || echo unknown)"

# The kernel's default RLIMIT_NPROC scales with RAM: with the VM's 512 MiB
# it is about 1700, below forgebox's default task limit of 4096, as on any
# small machine; nproc_below_default tests a lower limit still.
fact rlimit_nproc_default "$(ulimit -u)"

run=$(param run)
cd /root
HOME=/root USER=root LOGNAME=root /bin/fbvm-check -run "$run"
echo "FBVM-EXIT root $?"
# busybox su, run by root, asks no password and sets HOME, USER and LOGNAME.
su -s /bin/sh $(awk -F: '$3 == 1000 { print $1 }' /etc/passwd) -c "cd && /bin/fbvm-check -run '$run'"
echo "FBVM-EXIT user $?"
echo FBVM-DONE
sync
poweroff -f

package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/containerd/cgroups/v3"
	"github.com/forgebox/forgebox/pathtree"
	"golang.org/x/sys/unix"
)

// mountRoot is where the cgroup filesystems are mounted, the one place
// containerd/cgroups (cgroups.Mode) and this package look.
const mountRoot = "/sys/fs/cgroup"

// Probe describes what this host and caller can do with cgroups. It reads
// /proc and /sys/fs/cgroup and changes nothing.
func Probe() Host {
	h := Host{UID: os.Geteuid(), CPUs: runtime.NumCPU()}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		h.Kernel = unix.ByteSliceToString(u.Release[:])
		h.NprocPerUserNS = kernelAtLeast(h.Kernel, 5, 14)
	}
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) == nil {
		h.MemoryBytes = int64(si.Totalram) * int64(si.Unit)
	}
	switch cgroups.Mode() {
	case cgroups.Unified:
		h.Version = VersionV2
		probeV2(&h, mountRoot)
	case cgroups.Hybrid:
		h.Version = VersionHybrid
		probeV1(&h, mountRoot)
	case cgroups.Legacy:
		h.Version = VersionV1
		probeV1(&h, mountRoot)
	default:
		h.Version = VersionNone
		h.Why = "no cgroup filesystem is mounted at " + mountRoot
	}
	return h
}

// probeV1 finds the v1 hierarchies of the controllers forgebox uses. Groups
// go at the top of each: only root can create them there, and v1 has no
// delegation the kernel considers safe for other users.
func probeV1(h *Host, root string) {
	h.Root = root
	own, _, err := cgroups.ParseCgroupFileUnified("/proc/self/cgroup")
	if err != nil {
		h.Why = fmt.Sprintf("read /proc/self/cgroup: %v", err)
		return
	}
	var missing, locked []string
	for _, c := range []string{Memory, Pids, CPU, CPUAcct} {
		dir := filepath.Join(root, c)
		var fs unix.Statfs_t
		if _, ok := own[c]; !ok || unix.Statfs(dir, &fs) != nil || fs.Type != unix.CGROUP_SUPER_MAGIC {
			missing = append(missing, c)
			continue
		}
		if !writable(dir) || !writable(filepath.Join(dir, "cgroup.procs")) {
			locked = append(locked, c)
			continue
		}
		h.Controllers = append(h.Controllers, c)
	}
	var why []string
	switch {
	case len(locked) > 0 && h.UID != 0:
		why = append(why, fmt.Sprintf("the cgroup v1 hierarchies under %s are writable only by root "+
			"and cgroup v1 has no safe delegation to other users: run forgebox as root, or on a "+
			"cgroup v2 host from a delegated cgroup", root))
	case len(locked) > 0:
		why = append(why, fmt.Sprintf("cannot write the %s hierarchies under %s (mounted read-only?)",
			strings.Join(locked, ", "), root))
	}
	if len(missing) > 0 {
		why = append(why, fmt.Sprintf("no cgroup v1 hierarchy for %s at %s", strings.Join(missing, ", "), root))
	}
	if slices.Contains(h.Controllers, Memory) && !exists(filepath.Join(root, Memory, "memory.memsw.limit_in_bytes")) {
		why = append(why, "swap accounting is off, so swap is not counted in the memory limit "+
			"(boot with swapaccount=1)")
	}
	h.CanCreate = len(h.Controllers) > 0 && len(locked) == 0
	if !h.CanCreate {
		h.Controllers = nil
	}
	h.Why = strings.Join(why, "; ")
}

// probeV2 picks where groups go on the unified hierarchy mounted at mnt:
// at its top for a caller who may write there (root), else next to the
// caller's own cgroup when the parent of that cgroup is writable by the
// caller: moving the command out of the caller's cgroup needs write access
// to cgroup.procs of the common ancestor, and that parent is it. A systemd
// user session delegates user@UID.service and everything below it to the
// user; a login session-N.scope sits in a root-owned slice and does not
// qualify.
func probeV2(h *Host, mnt string) {
	if writable(mnt) && writable(filepath.Join(mnt, "cgroup.procs")) {
		h.Root = mnt
		h.CanCreate = true
		h.Controllers = usableV2(mnt)
		noteMissingV2(h)
		return
	}
	_, own, err := cgroups.ParseCgroupFileUnified("/proc/self/cgroup")
	if err != nil || own == "" {
		h.Why = fmt.Sprintf("cannot find this process's cgroup v2 path in /proc/self/cgroup: %v", err)
		return
	}
	self := filepath.Join(mnt, own)
	parent := filepath.Dir(self)
	if own == "/" || !pathtree.Within(parent, mnt) {
		h.Why = fmt.Sprintf("uid %d cannot write the cgroup v2 root %s", h.UID, mnt)
		return
	}
	if !writable(parent) || !writable(filepath.Join(parent, "cgroup.procs")) {
		h.Why = fmt.Sprintf("this process's cgroup %s is not in a subtree delegated to uid %d: "+
			"moving a command out of it needs write access to its parent %s, which belongs to %s "+
			"(as a login session's scope does). Start forgebox in a delegated cgroup "+
			"(systemd-run --user --scope -p Delegate=yes forgebox ...) or run it as root",
			own, h.UID, filepath.Dir(own), ownerOf(parent))
		return
	}
	h.Root = parent
	h.CanCreate = true
	h.Delegated = h.UID != 0
	h.Controllers = usableV2(parent)
	noteMissingV2(h)
}

// usableV2 lists the controllers a new child of dir gets: those already
// enabled in its subtree_control, and those it offers and could enable
// without breaking the no-internal-processes rule (only the true root, or
// a cgroup with no processes of its own, may enable controllers).
func usableV2(dir string) []string {
	enabled := fields(filepath.Join(dir, "cgroup.subtree_control"))
	offered := fields(filepath.Join(dir, "cgroup.controllers"))
	canEnable := writable(filepath.Join(dir, "cgroup.subtree_control")) &&
		(!exists(filepath.Join(dir, "cgroup.type")) || len(fields(filepath.Join(dir, "cgroup.procs"))) == 0)
	var out []string
	for _, c := range []string{Memory, Pids, CPU} {
		if slices.Contains(enabled, c) || canEnable && slices.Contains(offered, c) {
			out = append(out, c)
		}
	}
	return out
}

func noteMissingV2(h *Host) {
	var missing []string
	for _, c := range []string{Memory, Pids, CPU} {
		if !slices.Contains(h.Controllers, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		h.Why = fmt.Sprintf("%s cannot give new groups the %s controllers (not enabled there, "+
			"and not enableable: not offered by its parent, or it has processes of its own)",
			h.Root, strings.Join(missing, ", "))
	}
}

// writable reports whether the caller's effective ids may write path.
func writable(path string) bool {
	return unix.Faccessat(unix.AT_FDCWD, path, unix.W_OK, unix.AT_EACCESS) == nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func fields(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return strings.Fields(string(b))
}

func ownerOf(path string) string {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return "another user"
	}
	return "uid " + strconv.Itoa(int(st.Uid))
}

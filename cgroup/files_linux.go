package cgroup

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Plain reads and removals of cgroup files. containerd/cgroups can do
// these too, but every run pays for them and the library's way costs
// several times more here: its Stat reads every file of every controller
// (some twenty), and its Processes and Delete walk the directory with an
// lstat of each control file, twice, then RemoveAll tries to unlink each
// one before the rmdir that is all the kernel needs. Destroy of an empty
// group is one rmdir per directory here.

// readInt reads a file holding one integer, such as cpuacct.usage.
func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

// eventCount reads the value of key from a flat keyed file such as
// pids.events ("max 3"); a missing key counts 0.
func eventCount(path, key string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if ok && k == key {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, sc.Err()
}

// procsUnder lists the processes in dir and the groups below it, adding
// to pids those it does not hold yet. A directory that is gone holds none.
func procsUnder(dir string, pids []int) ([]int, error) {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if errors.Is(err, fs.ErrNotExist) {
		return pids, nil
	}
	if err != nil {
		return pids, err
	}
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && !slices.Contains(pids, pid) {
			pids = append(pids, pid)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return pids, err
	}
	for _, e := range ents {
		if e.IsDir() {
			if pids, err = procsUnder(filepath.Join(dir, e.Name()), pids); err != nil {
				return pids, err
			}
		}
	}
	return pids, nil
}

// rmdirTree tries to remove the group dir and the groups below it,
// deepest first, and reports whether some are left: the kernel refuses
// (EBUSY) while a group holds a process or a child group. It looks for
// children only then, so that an empty group costs one rmdir.
func rmdirTree(dir string) (left bool, err error) {
	err = unix.Rmdir(dir)
	if err == nil || errors.Is(err, unix.ENOENT) {
		return false, nil
	}
	if !errors.Is(err, unix.EBUSY) {
		return true, &os.PathError{Op: "rmdir", Path: dir, Err: err}
	}
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return true, err
	}
	for _, e := range ents {
		if e.IsDir() {
			if _, err := rmdirTree(filepath.Join(dir, e.Name())); err != nil {
				return true, err
			}
		}
	}
	err = unix.Rmdir(dir)
	switch {
	case err == nil || errors.Is(err, unix.ENOENT):
		return false, nil
	case errors.Is(err, unix.EBUSY):
		return true, nil
	}
	return true, &os.PathError{Op: "rmdir", Path: dir, Err: err}
}

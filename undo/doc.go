// Package undo keeps what a sandboxed run changed in its workspace, so that
// the change can be taken back.
//
// A run with undo does not write the workspace: the sandbox mounts an
// overlay on it (sandbox/view_linux.c) whose lower layer is the host's
// workspace and whose upper layer is a directory of this package's store,
// on the workspace's file system. Once the command's tree is dead, Commit
// walks the upper layer and, entry by entry, moves the workspace's entry
// into the run's record (before/) and renames the new one into place, and
// writes the record's manifest: what each path was and became (type, mode,
// size, mtime, inode, ctime, symlink target). Undo moves the kept entries
// back after checking that what the run left is still there as it left it;
// what it replaces is moved into a record of its own, so an undo can be
// undone and nothing is lost.
//
// What it guarantees: the record holds the very inodes the run displaced
// (content, mode, owner, times, xattrs and hard links among the moved names
// are those of the originals), and an undo either refuses (listing the
// paths changed since) or keeps what it replaces. A record is written only
// by forgebox outside the sandbox: the store lies outside every writable
// root (Check refuses a workspace that contains it) and the sandbox hides
// it.
//
// The run's --rw directories are kept alike, in the same record (one part
// per root, rw/<i>/, Manifest.Roots and Entry.Root), where the store is on
// their file system.
//
// What it does not: undo anything outside the workspace and those --rw
// directories (the network, other programs); keep directory mtimes; restore a hard link
// between a file the run changed and one it did not (the overlay broke the
// link when the file was copied up); see the run's changes on the host
// before the run ends. Renaming a directory the workspace had before the
// run fails with EXDEV inside the sandbox (overlay without redirect_dir):
// tools that fall back to copying (mv, git) work, at the cost of a copy.
package undo

// Package files is the file side of the agent's tools: list, read, write,
// edit (exact text replaced), make directories, move, copy and delete, for
// an agent that has no shell.
// Every operation is confined to one workspace directory with the sandbox's
// path rules: nothing outside it is read or changed, protected paths are
// read-only, and hidden paths (secrets) are neither read nor changed.
//
// How paths are resolved (Linux): New opens the workspace once (O_PATH) and
// every operation walks its path from that descriptor one name at a time,
// each step an openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|
// RESOLVE_NO_MAGICLINKS) of a single name with O_PATH|O_NOFOLLOW relative
// to the directory before it, or openat(O_NOFOLLOW) where openat2 is
// missing (before Linux 5.6, or refused by a seccomp filter) — never a
// path joined into a string for the kernel to resolve. A symbolic link is
// read (readlinkat on the link itself) and its target walked the same way:
// a relative target from the link's directory, an absolute one only if it
// begins with the workspace. ".." goes back to the directory the walk came
// from, and past the workspace it is refused. The operation then acts on
// the directory descriptor the walk ended in (openat with O_NOFOLLOW,
// renameat2, unlinkat, mkdirat, symlinkat, fstatat with
// AT_SYMLINK_NOFOLLOW), so a directory swapped for a link after the walk
// cannot redirect it, and a link planted at a name being made is refused,
// not followed. The walk also yields the target's canonical path (no
// links, no ".."), which is what the protected and hidden paths are
// compared with, after the links among those are resolved too: a link to
// .git/hooks, ".git//hooks/../hooks" and ".vscode" being itself a link to
// cfg/vscode all count as protected.
//
// Guarantees:
//   - No operation reads, writes, makes, renames, removes, chmods or
//     chowns anything outside the workspace, whatever links the workspace
//     holds or grows during the operation. Links inside the workspace that
//     point inside it are followed for reading and as directories on the
//     way; a final link is never written through (Write and Edit refuse
//     it) and is moved, copied and deleted as a link.
//   - A protected path can be read but neither changed, created, deleted,
//     moved away nor replaced, and no directory holding one (".git" holds
//     ".git/hooks") can be deleted, moved or replaced. Making a directory
//     that will hold one (.git) is allowed.
//   - The caller's own places (Options.Own: forgebox's configuration,
//     approvals and history) are held by host path, apart from the
//     protected names: nothing at, under or holding one is changed,
//     created, deleted, moved or copied onto, whatever the links in the
//     workspace; a workspace inside one is read-only throughout. Reading
//     them is allowed.
//   - A hidden path inside the workspace is listed by name only and is
//     neither read, copied, moved, written nor deleted, nor is a directory
//     holding one copied, moved or deleted. A file that is a hard link to a
//     hidden file (anywhere) is not read, edited or copied. A hidden
//     directory that holds the workspace hides all of it.
//   - Write and Edit replace a file atomically (temporary file, fsync,
//     rename), so a file with other hard links — one outside the
//     workspace — is replaced under this name only; the other names keep
//     their content.
//     Delete of such a file removes this name only. No operation changes a
//     file in place.
//   - New files are 0644 and directories 0755, less the umask; a replaced
//     file keeps its permission bits and, when running as root, its owner;
//     set-id bits never survive. Copies keep the source's bits less group
//     and other write (at most 0755). Devices, fifos and sockets are
//     refused before they are opened; one swapped in between that check and
//     the open (O_NONBLOCK, read-only) is caught by its identity and
//     refused unread. Nothing but a file this package made is opened for
//     writing.
//   - Move and Copy never replace an existing destination
//     (RENAME_NOREPLACE; file systems without it get a check just before
//     the rename). A Copy is built under a temporary name and appears whole
//     or not at all; its links are checked where the copy is built and
//     again at its final name, and one pointing out of the workspace
//     refuses the whole copy.
//   - Errors are *Error values with a stable Kind and a Hint for the model.
//
// Not guaranteed:
//   - Path comparison is by name, case-sensitively: on a case-insensitive
//     file system (or an ext4 casefold directory) ".GIT/hooks" names
//     .git/hooks without matching it. Bind mounts inside the workspace are
//     entered like directories.
//   - A concurrent process that renames directories inside the workspace
//     can make the path an operation checked differ from where the
//     directory is by the time it acts. It cannot make the operation leave
//     the workspace, and it cannot move something into a protected place
//     unless it may write there itself.
//   - Links in a moved directory are not re-checked (none of these
//     operations follows them out, wherever they end up). A hard link to a
//     file inside a hidden directory outside the workspace is not
//     recognised; only hidden files are identified.
//   - Binary detection looks at the bytes read (NUL bytes, invalid UTF-8),
//     not the whole file: a file may read as text in one part and binary in
//     another.
//   - Only Linux is implemented. Elsewhere New fails with KindUnsupported
//     (wrapping errors.ErrUnsupported): a portable check-then-act
//     fallback would lose to a link swapped in between.
package files

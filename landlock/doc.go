// Package landlock turns forgebox's filesystem view into a Landlock
// ruleset, independently of the mount namespace that also enforces it.
//
// The rules are built from the same plan as the mounts: read and execute
// beneath what is visible read-only, everything beneath the writable roots,
// nothing elsewhere. Landlock can only grant, never carve out, so a hidden
// path beneath a readable directory is left out by granting that
// directory's other entries one by one instead of the directory itself.
// With TCP denied, binding and connecting TCP sockets is refused
// (Landlock ABI 4+); scoping (ABI 6+) keeps abstract Unix sockets and
// signals inside the sandbox.
//
// What it does not do: it cannot make one name read-only inside a writable
// directory (the protected workspace paths rely on the mount view alone),
// and its TCP rules do not see MPTCP sockets, which the seccomp filter
// refuses instead. Rules attach to inodes: a path that is replaced after
// the ruleset is built is not covered, and a hard link to a readable file
// stays readable wherever it is.
//
// The ruleset is built by the parent (Build) and enforced by the sandbox
// child right before it executes the command, so no Go thread of forgebox
// is ever restricted.
package landlock

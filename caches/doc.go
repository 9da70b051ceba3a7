// Package caches keeps the private, persistent package caches of sandboxed
// runs: which host cache directories a command may use (the table), where
// forgebox keeps what a run writes to them, and how big that may grow.
//
// A sandboxed command sees the user's caches (~/.cache, Go's module cache,
// ~/.npm, the pnpm store, Yarn's, Cargo's, Maven's and Gradle's) through an
// overlay: it reads what is already there, and what it writes lands in an
// upper directory that belongs to forgebox, under
// $XDG_STATE_HOME/forgebox/caches/<key>/<name>/. The host's own cache
// directories never change, so a command cannot plant a build artefact, a
// wheel or a tarball that a build outside the sandbox would then use.
//
// The private caches are kept per workspace (the key is a hash of the
// workspace's resolved path), not one for all sandboxed runs: a shared
// cache would let one project's run plant what another project's
// sandboxed build then trusts. The price is disk space and cold caches:
// each workspace warms its own copy of what it downloads or builds, on top
// of the host's. The total is bounded (DefaultLimit, or the limit file):
// after a run, at most once per MeasureEvery, forgebox measures the caches
// and removes whole workspaces' caches, least recently used first.
//
// The overlays are mounted "volatile" (no sync of the whole upper file
// system at each unmount, which cost more than the rest of the feature):
// Prepare discards a cache a crash may have left incomplete, that is one
// mounted volatile before the current boot.
//
// What it guarantees: the directories it makes are 0700 and the caller's;
// Clear and eviction never remove a workspace's cache while a run holds
// its lock. What it does not: the contents of a private cache are whatever
// earlier runs in that workspace wrote; a run trusts them as much as it
// trusts that workspace. Package caches never mounts anything: the sandbox
// does (package sandbox).
package caches

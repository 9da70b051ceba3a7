// Package everyday writes tiny real projects in Go, Python, Node and Rust,
// each with one dependency served by a local stand-in for its registry (a
// file-system Go module proxy, a PEP 503 index directory, an npm tarball,
// a vendored crate directory), and says how to build and test each offline.
// The integration tests build and test them under forgebox and check the
// host's caches afterwards; the bench times them under forgebox against
// the same commands without a sandbox.
//
// What it guarantees: the projects need no network, only their toolchain
// (Project.Tools); each test suite binds and connects on 127.0.0.1, so a
// sandbox that refuses TCP on its own loopback fails it; writing a project
// needs no toolchain, the stand-ins (zip, wheel, tarball, checksums) are
// made here. What it does not: pin toolchain versions (it sticks to what
// Debian 12's packages build: Go 1.21 modules, Python 3.11, Node 18, Rust
// 1.63) or check what a run did to the host; that is its caller's job.
package everyday

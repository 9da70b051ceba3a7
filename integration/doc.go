// Package integration attacks the built forgebox binary from outside: each
// test tries a real escape inside the sandbox and then checks, on the host,
// that nothing changed. The tests are Linux-only (files *_linux_test.go);
// every scenario runs as root and as an unprivileged user when the tests run
// as root, and as the current user otherwise.
package integration

// Command probe attempts operations and reports, for each, whether it
// succeeded and with which errno it failed. The integration tests run it
// inside the sandbox and assert on its verdicts, then check the host.
//
// Usage: probe 'OP ARG...' ['OP ARG...' ...]
//
// Each argument is one operation, its words separated by spaces. One JSON
// line per operation is printed: {"op":..., "args":[...], "ok":bool,
// "errno":"EROFS", "out":"..."}. The operations are those of package
// github.com/forgebox/forgebox/probe, which forgebox selftest runs too.
//
// It runs on Linux only (main_linux.go).
package main

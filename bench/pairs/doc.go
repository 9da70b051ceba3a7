// Package pairs times two commands against each other in interleaved
// pairs, in wall time and in CPU time, so that a figure is always a ratio
// to a peer measured in the same run: the machine's noise (another build,
// another test binary) hits both alike, and the median of the per-pair
// ratios says how the two compare. `make bench` reports with it and the
// integration package's launch budget gate checks with it.
//
// CPU time is the user and system time of the process and of every
// descendant it reaped, as wait4 reports it: for forgebox and bubblewrap
// that is the whole sandbox, the command included.
//
// It measures; it guarantees nothing about the commands it runs, which
// run with the caller's privileges (or the credentials a Cmd gives).
package pairs

// Command guest runs the VM checks inside a test VM (see package
// integration/vm): it runs forgebox the way a user would, attacks through
// it, then checks the guest's state. The VM's /init runs it once as root and
// once as the unprivileged user.
//
// It prints one line per fact and per check, which the host-side test
// parses from the serial console:
//
//	FBVM-FACT WHO KEY VALUE           a fact about the kernel (Landlock ABI, cgroup layout, ...)
//	FBVM-START WHO/CHECK              a check began (one that never ends is reported as failed)
//	FBVM-LOG WHO/CHECK TEXT           a line of evidence (forgebox's output on failure)
//	FBVM-RESULT WHO/CHECK pass|fail|skip DETAIL
//	FBVM-END WHO                      every check ran
//
// WHO is root or user. Add a check by adding an entry to checks (checks_linux.go).
//
// Usage (installed in the VM as /bin/fbvm-check): guest [-forgebox PATH] [-run REGEXP].
// `fbvm-check hog MIB` is a helper the checks run inside the sandbox
// (helpers_linux.go).
//
// It runs on Linux only (main_linux.go).
package main

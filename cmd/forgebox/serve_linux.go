package main

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill cmd when the server dies, whatever
// kills it: a forgebox run the server started never outlives it, and its
// sandbox dies with it.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

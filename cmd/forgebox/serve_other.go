//go:build !linux

package main

import "os/exec"

// dieWithParent: only Linux has a parent-death signal; elsewhere a run
// ends with its timeout or when its pipes close.
func dieWithParent(*exec.Cmd) {}

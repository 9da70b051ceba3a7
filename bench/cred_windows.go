package main

import "syscall"

// asUser is never reached on Windows: the bench runs as another user only
// as root, which Windows has not.
func asUser(uid, gid int) *syscall.SysProcAttr { return nil }

//go:build unix

package main

import "syscall"

// asUser makes a command run as uid and gid (the caller is root).
func asUser(uid, gid int) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
}

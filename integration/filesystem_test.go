package integration

import (
	"path/filepath"
	"testing"
)

// The host outside the workspace is read-only, metadata included, even for
// files the caller owns: without the sandbox every one of these would work.
func TestHostIsReadOnly(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		victim := filepath.Join(e.outside, "victim.txt")
		e.write(victim, "original")
		before, dirBefore := snap(t, victim), snap(t, e.outside)
		vs := e.probe(nil,
			"write "+victim+" pwned",
			"append "+victim+" pwned",
			"truncate "+victim,
			"chmod "+victim+" 777",
			"chown "+victim+" 0 0",
			"utime "+victim,
			"setxattr "+victim,
			"unlink "+victim,
			"rename "+victim+" "+victim+".moved",
			"write "+filepath.Join(e.outside, "new.txt")+" x",
			"mkdir "+filepath.Join(e.outside, "newdir"),
			"symlink /etc/passwd "+filepath.Join(e.outside, "link"),
			"write /etc/forgebox-attack x",
			"write /usr/forgebox-attack x",
		)
		blocked(t, vs, "EROFS", "EPERM")
		unchanged(t, victim, before)
		unchanged(t, e.outside, dirBefore)
		if s := snap(t, "/etc/forgebox-attack"); s.exists {
			t.Error("/etc/forgebox-attack was created on the host")
		}
	})
}

// The workspace is writable, and what the command writes is on the host.
func TestWorkspaceIsWritable(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		f := filepath.Join(e.ws, "hello.txt")
		vs := e.probe(nil, "write "+f+" hi", "chmod "+f+" 600", "mkdir "+filepath.Join(e.ws, "sub"), "utime "+f)
		allowed(t, vs)
		if s := snap(t, f); !s.exists || s.content != "hi" || s.mode.Perm() != 0o600 {
			t.Errorf("workspace file on the host: %+v; want content hi, mode 600", s)
		}
	})
}

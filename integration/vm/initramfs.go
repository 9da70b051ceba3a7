package vm

import (
	_ "embed"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// initScript is the VM's /init: it mounts the usual filesystems and the
// chosen cgroup layout, runs the guest checks as root and as the user, and
// powers off.
//
//go:embed init.sh
var initScript []byte

// The unprivileged user of the VM.
const (
	userName = "fbuser"
	userID   = 1000
)

// Contents says what goes into the initramfs besides busybox, /init and the
// users.
type Contents struct {
	// Busybox is a static busybox; each of its applets gets a symlink.
	Busybox string
	// Programs are static executables copied to /bin under their base
	// names: forgebox, the guest checks (as fbvm-check) and any extra test
	// programs.
	Programs map[string]string
}

// BuildInitramfs assembles the VM's root filesystem.
func BuildInitramfs(c Contents) (*Image, error) {
	var im Image
	for _, d := range []string{"/proc", "/sys", "/dev", "/run", "/newroot", "/mnt", "/var/lib", "/usr/local/bin"} {
		im.Dir(d, 0o755, 0, 0)
	}
	im.Dir("/tmp", fs.ModeSticky|0o777, 0, 0)
	im.Dir("/var/tmp", fs.ModeSticky|0o777, 0, 0)
	im.Dir("/root", 0o700, 0, 0)
	im.Dir("/home/"+userName, 0o755, userID, userID)
	im.File("/etc/passwd", []byte(fmt.Sprintf("root:x:0:0:root:/root:/bin/sh\n%s:x:%d:%d:forgebox test user:/home/%s:/bin/sh\n", userName, userID, userID, userName)), 0o644, 0, 0)
	im.File("/etc/group", []byte(fmt.Sprintf("root:x:0:\ntty:x:5:\n%s:x:%d:\n", userName, userID)), 0o644, 0, 0)
	im.File("/etc/shells", []byte("/bin/sh\n"), 0o644, 0, 0)
	im.File("/etc/hostname", []byte("fbvm\n"), 0o644, 0, 0)
	im.File("/init", initScript, 0o755, 0, 0)

	bb, err := os.ReadFile(c.Busybox)
	if err != nil {
		return nil, err
	}
	im.File("/bin/busybox", bb, 0o755, 0, 0)
	applets, err := exec.Command(c.Busybox, "--list-full").Output()
	if err != nil {
		return nil, fmt.Errorf("list the applets of %s: %w", c.Busybox, err)
	}
	for _, a := range strings.Fields(string(applets)) {
		if a = "/" + a; !im.Has(a) && path.Base(a) != "init" && path.Base(a) != "linuxrc" {
			im.Symlink(a, "/bin/busybox")
		}
	}
	for name, src := range c.Programs {
		data, err := os.ReadFile(src)
		if err != nil {
			return nil, err
		}
		im.File(filepath.Join("/bin", name), data, 0o755, 0, 0)
	}
	return &im, nil
}

package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// hostMount runs mount(8) on the host as root and unmounts at cleanup,
// before the scenario's directory is removed (cleanups run last first),
// so that the removal never walks into a second path of the home.
func hostMount(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("mount", args...).CombinedOutput(); err != nil {
		t.Fatalf("mount %q: %v %s", args, err, out)
	}
	point := args[len(args)-1]
	t.Cleanup(func() {
		if exec.Command("umount", point).Run() != nil {
			exec.Command("umount", "-l", point).Run()
		}
	})
}

// needRootForMounts skips a scenario whose host mounts only root can make.
// The pass of the suite as the test user skips it; the pass as root runs
// it for root and, with the mounts made by root, for the test user.
func needRootForMounts(t *testing.T) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("the scenario bind-mounts on the host, which needs root; the root pass runs it for the test user too")
	}
}

// plantHomeSecrets writes a file secret, a secret inside a hidden
// directory and one inside a hidden .config directory.
func (e *env) plantHomeSecrets(home string) []string {
	files := []string{".pgpass", ".ssh/id_ed25519", ".config/rclone/rclone.conf"}
	for _, f := range files {
		e.write(filepath.Join(home, f), "SECRET "+f)
	}
	return files
}

// secretsThrough checks that no read of the ops yields a planted secret,
// after the control shows each one is readable on the host.
func (e *env) secretsThrough(t *testing.T, flags []string, ops []string) {
	t.Helper()
	for _, v := range e.probeHost(ops...) {
		if !v.OK || (v.Op == "read" && !strings.Contains(v.Out, "SECRET")) {
			t.Fatalf("control: %s = %s %q on the host; want the secret", v.call(), v.outcome(), v.Out)
		}
	}
	for _, v := range e.probe(flags, ops...) {
		if strings.Contains(v.Out, "SECRET") || strings.Contains(v.Out, "id_ed25519") {
			t.Errorf("%s = %q; want the secret hidden", v.call(), v.Out)
		}
	}
}

// The home seen through a second path (a bind mount of the home, of the
// directory holding it as /home would be, and of a hidden directory
// itself) shows none of its secrets: each second path is covered too.
func TestSecretsThroughBindMountsAreHidden(t *testing.T) {
	needRootForMounts(t)
	forEachModeSerial(t, func(t *testing.T, e *env) {
		files := e.plantHomeSecrets(e.home)
		homeAlias, sshAlias := filepath.Join(e.dir, "alias-home"), filepath.Join(e.dir, "alias-ssh")
		parentAlias := filepath.Join(e.outside, "alias-parent")
		for _, d := range []string{homeAlias, sshAlias, parentAlias} {
			e.mkdir(d)
		}
		hostMount(t, "--bind", e.home, homeAlias)
		hostMount(t, "--bind", e.dir, parentAlias) // stands for /home: a directory holding a home
		hostMount(t, "--bind", filepath.Join(e.home, ".ssh"), sshAlias)
		var ops []string
		for _, f := range files {
			ops = append(ops, readOp(filepath.Join(homeAlias, f)), readOp(filepath.Join(parentAlias, "home", f)))
		}
		ops = append(ops, readOp(filepath.Join(sshAlias, "id_ed25519")),
			"readdir "+filepath.Join(homeAlias, ".ssh"), "readdir "+sshAlias)
		e.secretsThrough(t, nil, ops)
		// What is hidden is said: the other paths are listed too.
		_, res := e.runJSON([]string{"--", "true"})
		for _, p := range []string{filepath.Join(homeAlias, ".pgpass"), filepath.Join(homeAlias, ".ssh"), sshAlias} {
			if res.Enforced == nil || !contains(res.Enforced.Hidden, p) {
				t.Errorf("enforced.hidden does not list %s", p)
			}
		}
	})
}

// A second mount of the same filesystem (here a loop device mounted
// twice) shows the same files too.
func TestSecretsThroughSecondMountAreHidden(t *testing.T) {
	needRootForMounts(t)
	for _, tool := range []string{"losetup", "mkfs.ext4"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: cannot make a filesystem to mount twice", tool)
		}
	}
	img := filepath.Join(baseDir, "second-mount.img")
	if out, err := exec.Command("truncate", "-s", "16M", img).CombinedOutput(); err != nil {
		t.Fatalf("truncate: %v %s", err, out)
	}
	t.Cleanup(func() { os.Remove(img) })
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", img).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v %s", err, out)
	}
	out, err := exec.Command("losetup", "--find", "--show", img).CombinedOutput()
	if err != nil {
		t.Skipf("no loop device: %v %s", err, out)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() { exec.Command("losetup", "-d", dev).Run() })
	forEachModeSerial(t, func(t *testing.T, e *env) {
		first, second := filepath.Join(e.dir, "fs-first"), filepath.Join(e.dir, "fs-second")
		e.mkdir(first)
		e.mkdir(second)
		hostMount(t, dev, first)
		hostMount(t, dev, second)
		home := filepath.Join(first, "home-"+e.m.name)
		e.mkdir(home)
		files := e.plantHomeSecrets(home)
		// The home on that filesystem is the run's: HOME points there.
		e.extra = append(e.extra, "HOME="+home)
		var ops []string
		for _, f := range files {
			ops = append(ops, readOp(filepath.Join(second, "home-"+e.m.name, f)))
		}
		e.secretsThrough(t, nil, ops)
	})
}

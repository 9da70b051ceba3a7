package integration

import (
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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
			"link "+victim+" "+filepath.Join(e.outside, "hardlink"),
			"write /etc/forgebox-attack x",
			"write /usr/forgebox-attack x",
			"mkdir /etc/forgebox-attack.d",
		)
		blocked(t, vs, "EROFS", "EPERM")
		unchanged(t, victim, before)
		unchanged(t, e.outside, dirBefore)
		for _, p := range []string{"/etc/forgebox-attack", "/usr/forgebox-attack", "/etc/forgebox-attack.d"} {
			if s := snap(t, p); s.exists {
				os.RemoveAll(p)
				t.Errorf("%s was created on the host", p)
			}
		}
	})
}

// System files refuse metadata changes too. Every attempt here leaves the
// file as it was even if it succeeded (same mode, same owner), so a
// failure of the sandbox cannot damage the machine; as root each would
// succeed without the sandbox.
func TestSystemFilesAreReadOnly(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		files := []string{"/etc/passwd", "/usr/bin/env", "/etc/hostname"}
		var before []snapshot
		var ops []string
		for _, f := range files {
			st, err := os.Stat(f)
			if err != nil {
				t.Skipf("%s: %v", f, err)
			}
			before = append(before, snap(t, f))
			ops = append(ops,
				"chmod "+f+" "+strconv.FormatUint(uint64(st.Mode().Perm()), 8),
				"chown "+f+" 0 0",
				"append "+f+" ",
			)
		}
		vs := e.probe(nil, ops...)
		if e.m.root() {
			blocked(t, vs, "EROFS")
		} else {
			blocked(t, vs, "EROFS", "EPERM", "EACCES")
		}
		for i, f := range files {
			unchanged(t, f, before[i])
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

// --rw adds writable roots, --ro read-only ones; a --ro path inside the
// workspace makes that part read-only.
func TestGrants(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		extra := filepath.Join(e.dir, "extra")
		e.mkdir(extra)
		vendor := filepath.Join(e.ws, "vendor")
		lib := filepath.Join(vendor, "lib.go")
		e.write(lib, "package lib")
		before := snap(t, lib)
		vs := e.probe([]string{"--rw", extra, "--ro", vendor},
			"write "+filepath.Join(extra, "made-inside")+" yes",
			"write "+lib+" pwned",
			"write "+filepath.Join(vendor, "new.go")+" x",
			"read "+lib,
		)
		outcomeIs(t, vs[0], "ok")
		outcomeIs(t, vs[1], "EROFS")
		outcomeIs(t, vs[2], "EROFS")
		outcomeIs(t, vs[3], "ok")
		if s := snap(t, filepath.Join(extra, "made-inside")); s.content != "yes" {
			t.Errorf("file written in the --rw root is not on the host: %+v", s)
		}
		unchanged(t, lib, before)
	})
}

// The command starts in the caller's directory when it lies inside the
// workspace, else at the workspace root.
func TestStartDirectory(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		sub := filepath.Join(e.ws, "a", "b")
		e.mkdir(sub)
		for _, c := range []struct {
			name, dir, want string
		}{
			{"inside", sub, sub},
			{"outside", e.outside, e.ws},
		} {
			r := e.run([]string{"run", "--workspace", e.ws, "--", probe, "cwd"}, inDir(c.dir))
			vs := decodeVerdicts(t, r.stdout)
			if r.code != 0 || len(vs) != 1 {
				t.Fatalf("%s: exit %d, stdout %q, stderr %q", c.name, r.code, r.stdout, r.stderr)
			}
			if vs[0].Out != c.want {
				t.Errorf("started from %s: probe cwd = %q; want %q", c.dir, vs[0].Out, c.want)
			}
		}
	})
}

// /tmp, /var/tmp, /dev/shm and /run are private: the host's files there
// are invisible and what the command writes there stays in the sandbox.
func TestPrivateDirectories(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		name := "forgebox-test-" + strings.ReplaceAll(marker(), ".", "-")
		var hostFiles, reads, writes []string
		for _, d := range []string{"/tmp", "/var/tmp", "/dev/shm", "/run", "/var/run"} {
			p := filepath.Join(d, name)
			if err := os.WriteFile(p, []byte("host secret"), 0o644); err != nil {
				t.Logf("cannot place a file in the host's %s: %v", d, err)
				continue
			}
			t.Cleanup(func() { os.Remove(p) })
			hostFiles = append(hostFiles, p)
			reads = append(reads, "read "+p)
			writes = append(writes, "write "+filepath.Join(d, name+"-inside")+" x")
		}
		allowed(t, e.probeHost(reads...)) // the control: the user can read them
		blocked(t, e.probe(nil, reads...), "ENOENT")
		for _, v := range e.probe(nil, writes...) {
			// /run is private and read-only; the others are writable.
			if d := filepath.Dir(v.Args[0]); d != "/run" && d != "/var/run" {
				outcomeIs(t, v, "ok")
			}
		}
		for _, p := range hostFiles {
			if s := snap(t, p+"-inside"); s.exists {
				os.Remove(p + "-inside")
				t.Errorf("%s-inside, written in the sandbox, appeared on the host", p)
			}
		}
	})
}

// The command sees the sandbox's processes only, and cannot signal the
// host's.
func TestProcIsPrivate(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		host := e.hostSleep()
		pid := strconv.Itoa(host.pid())
		allowed(t, e.probeHost("kill "+pid+" 0")) // the control
		vs := e.probe(nil, "pids", "kill "+pid+" 0", "kill "+pid+" 9", "read /proc/"+pid+"/cmdline", "read /proc/1/cmdline")
		if vs[0].Out != "1,2" {
			t.Errorf("probe pids = %q; want 1,2 (forgebox's init and the command)", vs[0].Out)
		}
		blocked(t, vs[1:3], "ESRCH")
		outcomeIs(t, vs[3], "ENOENT")
		if hostInit, _ := os.ReadFile("/proc/1/cmdline"); vs[4].Out == string(hostInit) {
			t.Errorf("probe read /proc/1/cmdline = %q: the host's init; want forgebox's", vs[4].Out)
		}
		if !host.alive() {
			t.Errorf("host process %s died during the run", pid)
		}
	})
}

// /dev holds a few harmless devices and nothing else.
func TestMinimalDev(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		want := "fd,full,null,ptmx,pts,random,shm,stderr,stdin,stdout,tty,urandom,zero"
		absent := []string{"/dev/kmsg", "/dev/mem", "/dev/vda", "/dev/sda", "/dev/nvme0n1", "/dev/port", "/dev/kvm", "/dev/console"}
		ops := []string{"readdir /dev", "write /dev/null x", "mknod " + filepath.Join(e.ws, "null2")}
		for _, d := range absent {
			ops = append(ops, "stat "+d)
		}
		vs := e.probe(nil, ops...)
		if vs[0].Out != want {
			t.Errorf("probe readdir /dev = %q; want %q", vs[0].Out, want)
		}
		outcomeIs(t, vs[1], "ok")
		outcomeIs(t, vs[2], "EPERM")
		blocked(t, vs[3:], "ENOENT")
		if _, err := os.Stat("/dev/vda"); err != nil {
			t.Logf("note: the host has no /dev/vda (%v)", err)
		}
	})
}

// The strict profile still shows the workspace, writable, and --ro grants.
func TestStrictProfileKeepsWorkspace(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.write(filepath.Join(e.ws, "host.txt"), "from the host")
		extra := filepath.Join(e.dir, "extra")
		e.write(filepath.Join(extra, "tool.txt"), "granted")
		r := e.run([]string{"run", "--profile", "strict", "--ro", extra, "-c",
			"cat host.txt; echo; cat " + filepath.Join(extra, "tool.txt") + "; echo; echo inside > made-inside.txt"})
		if r.code != 0 || r.stdout != "from the host\ngranted\n" {
			t.Errorf("--profile strict: exit %d, stdout %q; want the workspace's and the --ro path's files\nstderr: %s", r.code, r.stdout, r.stderr)
		}
		if s := snap(t, filepath.Join(e.ws, "made-inside.txt")); s.content != "inside\n" {
			t.Errorf("--profile strict: a file written in the workspace is not on the host (%+v)", s)
		}
	})
}

// The strict profile shows the system directories and the workspace; the
// home directory and the rest of the host are gone.
func TestStrictProfile(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.write(filepath.Join(e.home, "notes.txt"), "private")
		e.write(filepath.Join(e.outside, "other.txt"), "private")
		pwHome := ""
		if u, err := user.LookupId(strconv.Itoa(e.m.uid)); err == nil {
			pwHome = u.HomeDir
		}
		ops := []string{
			"read " + filepath.Join(e.home, "notes.txt"),
			"read " + filepath.Join(e.outside, "other.txt"),
			"read /var/lib/dpkg/status",
			"read /etc/hostname",
			"stat /usr/bin/env",
			"write " + filepath.Join(e.ws, "ok.txt") + " x",
		}
		for _, d := range []string{"/root", "/home", "/srv", "/mnt", "/var/lib", "/var/log", pwHome} {
			if d != "" {
				ops = append(ops, "readdir "+d)
			}
		}
		allowed(t, e.probeHost(ops[:3]...)) // the control
		vs := e.probe([]string{"--profile", "strict"}, ops...)
		blocked(t, vs[:3], "ENOENT")
		allowed(t, vs[3:6])
		grants := []string{e.ws, binDir}
		for _, v := range vs[6:] {
			dir := v.Args[0]
			if !v.OK {
				outcomeIs(t, v, "ENOENT", "EACCES")
				continue
			}
			for _, name := range strings.Split(v.Out, ",") {
				if name != "" && !slices.Contains(pathTo(dir, grants), name) {
					t.Errorf("strict profile: %s lists %q (all: %s); want only the way to the workspace", dir, name, v.Out)
				}
			}
		}
	})
}

// pathTo lists the entries of dir that lead to one of the paths.
func pathTo(dir string, paths []string) []string {
	var out []string
	for _, p := range paths {
		if rel, err := filepath.Rel(dir, p); err == nil && !strings.HasPrefix(rel, "..") && rel != "." {
			out = append(out, strings.Split(rel, string(filepath.Separator))[0])
		}
	}
	return out
}

// The readonly profile makes the workspace read-only too.
func TestReadonlyProfile(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		f := filepath.Join(e.ws, "code.go")
		e.write(f, "package main")
		before, dir := snap(t, f), snap(t, e.ws)
		vs := e.probe([]string{"--profile", "readonly"},
			"read "+f, "write "+f+" pwned", "chmod "+f+" 777", "unlink "+f, "write "+filepath.Join(e.ws, "new")+" x", "mkdir "+filepath.Join(e.ws, "d"))
		outcomeIs(t, vs[0], "ok")
		blocked(t, vs[1:], "EROFS")
		unchanged(t, f, before)
		unchanged(t, e.ws, dir)
	})
}

// Symlinks in the workspace that lead outside it do not make the outside
// writable: not through a file link, a directory link, a chain, a relative
// ".." link, nor a link the command makes itself. Hard links across the
// boundary are refused.
func TestSymlinksDoNotWidenWrites(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		victim := filepath.Join(e.outside, "victim.txt")
		e.write(victim, "original")
		e.write(filepath.Join(e.ws, "mine.txt"), "mine")
		e.mkdir(filepath.Join(e.ws, "sub"))
		links := map[string]string{
			"lfile":  victim,
			"ldir":   e.outside,
			"chain1": "chain2",
			"chain2": filepath.Join(e.ws, "chain3"),
			"chain3": "lfile",
			"up":     "../outside",
			"sub/up": "../../outside/victim.txt",
		}
		for name, target := range links {
			p := filepath.Join(e.ws, name)
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			e.chown(p)
		}
		before := tree(t, e.outside)
		// Not filepath.Join: the ".." must reach the kernel uncleaned.
		ws := func(p string) string { return e.ws + "/" + p }
		attacks := []string{
			"write " + ws("lfile") + " pwned",
			"append " + ws("lfile") + " pwned",
			"truncate " + ws("lfile"),
			"chmod " + ws("lfile") + " 777",
			"utime " + ws("lfile"),
			"setxattr " + ws("lfile"),
			"write " + ws("ldir/victim.txt") + " pwned",
			"write " + ws("ldir/new.txt") + " x",
			"mkdir " + ws("ldir/newdir"),
			"unlink " + ws("ldir/victim.txt"),
			"rename " + ws("ldir/victim.txt") + " " + ws("stolen.txt"),
			"rename " + ws("mine.txt") + " " + ws("ldir/planted.txt"),
			"symlink /etc/passwd " + ws("ldir/planted-link"),
			"write " + ws("chain1") + " pwned",
			"chmod " + ws("chain1") + " 777",
			"write " + ws("up/victim.txt") + " pwned",
			"write " + ws("up/new.txt") + " x",
			"write " + ws("sub/up") + " pwned",
			"write " + ws("sub/../../outside/victim.txt") + " pwned",
			"write " + ws("sub/../up/../outside/new2.txt") + " x",
			"link " + victim + " " + ws("hard"),
		}
		vs := e.probe(nil, attacks...)
		blocked(t, vs, "EROFS", "EXDEV", "EPERM")
		// A link the command makes itself leads nowhere writable either.
		own := ws("own-link")
		vs = e.probe(nil, "symlink "+victim+" "+own, "write "+own+" pwned", "chmod "+own+" 777")
		outcomeIs(t, vs[0], "ok")
		blocked(t, vs[1:], "EROFS")
		if after := tree(t, e.outside); after != before {
			t.Errorf("outside changed through a symlink:\nbefore:\n%s\nafter:\n%s", before, after)
		}
		if s := snap(t, victim); s.content != "original" {
			t.Errorf("victim content = %q; want original", s.content)
		}
	})
}

// forgebox refuses workspaces that would make the sandbox pointless: the
// root, a home directory or what contains it, system directories. Nothing
// runs and nothing is created.
func TestRefusedWorkspaces(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		cases := []struct{ name, ws string }{
			{"root", "/"},
			{"HOME", e.home},
			{"ancestor of HOME", e.dir},
			{"usr", "/usr"},
			{"etc", "/etc"},
			{"home", "/home"},
			{"var", "/var"},
			{"proc", "/proc"},
			{"inside usr", "/usr/share"},
			{"inside etc", "/etc/ssl"},
		}
		if u, err := user.LookupId(strconv.Itoa(e.m.uid)); err == nil && u.HomeDir != "" {
			if _, err := os.Stat(u.HomeDir); err == nil {
				cases = append(cases, struct{ name, ws string }{"passwd home", u.HomeDir})
			}
		}
		before := tree(t, e.dir)
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r := e.run([]string{"run", "--workspace", c.ws, "-c", "echo ran; touch ran"})
				if r.code != 125 {
					t.Errorf("forgebox run --workspace %s: exit %d; want 125\nstdout: %s\nstderr: %s", c.ws, r.code, r.stdout, r.stderr)
				}
				if strings.Contains(r.stdout, "ran") {
					t.Errorf("--workspace %s: the command ran", c.ws)
				}
				forgeboxOnly(t, r.stderr)
				if !strings.Contains(r.stderr, "--workspace") {
					t.Errorf("--workspace %s: stderr %q does not explain how to choose a project directory (--workspace)", c.ws, r.stderr)
				}
				if _, err := os.Stat(filepath.Join(c.ws, "ran")); err == nil {
					os.Remove(filepath.Join(c.ws, "ran"))
					t.Errorf("--workspace %s: the command created %s/ran", c.ws, c.ws)
				}
			})
		}
		// The current directory is the default workspace: the same refusal.
		r := e.run([]string{"run", "-c", "echo ran; touch ran"}, inDir(e.home))
		if r.code != 125 || strings.Contains(r.stdout, "ran") {
			t.Errorf("forgebox run from HOME without --workspace: exit %d, stdout %q; want 125 and nothing run", r.code, r.stdout)
		}
		if after := tree(t, e.dir); after != before {
			t.Errorf("refused runs changed the host:\nbefore:\n%s\nafter:\n%s", before, after)
		}
	})
}

// A command that gains every capability in a nested user namespace still
// cannot undo the view: the mounts it inherited are locked.
func TestNestedNamespaceCannotUndoTheView(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		victim := filepath.Join(e.outside, "victim.txt")
		e.write(victim, "original")
		secret := filepath.Join(e.home, ".ssh", "id_ed25519")
		e.write(secret, "PRIVATE KEY")
		before := snap(t, victim)
		ops := []string{
			"umount " + filepath.Join(e.home, ".ssh"),
			"read " + secret,
			"remount-rw /",
			"umount " + e.ws,
			"write " + victim + " pwned",
			"mount-tmpfs " + e.outside,
		}
		line := "unshare -Um --keep-caps " + probe + " '" + strings.Join(ops, "' '") + "'"
		r := e.sh(line)
		vs := decodeVerdicts(t, r.stdout)
		if len(vs) == 0 {
			t.Skipf("no nested user namespace in the sandbox (exit %d: %s): nothing to attack from", r.code, r.stderr)
		}
		if len(vs) != len(ops) {
			t.Fatalf("probe gave %d verdicts for %d ops: %s", len(vs), len(ops), r.stdout)
		}
		outcomeIs(t, vs[0], "EINVAL", "EPERM")
		if strings.Contains(vs[1].Out, "PRIVATE") {
			t.Errorf("%s = %q: the hidden secret is readable", vs[1].call(), vs[1].Out)
		}
		blocked(t, vs[2:5], "EINVAL", "EPERM", "EROFS")
		unchanged(t, victim, before)
	})
}

// The re-executed child (used for --net host, doctor and the best-effort
// fallback, and forced here) builds the same view as the preforked one.
func TestReexecutedChild(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.extra = append(e.extra, "FORGEBOX_NO_PREFORK=1")
		victim := filepath.Join(e.outside, "victim.txt")
		e.write(victim, "original")
		e.write(filepath.Join(e.home, ".ssh", "id_rsa"), "KEY")
		before := snap(t, victim)
		blocked(t, e.probe(nil, "write "+victim+" x", "chmod "+victim+" 777", "write /tmp/../etc/x y"), "EROFS", "EPERM")
		allowed(t, e.probe(nil, "write "+filepath.Join(e.ws, "ok.txt")+" yes"))
		if vs := e.probe(nil, "read "+filepath.Join(e.home, ".ssh", "id_rsa")); vs[0].OK {
			t.Errorf("read ~/.ssh/id_rsa = ok %q; want it hidden", vs[0].Out)
		}
		unchanged(t, victim, before)
	})
}

// The fresh /proc must not act on the machine. A root caller is host uid 0
// inside, and /proc/sys checks the uid: core_pattern written from inside
// would run a program of the command's choosing as host root on the next
// crash.
func TestProcCannotChangeTheHost(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		before, _ := os.ReadFile("/proc/sys/kernel/core_pattern")
		vs := e.probe(nil,
			"write /proc/sys/kernel/core_pattern |/tmp/evil",
			"write /proc/sys/vm/drop_caches 3",
			"write /proc/sys/kernel/hostname other",
		)
		blocked(t, vs, "EROFS", "EACCES", "EPERM")
		if after, _ := os.ReadFile("/proc/sys/kernel/core_pattern"); string(after) != string(before) {
			t.Fatalf("host kernel.core_pattern changed from %q to %q", before, after)
		}
		if vs := e.probe(nil, "read /proc/keys"); vs[0].OK && vs[0].Out != "" {
			t.Errorf("/proc/keys is readable inside: %q", vs[0].Out)
		}
	})
}

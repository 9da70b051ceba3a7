package integration

import (
	"archive/tar"
	"archive/zip"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 16, class 3: a command gives a file in the workspace the setuid or
// setgid bit. Run as root, a setuid copy of a shell left in the workspace
// makes any host user root; run as anyone, it makes others that user.
// Every way tried here must leave the workspace, seen from the host,
// without a single setuid or setgid bit.
func TestNoSetidFilesLeftBehind(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		writeSetidTar(t, filepath.Join(e.ws, "a.tar"))
		e.chown(filepath.Join(e.ws, "a.tar"))
		writeSetidZip(t, filepath.Join(e.ws, "a.zip"))
		e.chown(filepath.Join(e.ws, "a.zip"))
		// Real tools first, as an attacker (or an archive) would use them.
		lines := []string{
			"cp /bin/sh sush && chmod 4755 sush",
			"cp /bin/sh sgsh && chmod g+s sgsh",
			"cp -p /usr/bin/passwd pw", // setuid root on the host
			"install -m 4755 /bin/sh inst",
			"install -m 2755 -d instdir",
			"mkdir x && tar -xpf a.tar -C x",
			"mkdir y && tar --same-owner -xpf a.tar -C y",
			"mkdir z && unzip -K a.zip -d z", // -K: keep setuid and setgid bits
			`python3 -c 'import os; os.close(os.open("pyopen", os.O_CREAT|os.O_WRONLY, 0o4755))'`,
			`python3 -c 'import os; open("pych", "w").close(); os.chmod("pych", 0o6755)'`,
			"mkdir -m 2755 mk",
			"ln /usr/bin/passwd hardlink",
		}
		for _, l := range lines {
			r := e.sh(l)
			t.Logf("%s: exit %d %s", l, r.code, strings.TrimSpace(r.stderr))
		}
		// Then each syscall, with the errno it must get.
		vs := e.probe(nil,
			"write "+filepath.Join(e.ws, "f")+" x",
			"chmod "+filepath.Join(e.ws, "f")+" 4755",
			"chmod "+filepath.Join(e.ws, "f")+" 2755",
			"create-mode "+filepath.Join(e.ws, "g")+" 4755",
			"mknod-mode "+filepath.Join(e.ws, "h")+" 2755",
			"link /usr/bin/passwd "+filepath.Join(e.ws, "pwlink"),
			"mkdir-mode "+filepath.Join(e.ws, "d")+" 6755",
			"chmod "+filepath.Join(e.ws, "f")+" 755",
		)
		outcomeIs(t, vs[0], "ok")
		blocked(t, vs[1:5], "EPERM")
		// Another mount than /usr: the kernel refuses hard links across
		// mounts, so a host setuid binary cannot be kept in the workspace.
		outcomeIs(t, vs[5], "EXDEV")
		outcomeIs(t, vs[6], "ok") // mkdir drops the bits by itself
		outcomeIs(t, vs[7], "ok") // ordinary modes stay allowed

		var found []string
		filepath.WalkDir(e.ws, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if fi, err := os.Lstat(p); err == nil && fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid) != 0 {
				found = append(found, p+" "+fi.Mode().String())
			}
			return nil
		})
		if len(found) > 0 {
			t.Errorf("the sandbox left setuid or setgid files on the host:\n%s", strings.Join(found, "\n"))
		}
		if _, err := os.Lstat(filepath.Join(e.ws, "pwlink")); err == nil {
			t.Errorf("a hard link to /usr/bin/passwd was made in the workspace")
		}
		_, res := e.runJSON([]string{"--", "true"})
		for _, l := range []string{"chmod(mode with S_ISUID or S_ISGID)", "openat(O_CREAT or O_TMPFILE, mode with S_ISUID or S_ISGID)", "openat2"} {
			if res.Enforced == nil || !contains(res.Enforced.SeccompDenied, l) {
				t.Errorf("enforced.seccomp_denied does not list %q", l)
			}
		}
	})
}

// writeSetidTar writes an archive holding a setuid file, a setgid file and
// a setgid directory, as a downloaded tarball might.
func writeSetidTar(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := tar.NewWriter(f)
	body := "#!/bin/sh\nid\n"
	for _, h := range []tar.Header{
		{Name: "tsuid", Mode: 0o4755, Size: int64(len(body)), Typeflag: tar.TypeReg},
		{Name: "tsgid", Mode: 0o2755, Size: int64(len(body)), Typeflag: tar.TypeReg},
		{Name: "tdir/", Mode: 0o2755, Typeflag: tar.TypeDir},
	} {
		if err := w.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			w.Write([]byte(body))
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// writeSetidZip writes a zip archive holding a setuid file.
func writeSetidZip(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := zip.NewWriter(f)
	h := &zip.FileHeader{Name: "zsuid", Method: zip.Store}
	h.SetMode(fs.ModeSetuid | 0o755)
	zw, err := w.CreateHeader(h)
	if err != nil {
		t.Fatal(err)
	}
	zw.Write([]byte("#!/bin/sh\nid\n"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

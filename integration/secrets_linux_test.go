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

// secretFiles are credential stores a home directory may hold, each with
// a file inside (for directories) or as itself (for files).
var secretFiles = []string{
	".ssh/id_ed25519",
	".gnupg/private-keys-v1.d/key.key",
	".aws/credentials",
	".azure/accessTokens.json",
	".config/gcloud/credentials.db",
	".kube/config",
	".docker/config.json",
	".netrc",
	".git-credentials",
	".config/gh/hosts.yml",
	".npmrc",
	".pypirc",
	".password-store/bank.gpg",
	".cargo/credentials.toml",
	".vault-token",
	".bash_history",
	".config/git/credentials",
	".local/share/keyrings/login.keyring",
}

// secretRoot is the location forgebox hides for a secret file: its first
// component, or the first two for the ones under .config or .local/share.
func secretRoot(f string) string {
	parts := strings.Split(f, "/")
	switch {
	case len(parts) == 1:
		return f
	case parts[0] == ".config" && len(parts) == 3 && parts[1] == "git":
		return f
	case parts[0] == ".config":
		return filepath.Join(parts[:2]...)
	case parts[0] == ".local":
		return filepath.Join(parts[:3]...)
	case parts[0] == ".cargo":
		return f
	}
	return parts[0]
}

// Credential locations under $HOME show up empty and read-only.
func TestHomeSecretsAreHidden(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		var reads, attacks []string
		before := map[string]snapshot{}
		for _, f := range secretFiles {
			p := filepath.Join(e.home, f)
			e.write(p, "SECRET "+f)
			before[p] = snap(t, p)
			reads = append(reads, "read "+p)
			root := filepath.Join(e.home, secretRoot(f))
			if root == p {
				attacks = append(attacks, "write "+p+" pwned", "append "+p+" pwned", "truncate "+p)
			} else {
				attacks = append(attacks, "readdir "+root, "write "+filepath.Join(root, "planted")+" x", "mkdir "+filepath.Join(root, "planted.d"))
			}
		}
		allowed(t, e.probeHost(reads...)) // the control
		for _, v := range e.probe(nil, reads...) {
			switch {
			case strings.Contains(v.Out, "SECRET"):
				t.Errorf("%s = %q; want the secret hidden", v.call(), v.Out)
			case v.OK && v.Out != "":
				t.Errorf("%s = %q; want empty", v.call(), v.Out)
			case !v.OK:
				// A file inside a hidden directory is gone.
				outcomeIs(t, v, "ENOENT")
			}
		}
		for _, v := range e.probe(nil, attacks...) {
			if v.Op == "readdir" {
				if !v.OK || v.Out != "" {
					t.Errorf("%s = %s %q; want ok and empty", v.call(), v.outcome(), v.Out)
				}
				continue
			}
			// A hidden directory may be a dead one: creating in it
			// fails with ENOENT.
			outcomeIs(t, v, "EROFS", "EACCES", "EPERM", "ENOENT")
		}
		for p, s := range before {
			unchanged(t, p, s)
		}
		_, res := e.runJSON([]string{"--", "true"})
		for _, f := range []string{".ssh", ".aws", ".netrc", ".config/gh"} {
			if p := filepath.Join(e.home, f); res.Enforced == nil || !slices.Contains(res.Enforced.Hidden, p) {
				t.Errorf("enforced.hidden does not list %s", p)
			}
		}
	})
}

// A secret location that is a symlink is hidden at its target.
func TestSymlinkedSecretIsHidden(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		real := filepath.Join(e.outside, "dotfiles", "ssh")
		key := filepath.Join(real, "id_rsa")
		e.write(key, "SECRET KEY")
		link := filepath.Join(e.home, ".ssh")
		if err := os.Symlink(real, link); err != nil {
			t.Fatal(err)
		}
		e.chown(link)
		allowed(t, e.probeHost("read "+filepath.Join(link, "id_rsa")))
		vs := e.probe(nil, "read "+filepath.Join(link, "id_rsa"), "read "+key, "readdir "+real)
		for _, v := range vs {
			if strings.Contains(v.Out, "SECRET") || strings.Contains(v.Out, "id_rsa") {
				t.Errorf("%s = %q; want the secret hidden", v.call(), v.Out)
			}
		}
	})
}

// The account's own home (from the passwd database) is searched too, even
// when $HOME points elsewhere.
func TestPasswdHomeSecretsAreHidden(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		u, err := user.LookupId(strconv.Itoa(e.m.uid))
		if err != nil || u.HomeDir == "" {
			t.Skipf("no passwd home for uid %d", e.m.uid)
		}
		if _, err := os.Stat(u.HomeDir); err != nil {
			t.Skipf("passwd home %s: %v", u.HomeDir, err)
		}
		// Use a secret file the account already has, else plant one for
		// the test's duration.
		p := filepath.Join(u.HomeDir, ".pypirc")
		for _, name := range []string{".npmrc", ".netrc", ".git-credentials", ".pypirc"} {
			if st, err := os.Stat(filepath.Join(u.HomeDir, name)); err == nil && st.Mode().IsRegular() && st.Size() > 0 {
				p = filepath.Join(u.HomeDir, name)
				break
			}
		}
		if _, err := os.Lstat(p); os.IsNotExist(err) {
			if err := os.WriteFile(p, []byte("SECRET password=hunter2"), 0o600); err != nil {
				t.Skipf("cannot place a secret in %s: %v", u.HomeDir, err)
			}
			e.chown(p)
			t.Cleanup(func() { os.Remove(p) })
		}
		host := e.probeHost("read " + p)[0]
		if !host.OK || host.Out == "" {
			t.Skipf("%s is not readable or empty on the host (%s): nothing to hide", p, host.outcome())
		}
		v := e.probe(nil, "read "+p, "write "+p+" pwned")
		if v[0].Out != "" {
			t.Errorf("%s = %q; want empty (HOME=%s, passwd home %s)", v[0].call(), v[0].Out, e.home, u.HomeDir)
		}
		outcomeIs(t, v[1], "EROFS", "EACCES")
	})
}

// /etc/shadow reads empty even for root.
func TestShadowIsHidden(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		host := e.probeHost("read /etc/shadow")[0]
		v := e.probe(nil, "read /etc/shadow")[0]
		if e.m.root() {
			if !host.OK || !strings.Contains(host.Out, "root:") {
				t.Fatalf("control: root cannot read /etc/shadow on the host (%s)", host.outcome())
			}
			if !v.OK || v.Out != "" {
				t.Errorf("%s = %s %q; want ok and empty", v.call(), v.outcome(), v.Out)
			}
			return
		}
		if strings.Contains(v.Out, "root:") {
			t.Errorf("%s = %q; want hidden", v.call(), v.Out)
		}
	})
}

// --hide covers more files and directories the same way.
func TestHideFlag(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		file := filepath.Join(e.outside, "token.txt")
		dir := filepath.Join(e.outside, "vault")
		inWs := filepath.Join(e.ws, ".env")
		e.write(file, "SECRET file")
		e.write(filepath.Join(dir, "key"), "SECRET dir")
		e.write(inWs, "SECRET env")
		before := tree(t, e.dir)
		reads := []string{"read " + file, "read " + filepath.Join(dir, "key"), "readdir " + dir, "read " + inWs}
		allowed(t, e.probeHost(reads...))
		vs := e.probe([]string{"--hide", file, "--hide", dir, "--hide", inWs},
			append(reads, "write "+file+" x", "write "+filepath.Join(dir, "new")+" x", "write "+inWs+" x", "unlink "+inWs)...)
		for _, v := range vs[:4] {
			if strings.Contains(v.Out, "SECRET") || strings.Contains(v.Out, "key") {
				t.Errorf("%s = %q; want hidden", v.call(), v.Out)
			}
		}
		blocked(t, vs[4:], "EROFS", "EBUSY", "EACCES", "ENOENT")
		if after := tree(t, e.dir); after != before {
			t.Errorf("host changed:\nbefore:\n%s\nafter:\n%s", before, after)
		}
	})
}

// The workspace may not lie inside a hidden location: it would either be
// hidden or expose what is hidden.
func TestWorkspaceInsideSecretRefused(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		for _, d := range []string{".ssh/project", ".aws", ".config/gh/repo"} {
			ws := filepath.Join(e.home, d)
			e.mkdir(ws)
			r := e.run([]string{"run", "--workspace", ws, "--", "true"})
			if r.code != 125 {
				t.Errorf("forgebox run --workspace %s: exit %d; want 125\nstderr: %s", ws, r.code, r.stderr)
			}
			forgeboxOnly(t, r.stderr)
		}
	})
}

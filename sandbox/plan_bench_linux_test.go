package sandbox

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The planning below runs on the critical path of every launch (the child
// waits for the plan): these keep its cost visible.

func BenchmarkExistingSecrets(b *testing.B) {
	homes := homeDirs(Spec{Environ: []string{"HOME=" + b.TempDir()}})
	for b.Loop() {
		existingSecrets(secretBases{homes: homes})
	}
}

func BenchmarkHostSockets(b *testing.B) {
	for b.Loop() {
		readHostSockets()
	}
}

func BenchmarkProtect(b *testing.B) {
	ws := b.TempDir()
	mkfileB(b, ws+"/.git/config")
	mkfileB(b, ws+"/.git/hooks/pre-commit.sample")
	for b.Loop() {
		g, err := protect(ws, []string{ws}, treeStore{}, time.Now(), nil)
		if err != nil {
			b.Fatal(err)
		}
		g.release()
	}
}

func BenchmarkPlanView(b *testing.B) {
	ws := b.TempDir()
	s := Spec{Argv: []string{"true"}, Workspace: ws, Dir: ws, Environ: []string{"HOME=" + b.TempDir(), "PATH=/bin"}}
	for b.Loop() {
		p, err := newRun(s, false, 24, 80)
		if err != nil {
			b.Fatal(err)
		}
		if err := p.planView(s, &timeline{}); err != nil {
			b.Fatal(err)
		}
		p.release()
	}
}

func mkfileB(b *testing.B, p string) {
	b.Helper()
	if err := mkdirFile(p); err != nil {
		b.Fatal(err)
	}
}

func mkdirFile(p string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, nil, 0o644)
}

// developerHome plants what a developer's home typically holds: keys, a
// few cloud and registry credentials, a browser profile and histories.
func developerHome(b *testing.B) string {
	home := b.TempDir()
	for _, f := range []string{".ssh/id_ed25519", ".gnupg/pubring.kbx", ".aws/credentials", ".config/gcloud/credentials.db",
		".kube/config", ".docker/config.json", ".netrc", ".git-credentials", ".config/gh/hosts.yml", ".npmrc",
		".pypirc", ".cargo/credentials.toml", ".pgpass", ".my.cnf", ".config/rclone/rclone.conf",
		".config/github-copilot/hosts.json", ".mozilla/firefox/profiles.ini", ".config/google-chrome/Local State",
		".claude/.credentials.json", ".codex/auth.json", ".bash_history", ".python_history", ".m2/settings.xml",
		".gradle/gradle.properties", ".local/share/keyrings/login.keyring"} {
		mkfileB(b, filepath.Join(home, f))
	}
	return home
}

func BenchmarkExistingSecretsDeveloperHome(b *testing.B) {
	homes := homeDirs(Spec{Environ: []string{"HOME=" + developerHome(b)}})
	for b.Loop() {
		existingSecrets(secretBases{homes: homes})
	}
}

func BenchmarkPlanViewDeveloperHome(b *testing.B) {
	ws := b.TempDir()
	s := Spec{Argv: []string{"true"}, Workspace: ws, Dir: ws, Environ: []string{"HOME=" + developerHome(b), "PATH=/bin"}}
	for b.Loop() {
		p, err := newRun(s, false, 24, 80)
		if err != nil {
			b.Fatal(err)
		}
		if err := p.planView(s, &timeline{}); err != nil {
			b.Fatal(err)
		}
		p.release()
	}
}

// BenchmarkOtherNames is what looking up the other paths of the secrets
// and sockets adds to a launch: the mount table read and the lookups.
func BenchmarkOtherNames(b *testing.B) {
	secrets := existingSecrets(secretBases{homes: []string{developerHome(b)}})
	sockets, _ := readHostSockets()
	for b.Loop() {
		otherNames(secrets, nil, sockets, readMountinfo())
	}
}

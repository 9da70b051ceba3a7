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
		existingSecrets(homes)
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
		g, err := protect(ws, []string{ws}, treeStore{}, time.Now())
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

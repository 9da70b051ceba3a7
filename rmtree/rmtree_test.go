package rmtree

import (
	"os"
	"path/filepath"
	"testing"
)

// A tree of mode-0 and read-only directories, nested, with a symlink to a
// directory outside it: All removes the tree and leaves the outside alone.
func TestAllRemovesProtectedTrees(t *testing.T) {
	if os.Getuid() == 0 {
		t.Log("as root, modes do not stop the removal; the test still checks the symlink is not followed")
	}
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	tree := filepath.Join(base, "tree")
	for _, d := range []string{outside, filepath.Join(tree, "a/b/c"), filepath.Join(tree, "ro/x")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(outside, "keep"), []byte("k"), 0o644)
	os.WriteFile(filepath.Join(tree, "a/b/c/f"), []byte("f"), 0o644)
	os.WriteFile(filepath.Join(tree, "ro/x/f"), []byte("f"), 0o444)
	os.Symlink(outside, filepath.Join(tree, "a/link"))
	for _, d := range []string{"a/b/c", "a/b", "a"} {
		os.Chmod(filepath.Join(tree, d), 0)
	}
	os.Chmod(filepath.Join(tree, "ro/x"), 0o555)
	os.Chmod(filepath.Join(tree, "ro"), 0o555)
	if err := All(tree); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(tree); !os.IsNotExist(err) {
		t.Errorf("the tree is still there: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(outside, "keep")); err != nil || string(b) != "k" {
		t.Errorf("the directory a symlink named was touched: %q %v", b, err)
	}
	if err := All(filepath.Join(base, "missing")); err != nil {
		t.Errorf("a missing tree: %v", err)
	}
}

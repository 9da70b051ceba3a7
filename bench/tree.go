package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// treeBench measures what the post-run check of the workspace costs: the
// same `forgebox run -- /bin/true` in an empty workspace and in one of
// files files shaped like a JavaScript project (node_modules included),
// against a baseline binary (an earlier commit) and bwrap in the same run.
func treeBench(bin, baseline string, files, n int) {
	big, err := os.MkdirTemp("", "forgebox-bench-tree-")
	if err != nil {
		fail(err.Error())
	}
	defer os.RemoveAll(big)
	made := makeTree(big, files)
	empty, err := os.MkdirTemp("", "forgebox-bench-empty-")
	if err != nil {
		fail(err.Error())
	}
	defer os.RemoveAll(empty)
	bwrap := []string{"bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "/bin/true"}
	for _, ws := range []struct{ name, dir string }{{"empty workspace", empty}, {fmt.Sprintf("workspace of %d files in %d directories", made.files, made.dirs), big}} {
		fmt.Printf("\npost-run check, %s, %d interleaved pairs\n", ws.name, n)
		// The first run in a workspace indexes it.
		timeRun(ws.dir, []string{bin, "run", "--no-policy", "--", "/bin/true"})
		if baseline != "" {
			compare(ws.dir, n, "forgebox run -- /bin/true", []string{bin, "run", "--no-policy", "--", "/bin/true"},
				"baseline run -- /bin/true", []string{baseline, "run", "--no-policy", "--", "/bin/true"})
		}
		compare(ws.dir, n, "forgebox run -- /bin/true", []string{bin, "run", "--no-policy", "--", "/bin/true"}, "bwrap", bwrap)
	}
}

type treeSize struct{ files, dirs int }

// makeTree writes about files small files: 90% in node_modules packages
// of twelve directories each, the rest in src/.
func makeTree(root string, files int) treeSize {
	var s treeSize
	write := func(dir string, k int) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fail(err.Error())
		}
		s.dirs++
		for i := 0; i < k; i++ {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.js", i)), []byte("x"), 0o644); err != nil {
				fail(err.Error())
			}
			s.files++
		}
	}
	for p := 0; s.files < files*9/10; p++ {
		for d := 0; d < 12; d++ {
			write(filepath.Join(root, "node_modules", fmt.Sprintf("pkg%d", p), "lib", fmt.Sprintf("d%d", d)), 10)
		}
	}
	for m := 0; s.files < files; m++ {
		write(filepath.Join(root, "src", fmt.Sprintf("mod%d", m)), 40)
	}
	return s
}

package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The undo figures (issue 22): what keeping a run undoable costs on a
// workspace of 100,000 files, with nothing changed and with 1,000 files
// changed, in interleaved pairs with --no-undo; make bench runs it
// (-undo=false skips it):
//
//	go run ./bench -forgebox bin/forgebox [-undo-n 40] [-undo-files 100000]
var (
	undoOn    = flag.Bool("undo", true, "measure undo's cost on a 100,000-file workspace (nothing changed, 1,000 files changed) against --no-undo")
	undoN     = flag.Int("undo-n", 40, "interleaved pairs per undo figure")
	undoFiles = flag.Int("undo-files", 100000, "files in the undo bench's workspace")
)

// undoBench builds the workspace (400 directories of files, as a
// node_modules) and its state directory side by side in a temporary
// directory (one file system: a commit is rename(2)), then times
// `forgebox run` of a command that changes nothing and of one that
// rewrites 1,000 files, each with undo and with --no-undo, interleaved.
func undoBench(bin string, n, files int) {
	bin, err := filepath.Abs(bin)
	if err != nil {
		fail(err.Error())
	}
	base, err := os.MkdirTemp("", "forgebox-undo-bench-")
	if err != nil {
		fail(err.Error())
	}
	defer os.RemoveAll(base)
	ws, state := filepath.Join(base, "ws"), filepath.Join(base, "state")
	const dirs = 400
	per := (files + dirs - 1) / dirs
	made := 0
	for d := 0; d < dirs && made < files; d++ {
		dir := filepath.Join(ws, "node_modules", fmt.Sprintf("p%d", d), "lib")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fail(err.Error())
		}
		for f := 0; f < per && made < files; f++ {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.js", f)), []byte(fmt.Sprintf("module.exports = %d\n", made)), 0o644); err != nil {
				fail(err.Error())
			}
			made++
		}
	}
	if err := os.MkdirAll(state, 0o700); err != nil {
		fail(err.Error())
	}
	env := append(os.Environ(), "XDG_STATE_HOME="+state, "FORGEBOX_UNDO=on")
	run := func(undo bool, line string) float64 {
		argv := []string{bin, "run", "--no-policy", "--no-history"}
		if !undo {
			argv = append(argv, "--no-undo")
		}
		cmd := exec.Command(bin, append(argv[1:], "-c", line)...)
		cmd.Dir, cmd.Env = ws, env
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil || strings.Contains(string(out), "no undo") {
			fail(fmt.Sprintf("%s -c %q: %v\n%s", strings.Join(argv, " "), line, err, out))
		}
		return float64(time.Since(start).Microseconds()) / 1000
	}
	// 1,000 files rewritten: the first file of 1,000/400 directories...
	// spread over the tree.
	var change strings.Builder
	change.WriteString("for d in $(seq 0 399); do for f in 0 1 2; do ")
	change.WriteString(`[ $((d*3+f)) -lt 1000 ] && echo changed > node_modules/p$d/lib/f$f.js; done; done; true`)
	cases := []struct{ name, line string }{
		{"nothing changed (/bin/true)", "/bin/true"},
		{"1,000 files rewritten", change.String()},
	}
	fmt.Printf("\nundo, %d files in the workspace, %d interleaved pairs each, forgebox run with undo and with --no-undo\n", made, n)
	for _, c := range cases {
		const warmup = 3
		var with, without, diff []float64
		for i := 0; i < n+warmup; i++ {
			var a, b float64
			if i%2 == 0 {
				a, b = run(true, c.line), run(false, c.line)
			} else {
				b, a = run(false, c.line), run(true, c.line)
			}
			if i >= warmup {
				with, without, diff = append(with, a), append(without, b), append(diff, a-b)
			}
		}
		fmt.Printf("  %s\n", c.name)
		fmt.Printf("    undo       median %7.2f ms  p90 %7.2f ms\n", pct(with, 50), pct(with, 90))
		fmt.Printf("    --no-undo  median %7.2f ms  p90 %7.2f ms\n", pct(without, 50), pct(without, 90))
		fmt.Printf("    added: median of pair differences %+.2f ms (goal for nothing changed: < 5 ms), ratio of medians %.2f\n",
			pct(diff, 50), pct(with, 50)/pct(without, 50))
	}
}

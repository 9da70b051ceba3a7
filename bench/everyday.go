package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/forgebox/forgebox/integration/everyday"
)

// everydayBench builds and tests the everyday projects (the integration
// suite's, see integration/everyday) under `forgebox run --no-policy -c`
// and directly, in interleaved pairs that alternate who goes first, each
// from its sources again (Project.Outputs removed) but with the caches of
// one scratch home warm: a warm-up round fills them (for Go that is a
// cold build of the standard library, a minute of CPU; the caller's own
// caches are left alone, since the stand-in dependencies would land in
// them). Under forgebox the caches are the sandbox's view of that home;
// a run that fails is reported and its project skipped. The goal is a
// forgebox/direct ratio of at most 1.1. The judge is left out (it asks
// before npm install and cargo build); its cost is the policy figure.
func everydayBench(bin string, rounds int) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		fmt.Printf("\neveryday projects: skipped, no go on PATH\n")
		return
	}
	// Not in /tmp: inside the sandbox /tmp, /var/tmp and /dev/shm are
	// private, so a home there would be a new empty one, not the warm
	// host home under test. The current directory (make bench runs in the
	// checkout) is seen as on the host.
	scratch, err := os.MkdirTemp(".", ".bench-everyday-")
	if err == nil {
		scratch, err = filepath.Abs(scratch)
	}
	if err != nil {
		fail(err.Error())
	}
	for _, private := range []string{"/tmp", "/var/tmp", "/dev/shm"} {
		if strings.HasPrefix(scratch, private+"/") {
			fail("the everyday bench needs a current directory outside " + private + ", which is private inside the sandbox")
		}
	}
	defer func() {
		// Go's module cache is read-only.
		exec.Command("chmod", "-R", "u+w", scratch).Run()
		os.RemoveAll(scratch)
	}()
	home := filepath.Join(scratch, "home")
	env := []string{"HOME=" + home, "PATH=" + filepath.Dir(goBin) + ":" + everyday.SystemPath, "LANG=C.UTF-8"}
	fmt.Printf("\neveryday projects: build and test offline, %d interleaved pairs after a warm-up, warm caches, medians\n", rounds)
	for _, p := range everyday.Projects() {
		if missing := missingTools(env, p.Tools); missing != "" {
			fmt.Printf("  %-7s skipped: %s not found on %s\n", p.Name, missing, everyday.SystemPath)
			continue
		}
		dir := filepath.Join(scratch, p.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fail(err.Error())
		}
		if err := os.MkdirAll(home, 0o755); err != nil {
			fail(err.Error())
		}
		if err := p.Write(dir); err != nil {
			fail(err.Error())
		}
		direct := []string{"bash", "-c", p.Command}
		boxed := []string{bin, "run", "--no-policy", "-c", p.Command}
		var td, tb, ratio []float64
		failed := ""
		for i := 0; i <= rounds && failed == ""; i++ {
			var d, b float64
			if i%2 == 0 {
				d, _ = everydayRun(dir, env, p, direct)
				b, failed = everydayRun(dir, env, p, boxed)
			} else {
				b, failed = everydayRun(dir, env, p, boxed)
				d, _ = everydayRun(dir, env, p, direct)
			}
			if i > 0 { // the warm-up fills the caches
				td, tb, ratio = append(td, d), append(tb, b), append(ratio, b/d)
			}
		}
		if failed != "" {
			fmt.Printf("  %-7s forgebox run failed: %s\n", p.Name, failed)
			continue
		}
		fmt.Printf("  %-7s direct %6.2f s  forgebox %6.2f s  ratio: of medians %.3f, median of pairs %.3f (goal <= 1.1)\n",
			p.Name, pct(td, 50), pct(tb, 50), pct(tb, 50)/pct(td, 50), pct(ratio, 50))
	}
}

// everydayRun cleans the project's outputs and runs argv in it, returning
// the seconds it took; a failure of the direct run ends the bench, one
// under forgebox is returned as its last lines of output.
func everydayRun(dir string, env []string, p everyday.Project, argv []string) (float64, string) {
	if err := p.Clean(dir); err != nil {
		fail(err.Error())
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start).Seconds()
	if err == nil && !strings.Contains(out.String(), p.Want) {
		err = fmt.Errorf("%q missing from the output", p.Want)
	}
	if err == nil {
		return took, ""
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	tail := strings.Join(lines[max(0, len(lines)-3):], " | ")
	if argv[0] == "bash" {
		fail(fmt.Sprintf("%s project without a sandbox: %v: %s", p.Name, err, tail))
	}
	return took, fmt.Sprintf("%v: %s", err, tail)
}

// missingTools names the first tool not on env's PATH, or "".
func missingTools(env []string, tools []string) string {
	for _, t := range tools {
		cmd := exec.Command("sh", "-c", "command -v "+t)
		cmd.Env = env
		if cmd.Run() != nil {
			return t
		}
	}
	return ""
}

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// corpusBench prints the judge's figures on the corpus of command lines
// other projects label (policy/testdata/corpus): how many of the dangerous
// lines it allows and of the harmless ones it asks about, per source and
// per category, as TestCorpus computes them (the scoring lives there
// alone, so it runs the test); then the judge's speed over the corpus
// lines, in process (BenchmarkCorpus) and through forgebox check --batch.
func corpusBench(bin, dir string, lines, rounds int) {
	fmt.Printf("\ncorpus, %s (go test ./policy -run TestCorpus -v)\n", dir)
	cmd := exec.Command("go", "test", "-count=1", "-run", "^TestCorpus$", "-v", "./policy")
	out, err := cmd.CombinedOutput()
	table := corpusTable(out)
	if table == "" {
		fail(fmt.Sprintf("go test -run TestCorpus printed no table (%v):\n%s", err, out))
	}
	fmt.Print(table)
	if err != nil {
		// The figures are still worth reading: say that they regressed
		// and go on with the speed.
		fmt.Printf("  REGRESSION: TestCorpus fails (%v):\n%s", err, failures(out))
	}
	inProcess()
	judgeSpeed(bin, "the labelled corpus", loadCorpusLines(dir), lines, rounds)
}

// inProcess prints the judge's speed over the corpus without the process
// and the pipe: BenchmarkCorpus on one core.
func inProcess() {
	cmd := exec.Command("go", "test", "-run", "^$", "-bench", "^BenchmarkCorpus$", "-cpu", "1", "-benchtime", "100000x", "./policy")
	out, err := cmd.CombinedOutput()
	if err != nil {
		fail(fmt.Sprintf("go test -bench BenchmarkCorpus: %v\n%s", err, out))
	}
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) < 9 || !strings.HasPrefix(f[0], "BenchmarkCorpus") {
			continue
		}
		under := "?"
		if len(f) >= 11 {
			under = f[10]
		}
		fmt.Printf("  in process, one core  %8s decisions/s  p50 %s µs  p99 %s µs, %s µs for the lines under 1 KB  (goal >= 50000/s, p99 < 100 µs)\n", f[4], f[6], f[8], under)
		return
	}
	fail(fmt.Sprintf("go test -bench BenchmarkCorpus printed no figures:\n%s", out))
}

// corpusTable is the table TestCorpus logs, without go test's prefixes.
func corpusTable(out []byte) string {
	var b strings.Builder
	in := false
	for _, l := range strings.Split(string(out), "\n") {
		t := strings.TrimSpace(l)
		switch {
		case strings.Contains(l, "corpus of ") && strings.Contains(l, "sandbox:"):
			in = true
			b.WriteString("  " + t[strings.Index(t, "corpus of "):] + "\n")
		case in && (t == "" || strings.HasPrefix(t, "---") || strings.HasPrefix(t, "===") || strings.Contains(l, "corpus_test.go:")):
			in = false
		case in:
			b.WriteString("    " + strings.TrimPrefix(l, "        ") + "\n")
		}
	}
	return b.String()
}

// failures are the error lines of a failed TestCorpus.
func failures(out []byte) string {
	var b strings.Builder
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "recorded") || strings.Contains(l, "FAIL") {
			b.WriteString("    " + strings.TrimSpace(l) + "\n")
		}
	}
	return b.String()
}

// loadCorpusLines reads the command lines of every source of the corpus,
// each as a line of --batch input (a JSON string, which holds any line,
// here-documents included).
func loadCorpusLines(dir string) []string {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil || len(files) == 0 {
		fail(fmt.Sprintf("no corpus files in %s", dir))
	}
	var mix []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			fail(fmt.Sprintf("read the corpus: %v", err))
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for n := 1; sc.Scan(); n++ {
			var l struct {
				Line string `json:"line"`
			}
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				fail(fmt.Sprintf("%s:%d: %v", f, n, err))
			}
			enc, _ := json.Marshal(l.Line)
			mix = append(mix, string(enc))
		}
	}
	return mix
}

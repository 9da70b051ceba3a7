package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// policyBench measures the judge through `forgebox check --batch`, pinned
// to one core where taskset exists: throughput over a mix of agent command
// lines (goal: 50,000 decisions/s), and the round trip of one line at a
// time, as a harness that waits for each answer sees it (goal: p99 under
// 100 µs, pipe wake-ups included).
func policyBench(bin, mixFile string, lines, rounds int) {
	mix := loadMix(mixFile)
	judgeSpeed(bin, fmt.Sprintf("a %d-line agent mix", len(mix)), mix, lines, rounds)
}

// judgeSpeed prints the judge's throughput over lines taken in turn from
// mix (each a line of --batch input), and its one-line-at-a-time latency.
func judgeSpeed(bin, what string, mix []string, lines, rounds int) {
	var in bytes.Buffer
	for i := 0; i < lines; i++ {
		in.WriteString(mix[i%len(mix)])
		in.WriteByte('\n')
	}
	argv := []string{bin, "check", "--batch"}
	if _, err := exec.LookPath("taskset"); err == nil {
		argv = append([]string{"taskset", "-c", "0"}, argv...)
	}
	fmt.Printf("\npolicy, %s: %d lines of %s (%d KiB), median of %d rounds\n",
		strings.Join(argv, " "), lines, what, in.Len()>>10, rounds)
	var rates []float64
	for range rounds {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdin = bytes.NewReader(in.Bytes())
		var out bytes.Buffer
		cmd.Stdout = &out
		cmd.Stderr = os.Stderr
		start := time.Now()
		if err := cmd.Run(); err != nil {
			fail(fmt.Sprintf("forgebox check --batch: %v", err))
		}
		took := time.Since(start)
		if n := bytes.Count(out.Bytes(), []byte("\n")); n != lines {
			fail(fmt.Sprintf("forgebox check --batch answered %d lines for %d", n, lines))
		}
		rates = append(rates, float64(lines)/took.Seconds())
	}
	fmt.Printf("  throughput          %8.0f decisions/s  (goal >= 50000/s; process start included)\n", pct(rates, 50))

	cmd := exec.Command(argv[0], argv[1:]...)
	w, err := cmd.StdinPipe()
	if err != nil {
		fail(err.Error())
	}
	r, err := cmd.StdoutPipe()
	if err != nil {
		fail(err.Error())
	}
	if err := cmd.Start(); err != nil {
		fail(err.Error())
	}
	br := bufio.NewReader(r)
	var lat []float64
	for i := 0; i < 4000; i++ {
		start := time.Now()
		if _, err := io.WriteString(w, mix[i%len(mix)]+"\n"); err != nil {
			fail(err.Error())
		}
		if _, err := br.ReadBytes('\n'); err != nil {
			fail(fmt.Sprintf("forgebox check --batch: %v", err))
		}
		if i >= 200 { // after the warm-up
			lat = append(lat, float64(time.Since(start).Microseconds()))
		}
	}
	w.Close()
	cmd.Wait()
	fmt.Printf("  one line at a time  p50 %5.0f µs  p99 %5.0f µs  (goal: p99 < 100 µs; a pipe round trip included)\n", pct(lat, 50), pct(lat, 99))
}

// loadMix reads the agent mix (a JSON list of command lines) as lines of
// --batch input: a command spanning lines (a here-document) is sent as one
// JSON string.
func loadMix(file string) []string {
	b, err := os.ReadFile(file)
	if err != nil {
		fail(fmt.Sprintf("read the agent mix: %v", err))
	}
	var all, mix []string
	if err := json.Unmarshal(b, &all); err != nil {
		fail(fmt.Sprintf("%s: %v", file, err))
	}
	for _, l := range all {
		if strings.Contains(l, "\n") {
			b, _ := json.Marshal(l)
			l = string(b)
		}
		mix = append(mix, l)
	}
	return mix
}

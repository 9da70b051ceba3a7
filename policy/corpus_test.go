package policy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var updateThresholds = flag.Bool("corpus-thresholds", false, "rewrite testdata/corpus/thresholds.json to the figures measured now")

const corpusDir = "testdata/corpus"

// corpusCategories are the kinds of program a corpus line is filed under
// (see testdata/corpus/README.md).
var corpusCategories = []string{"shell", "file", "git", "interpreter", "package", "network", "cloud", "unknown"}

// knownCategories are the programs the judge is expected to know: the
// issue's goal for dangerous lines allowed (at most 1%) is set on them.
var knownCategories = []string{"shell", "file", "git", "interpreter"}

// corpusModes are the sandboxes the corpus is scored under. Each sets
// what differs on the judge's Context from the default sandbox's; the
// thresholds file has one section per mode, and a mode without one fails
// until its figures are recorded (-corpus-thresholds).
var corpusModes = []corpusMode{
	// forgebox run's default: no network, only the workspace writable,
	// and undo keeps what the run changes there.
	{"default", func(c *Context) {
		c.Sandbox = Containment{Contained: true, How: "the sandbox", PrivateTmp: true, Undo: true}
	}},
	// The same with --no-undo: what destroys workspace content is asked.
	{"no-undo", func(c *Context) { c.Sandbox = Containment{Contained: true, How: "the sandbox", PrivateTmp: true} }},
	// A run that reaches out (--net host): nothing contains the network.
	{"net-host", func(c *Context) { c.Sandbox = Containment{How: "--net host", PrivateTmp: true, Undo: true} }},
}

type corpusMode struct {
	name string
	set  func(*Context)
}

// corpusLine is one labelled command line of another project.
type corpusLine struct {
	Line        string `json:"line"`
	Label       string `json:"label"`        // the source's own verdict: dangerous or harmless
	SourceLabel string `json:"source_label"` // the source's words for it
	Category    string `json:"category"`
	From        string `json:"from"`           // the file of the source it was taken from
	Ours        string `json:"ours,omitempty"` // our label, where we disagree with the source's
	Note        string `json:"note,omitempty"` // why we disagree

	source string // the corpus file (without .jsonl)
}

// dangerous is the label the line is scored by: ours where we disagree.
func (l corpusLine) dangerous() bool {
	if l.Ours != "" {
		return l.Ours == "dangerous"
	}
	return l.Label == "dangerous"
}

// loadCorpus reads every source file of the corpus; a malformed line
// fails the test rather than being skipped, so that the figures always
// cover the whole corpus.
func loadCorpus(t testing.TB) []corpusLine {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus files in %s (%v)", corpusDir, err)
	}
	var all []corpusLine
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		source := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for n := 1; sc.Scan(); n++ {
			var l corpusLine
			dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&l); err != nil {
				t.Fatalf("%s:%d: %v", f, n, err)
			}
			if err := l.check(); err != nil {
				t.Fatalf("%s:%d: %v", f, n, err)
			}
			l.source = source
			all = append(all, l)
		}
		if err := sc.Err(); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	return all
}

func (l corpusLine) check() error {
	labels := []string{"dangerous", "harmless"}
	switch {
	case !slices.Contains(labels, l.Label):
		return fmt.Errorf("label %q is neither dangerous nor harmless", l.Label)
	case l.Ours != "" && !slices.Contains(labels, l.Ours):
		return fmt.Errorf("ours %q is neither dangerous nor harmless", l.Ours)
	case l.Ours == l.Label:
		return fmt.Errorf("ours repeats the source's label %q: leave it out", l.Label)
	case (l.Ours == "") != (l.Note == ""):
		return fmt.Errorf("ours and note go together: a disagreement says why")
	case !slices.Contains(corpusCategories, l.Category):
		return fmt.Errorf("category %q is not one of %v", l.Category, corpusCategories)
	case l.SourceLabel == "" || l.From == "":
		return fmt.Errorf("source_label and from are required")
	}
	return nil
}

// corpusFigures are the two error rates of one group of lines, in percent.
type corpusFigures struct {
	DangerousAllowed float64 `json:"dangerous_allowed_pct"` // of the dangerous lines, allowed
	// Of the dangerous lines, allowed without the sandbox containing them
	// (Decision.Contained false): what the 1% goal counts. A push or a
	// download allowed because the default sandbox has no network is
	// contained; an rm -rf of the workspace's sources is not.
	DangerousUncontained float64 `json:"dangerous_allowed_not_contained_pct"`
	HarmlessAsked        float64 `json:"harmless_asked_pct"` // of the harmless lines, asked about or denied
}

// corpusModeFigures are a mode's figures for the whole corpus, per source
// and per category.
type corpusModeFigures struct {
	Total      corpusFigures            `json:"total"`
	Known      corpusFigures            `json:"shell_file_git_interpreter"`
	Sources    map[string]corpusFigures `json:"sources"`
	Categories map[string]corpusFigures `json:"categories"`
}

// corpusTally counts the verdicts on one group of lines.
type corpusTally struct {
	dangerous, dangerousAllowed, dangerousUncontained int
	harmless, harmlessAsked                           int
}

func (c *corpusTally) add(l corpusLine, d *Decision) {
	if l.dangerous() {
		c.dangerous++
		if d.Action == Allow {
			c.dangerousAllowed++
			if !d.Contained {
				c.dangerousUncontained++
			}
		}
		return
	}
	c.harmless++
	if d.Action != Allow {
		c.harmlessAsked++
	}
}

func percent(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return math.Round(10000*float64(n)/float64(of)) / 100
}

func (c corpusTally) figures() corpusFigures {
	return corpusFigures{percent(c.dangerousAllowed, c.dangerous), percent(c.dangerousUncontained, c.dangerous), percent(c.harmlessAsked, c.harmless)}
}

func (c corpusTally) row(name string) string {
	f := c.figures()
	return fmt.Sprintf("%-26s %5d dangerous %5d allowed %6.2f%% (not contained %4d %6.2f%%)   %5d harmless %5d asked/denied %6.2f%%",
		name, c.dangerous, c.dangerousAllowed, f.DangerousAllowed, c.dangerousUncontained, f.DangerousUncontained, c.harmless, c.harmlessAsked, f.HarmlessAsked)
}

// scoreCorpus judges every line under ctx and tallies the verdicts; the
// table is what -v prints, and missed lists the dangerous shell, file, git
// and interpreter lines allowed (the ones the 1% goal counts).
func scoreCorpus(e *Engine, ctx Context, lines []corpusLine) (figs corpusModeFigures, table string, missed []string) {
	var total, known corpusTally
	bySource, byCategory := map[string]*corpusTally{}, map[string]*corpusTally{}
	for _, l := range lines {
		c := ctx // every line starts from the same context
		d := e.DecideLine(&c, l.Line)
		total.add(l, d)
		if slices.Contains(knownCategories, l.Category) {
			known.add(l, d)
			if d.Action == Allow && !d.Contained && l.dangerous() {
				missed = append(missed, fmt.Sprintf("%s (%s): %q", l.source, l.Category, l.Line))
			}
		}
		for key, m := range map[string]map[string]*corpusTally{l.source: bySource, l.Category: byCategory} {
			if m[key] == nil {
				m[key] = &corpusTally{}
			}
			m[key].add(l, d)
		}
	}
	figs = corpusModeFigures{Total: total.figures(), Known: known.figures(), Sources: map[string]corpusFigures{}, Categories: map[string]corpusFigures{}}
	var tab strings.Builder
	tab.WriteString(total.row("all") + "\n")
	tab.WriteString(known.row("shell+file+git+interpreter") + "\n")
	for _, group := range []struct {
		title string
		m     map[string]*corpusTally
		out   map[string]corpusFigures
	}{{"per source", bySource, figs.Sources}, {"per category", byCategory, figs.Categories}} {
		tab.WriteString(group.title + ":\n")
		keys := make([]string, 0, len(group.m))
		for k := range group.m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			group.out[k] = group.m[k].figures()
			tab.WriteString("  " + group.m[k].row(k) + "\n")
		}
	}
	return figs, tab.String(), missed
}

// TestCorpus scores the default policy on command lines other projects
// label dangerous or harmless, and fails when a figure gets worse than
// the one recorded in testdata/corpus/thresholds.json. The recorded
// figures are a floor to raise: after a change that improves them, run
// go test ./policy -run TestCorpus -corpus-thresholds and commit the file.
func TestCorpus(t *testing.T) {
	lines := loadCorpus(t)
	e := New(Default())
	const thresholdsFile = corpusDir + "/thresholds.json"
	recorded := map[string]corpusModeFigures{}
	if !*updateThresholds {
		b, err := os.ReadFile(thresholdsFile)
		if err != nil {
			t.Fatalf("%v (run go test ./policy -run TestCorpus -corpus-thresholds)", err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&recorded); err != nil {
			t.Fatalf("%s: %v", thresholdsFile, err)
		}
	}
	measured := map[string]corpusModeFigures{}
	for _, mode := range corpusModes {
		ctx := Context{Workspace: "/home/u/proj", Cwd: "/home/u/proj", Home: "/home/u", TempDirs: []string{"/tmp", "/var/tmp"}}
		mode.set(&ctx)
		figs, table, missed := scoreCorpus(e, ctx, lines)
		t.Logf("corpus of %d lines, %s sandbox:\n%s", len(lines), mode.name, table)
		t.Logf("%s sandbox: the %d dangerous shell, file, git and interpreter lines allowed and not contained:\n%s", mode.name, len(missed), strings.Join(missed, "\n"))
		measured[mode.name] = figs
		if mode.name == "default" {
			// The goals, under the default sandbox: at most 1% of
			// the dangerous shell, file, git and interpreter lines allowed
			// where the sandbox does not contain them, and at most 10% of
			// the harmless lines asked about.
			if figs.Known.DangerousUncontained > 1 {
				t.Errorf("default sandbox: %.2f%% of the dangerous shell, file, git and interpreter lines allowed and not contained; the goal is 1%%", figs.Known.DangerousUncontained)
			}
			if figs.Total.HarmlessAsked > 10 || figs.Known.HarmlessAsked > 10 {
				t.Errorf("default sandbox: %.2f%% (all) and %.2f%% (shell, file, git, interpreter) of the harmless lines asked about; the goal is 10%%", figs.Total.HarmlessAsked, figs.Known.HarmlessAsked)
			}
		}
		if *updateThresholds {
			continue
		}
		want, ok := recorded[mode.name]
		if !ok {
			t.Errorf("%s has no figures for the %s mode: record them with -corpus-thresholds", thresholdsFile, mode.name)
			continue
		}
		compareFigures(t, mode.name+" all", figs.Total, want.Total)
		compareFigures(t, mode.name+" shell, file, git and interpreter lines", figs.Known, want.Known)
		for _, group := range []struct {
			kind      string
			got, want map[string]corpusFigures
		}{{"source", figs.Sources, want.Sources}, {"category", figs.Categories, want.Categories}} {
			for k, got := range group.got {
				w, ok := group.want[k]
				if !ok {
					t.Errorf("%s: %s %q has no recorded figures: record them with -corpus-thresholds", mode.name, group.kind, k)
					continue
				}
				compareFigures(t, mode.name+" "+group.kind+" "+k, got, w)
			}
			for k := range group.want {
				if _, ok := group.got[k]; !ok {
					t.Errorf("%s: %s %q is recorded but has no lines any more: remove it from %s", mode.name, group.kind, k, thresholdsFile)
				}
			}
		}
	}
	for name := range recorded {
		if !slices.ContainsFunc(corpusModes, func(m corpusMode) bool { return m.name == name }) {
			t.Errorf("%s records a mode %q the test does not score", thresholdsFile, name)
		}
	}
	if *updateThresholds {
		b, err := json.MarshalIndent(measured, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(thresholdsFile, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func compareFigures(t *testing.T, what string, got, want corpusFigures) {
	t.Helper()
	if got.DangerousAllowed > want.DangerousAllowed {
		t.Errorf("%s: %.2f%% of the dangerous lines allowed, recorded %.2f%%", what, got.DangerousAllowed, want.DangerousAllowed)
	}
	if got.DangerousUncontained > want.DangerousUncontained {
		t.Errorf("%s: %.2f%% of the dangerous lines allowed and not contained, recorded %.2f%%", what, got.DangerousUncontained, want.DangerousUncontained)
	}
	if got.HarmlessAsked > want.HarmlessAsked {
		t.Errorf("%s: %.2f%% of the harmless lines asked about or denied, recorded %.2f%%", what, got.HarmlessAsked, want.HarmlessAsked)
	}
}

// BenchmarkCorpus measures decisions per second over the corpus lines and
// the latency of single decisions, in process (the goal: 50,000/s
// on one core, p99 under 100 µs). Run with -cpu 1 for the one-core figure.
func BenchmarkCorpus(b *testing.B) {
	corpus := loadCorpus(b)
	lines := make([]string, len(corpus))
	for i, l := range corpus {
		lines[i] = l.Line
	}
	benchDecide(b, New(Default()), lines)
}

package policy

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// TestGoldenDecisions renders the decisions on testdata/golden/lines.json
// as people read them; go test -update rewrites the golden file after a
// deliberate change, and the diff shows what the change did.
func TestGoldenDecisions(t *testing.T) {
	b, err := os.ReadFile("testdata/golden/lines.json")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	if err := json.Unmarshal(b, &lines); err != nil {
		t.Fatal(err)
	}
	e := New(nil)
	var out strings.Builder
	for _, l := range lines {
		renderDecision(&out, e.DecideLine(testCtx, l))
	}
	const golden = "testdata/golden/decisions.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./policy -run Golden -update)", err)
	}
	if got := out.String(); got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("%s differs at line %d:\n got: %s\nwant: %s\n(run go test ./policy -run Golden -update after a deliberate change)", golden, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s differs in length: got %d lines, want %d", golden, len(gl), len(wl))
	}
}

func renderDecision(w *strings.Builder, d *Decision) {
	fmt.Fprintf(w, "$ %s\n", strings.ReplaceAll(d.Command, "\n", "\n  "))
	fmt.Fprintf(w, "= %s risk %d %s %s", d.Action, d.Risk, d.Level, d.Category)
	if d.Interactive {
		w.WriteString(" interactive")
	}
	if d.Rule != nil {
		fmt.Fprintf(w, " [%s]", d.Rule)
	}
	if len(d.Scopes) > 0 {
		fmt.Fprintf(w, " scopes %v", d.Scopes)
	}
	w.WriteString("\n")
	for _, j := range d.Commands {
		fmt.Fprintf(w, "  %s- %s: %s %d %s", strings.Repeat("  ", j.Depth), strings.ReplaceAll(j.Command, "\n", `\n`), j.Action, j.Risk, j.Category)
		for _, r := range j.Reasons {
			fmt.Fprintf(w, "; %s", r)
		}
		w.WriteString("\n")
	}
	w.WriteString("\n")
}

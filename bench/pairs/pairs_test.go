package pairs

import (
	"os/exec"
	"testing"
)

func TestPercentile(t *testing.T) {
	for _, tt := range []struct {
		v    []float64
		p    int
		want float64
	}{
		{nil, 50, 0},
		{[]float64{3}, 50, 3},
		{[]float64{5, 1, 3}, 50, 3},
		{[]float64{4, 1, 3, 2}, 50, 3},
		{[]float64{4, 1, 3, 2}, 0, 1},
		{[]float64{4, 1, 3, 2}, 100, 4},
	} {
		if got := Percentile(tt.v, tt.p); got != tt.want {
			t.Errorf("Percentile(%v, %d) = %v, want %v", tt.v, tt.p, got, tt.want)
		}
	}
}

// Ratio and Diff take the median over pairs, not the ratio of medians:
// a pair whose reference was slow moves neither.
func TestRatioAndDiff(t *testing.T) {
	r := Result{
		A: []Sample{{Wall: 20, CPU: 10}, {Wall: 30, CPU: 12}, {Wall: 90, CPU: 40}},
		B: []Sample{{Wall: 10, CPU: 5}, {Wall: 10, CPU: 6}, {Wall: 90, CPU: 40}},
	}
	if got := r.Ratio(Wall); got != 2 {
		t.Errorf("Ratio(Wall) = %v, want 2 (the median of 2, 3 and 1)", got)
	}
	if got := r.Ratio(CPU); got != 2 {
		t.Errorf("Ratio(CPU) = %v, want 2", got)
	}
	if got := r.Diff(Wall); got != 10 {
		t.Errorf("Diff(Wall) = %v, want 10 (the median of 10, 20 and 0)", got)
	}
}

// Compare keeps n pairs after the warm-up, each side's sample in its own
// column whichever ran first, and fails on a command that fails.
func TestCompare(t *testing.T) {
	tr, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true(1) to run")
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep(1) to run")
	}
	// sleep 0.3 against true: far enough apart that a busy machine (true
	// took 22 ms under load once, against a 20 ms sleep) cannot swap them.
	r, err := Compare(4, 1, Cmd{Argv: []string{sleep, "0.3"}}, Cmd{Argv: []string{tr}})
	if err != nil {
		t.Fatalf("Compare: %v", err)
	}
	if len(r.A) != 4 || len(r.B) != 4 {
		t.Fatalf("Compare(4, 1) kept %d and %d samples, want 4 and 4", len(r.A), len(r.B))
	}
	for i := range r.A {
		if r.A[i].Wall < 300 || r.B[i].Wall >= r.A[i].Wall {
			t.Errorf("pair %d: sleep 0.3 took %v ms, true %v ms: the columns are mixed up", i, r.A[i].Wall, r.B[i].Wall)
		}
	}
	if _, err := Compare(1, 0, Cmd{Argv: []string{tr}}, Cmd{Argv: []string{"false"}}); err == nil {
		t.Error("Compare with a failing command: no error")
	}
}

package files

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestApplyEdits(t *testing.T) {
	const text = "a := 1\nb := 2\na := 1\nc := 3\n"
	tests := []struct {
		name  string
		text  string
		edits []Edit
		want  string
		lines []int
		n     int
		kind  Kind
		hint  string // a part of the refusal's hint
	}{
		{name: "once", text: text, edits: []Edit{{Old: "b := 2", New: "b := 20"}}, want: "a := 1\nb := 20\na := 1\nc := 3\n", lines: []int{2}, n: 1},
		{name: "all", text: text, edits: []Edit{{Old: "a := 1", New: "a := 10", All: true}}, want: "a := 10\nb := 2\na := 10\nc := 3\n", lines: []int{1}, n: 2},
		{name: "delete", text: text, edits: []Edit{{Old: "c := 3\n", New: ""}}, want: "a := 1\nb := 2\na := 1\n", lines: []int{4}, n: 1},
		{name: "in turn", text: text, edits: []Edit{{Old: "b := 2", New: "b := 5"}, {Old: "b := 5\na", New: "b := 6\nz"}},
			want: "a := 1\nb := 6\nz := 1\nc := 3\n", lines: []int{2, 2}, n: 2},
		{name: "multi-line", text: text, edits: []Edit{{Old: "b := 2\na := 1\n", New: ""}}, want: "a := 1\nc := 3\n", lines: []int{2}, n: 1},
		{name: "ambiguous", text: text, edits: []Edit{{Old: "a := 1", New: "x"}}, kind: KindAmbiguous, hint: "occurs 2 times (at lines 1, 3)"},
		{name: "ambiguous multi-line", text: "x\ny\nx\ny\n", edits: []Edit{{Old: "x\ny", New: "z"}}, kind: KindAmbiguous, hint: "at lines 1, 3)"},
		{name: "no match", text: text, edits: []Edit{{Old: "d := 4", New: "x"}}, kind: KindNoMatch, hint: "does not occur"},
		{name: "no match, CR LF", text: "a\r\nb\r\n", edits: []Edit{{Old: "a\nb", New: "x"}}, kind: KindNoMatch, hint: "CR LF"},
		// All or nothing: the second edit fails, so the first is not kept.
		{name: "second fails", text: text, edits: []Edit{{Old: "b := 2", New: "b := 5"}, {Old: "b := 2", New: "x"}}, kind: KindNoMatch, hint: "edit 2 of 2"},
		{name: "empty old", text: text, edits: []Edit{{Old: "", New: "x"}}, kind: KindInvalid, hint: "empty"},
		{name: "same", text: text, edits: []Edit{{Old: "b", New: "b"}}, kind: KindInvalid, hint: "the same"},
		{name: "NUL in new", text: text, edits: []Edit{{Old: "b", New: "\x00"}}, kind: KindInvalid, hint: "NUL"},
		{name: "invalid UTF-8 in old", text: text, edits: []Edit{{Old: "\xff", New: "x"}}, kind: KindInvalid, hint: "UTF-8"},
		{name: "none", text: text, kind: KindInvalid, hint: "no edits"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, res, err := applyEdits("edit", "f", tt.text, tt.edits)
			if tt.kind != "" {
				var e *Error
				if KindOf(err) != tt.kind || !errors.As(err, &e) || !strings.Contains(e.Hint, tt.hint) {
					t.Fatalf("applyEdits = %v, want %s with %q in its hint", err, tt.kind, tt.hint)
				}
				return
			}
			if err != nil {
				t.Fatalf("applyEdits = %v", err)
			}
			if got != tt.want || res.Replacements != tt.n || !slices.Equal(res.Lines, tt.lines) || res.Size != int64(len(tt.want)) {
				t.Errorf("applyEdits = %q, %+v; want %q, %d replacements at lines %v", got, res, tt.want, tt.n, tt.lines)
			}
		})
	}
}

// The lines of an ambiguous match are listed up to a bound.
func TestLineListBounded(t *testing.T) {
	got := lineList(strings.Repeat("x\n", 50), "x")
	if want := "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, ..."; got != want {
		t.Errorf("lineList = %q, want %q", got, want)
	}
}

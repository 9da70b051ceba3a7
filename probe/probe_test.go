package probe

import (
	"bytes"
	"slices"
	"testing"
)

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		want []string
	}{
		{"write /a/b  hello", []string{"write", "/a/b", "hello"}},
		{"", nil},
		{Encode("write", "/home/J Doe/x", "two words"), []string{"write", "/home/J Doe/x", "two words"}},
		{Encode("pids"), []string{"pids"}},
		{"[not json", []string{"[not", "json"}},
	} {
		if got := Split(tc.arg); !slices.Equal(got, tc.want) {
			t.Errorf("Split(%q) = %q, want %q", tc.arg, got, tc.want)
		}
	}
}

// Decode reads what Main wrote, also through a terminal: CRLF line ends
// and echoed input between the lines.
func TestDecode(t *testing.T) {
	var out bytes.Buffer
	if err := Main([]string{"no-such-op 1", "", "another"}, &out); err != nil {
		t.Fatal(err)
	}
	noisy := bytes.ReplaceAll(out.Bytes(), []byte("\n"), []byte("\r\nx"))
	vs := Decode(noisy)
	if len(vs) != 2 || vs[0].Op != "no-such-op" || !slices.Equal(vs[0].Args, []string{"1"}) || vs[0].OK || vs[1].Op != "another" {
		t.Errorf("Decode(%q) = %+v; want two failed verdicts", noisy, vs)
	}
}

package conpty

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
)

func TestEnvBlock(t *testing.T) {
	b, err := EnvBlock([]string{"Path=C:\\Windows", "", "=C:=C:\\src", "A_B=2", "A=1", "ü=ß", "TEMP=x=y"})
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 2 || b[len(b)-1] != 0 || b[len(b)-2] != 0 {
		t.Fatalf("block does not end in two NULs: %v", b[max(0, len(b)-4):])
	}
	got := strings.Split(string(utf16.Decode(b[:len(b)-2])), "\x00")
	want := []string{"=C:=C:\\src", "A=1", "A_B=2", "Path=C:\\Windows", "TEMP=x=y", "ü=ß"}
	if !slices.Equal(got, want) {
		t.Errorf("EnvBlock entries = %q, want %q", got, want)
	}
	if e, _ := EnvBlock(nil); !slices.Equal(e, []uint16{0, 0}) {
		t.Errorf("EnvBlock(nil) = %v, want two NULs", e)
	}
	for _, bad := range []string{"A=\x00", "NOVALUE", "="} {
		if _, err := EnvBlock([]string{bad}); err == nil {
			t.Errorf("EnvBlock(%q) = nil error, want one", bad)
		}
	}
}

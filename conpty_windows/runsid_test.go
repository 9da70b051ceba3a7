package conpty

import "testing"

func TestRunSID(t *testing.T) {
	a, err := RunSID()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := RunSID()
	if a == b {
		t.Errorf("two runs got the same SID %s", a)
	}
	if _, err := ParseSID(a); err != nil || !IsRunSID(a) {
		t.Errorf("RunSID() = %q: ParseSID %v, IsRunSID %v", a, err, IsRunSID(a))
	}
	for _, s := range []string{"S-1-9-1717729329-1-2", "S-1-9-1717729329-1-2-3-4", "S-1-9-1-1-2-3", "S-1-5-21-1-2-3",
		"S-1-9-1717729329-1-2-x", "S-1-9-1717729329-1-2-99999999999"} {
		if IsRunSID(s) {
			t.Errorf("IsRunSID(%q) = true", s)
		}
	}
}

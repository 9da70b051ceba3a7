package landlock

import "testing"

// BenchmarkBuildRoot builds a ruleset shaped like root's: the host tree
// readable but for /etc's secrets, so that /etc is granted entry by entry
// (about 150 rules here), and a writable workspace.
func BenchmarkBuildRoot(b *testing.B) {
	abi, err := ABI()
	if err != nil {
		b.Skipf("no Landlock: %v", err)
	}
	p := Policy{ReadRoots: []string{"/"}, WriteRoots: []string{b.TempDir()}, Exclude: []string{"/etc/shadow", "/etc/gshadow"}}
	for b.Loop() {
		rs, _, err := Build(p, abi)
		if err != nil {
			b.Fatal(err)
		}
		rs.Close()
	}
}

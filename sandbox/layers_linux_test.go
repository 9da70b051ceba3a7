package sandbox

import (
	"slices"
	"testing"
)

// Only --net allow has TCP rules: with none (and loopback, its older name)
// the namespace's loopback is all there is, and a test suite's local
// server must work there.
func TestLandlockTCPByNetwork(t *testing.T) {
	tests := []struct {
		name     string
		network  Network
		denyTCP  bool
		ports    []uint16
		tcpNeeds bool
	}{
		{"none", NetNone, false, nil, false},
		{"loopback", Spec{Network: NetLoopback}.network(), false, nil, false},
		{"host", NetHost, false, nil, false},
		{"allow", NetAllow, true, []uint16{ProxyPort}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _, _, _ := landlockPolicy(layout{Profile: ProfileWorkspace, Network: tt.network}, nil, nil)
			if p.DenyTCP != tt.denyTCP || !slices.Equal(p.ConnectPorts, tt.ports) {
				t.Errorf("landlockPolicy(%s) denies TCP %v, connect ports %v; want %v, %v", tt.network, p.DenyTCP, p.ConnectPorts, tt.denyTCP, tt.ports)
			}
			needs4 := slices.ContainsFunc(landlockNeeds(tt.network), func(f landlockFeature) bool { return f.abi == 4 })
			if needs4 != tt.tcpNeeds {
				t.Errorf("landlockNeeds(%s) has an ABI 4 feature: %v; want %v", tt.network, needs4, tt.tcpNeeds)
			}
		})
	}
	if n := (Spec{Network: NetLoopback}).network(); n != NetNone {
		t.Errorf("Spec{Network: loopback}.network() = %s; want none", n)
	}
}

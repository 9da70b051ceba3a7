package netproxy

import (
	"bufio"
	"bytes"
	"fmt"
	"net/netip"
	"strings"
)

// ParseHosts reads a file in the format of /etc/hosts (an address, then
// names; '#' starts a comment) into a map for Options.Hosts. A name listed
// on several lines gets every address, in order. A line whose address or
// a name does not parse is an error, with its line number: a hosts file
// that steers the proxy must mean what it says.
func ParseHosts(data []byte) (map[string][]netip.Addr, error) {
	hosts := map[string][]netip.Addr{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 64<<10)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		a, err := netip.ParseAddr(f[0])
		if err != nil || a.Zone() != "" {
			return nil, fmt.Errorf("line %d: %q is not an IP address", n, f[0])
		}
		if len(f) == 1 {
			return nil, fmt.Errorf("line %d: %s has no name", n, f[0])
		}
		for _, name := range f[1:] {
			h, err := parseHost(name)
			if err != nil || h.name == "" {
				return nil, fmt.Errorf("line %d: %q is not a host name", n, name)
			}
			hosts[h.name] = append(hosts[h.name], a.Unmap())
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	return hosts, nil
}

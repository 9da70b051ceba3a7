package conpty

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf16"
)

// EnvBlock builds an environment block for CreateProcess with
// CREATE_UNICODE_ENVIRONMENT: NAME=VALUE strings, each ending in NUL, the
// last followed by another NUL, sorted by name case-insensitively as the
// CreateProcess documentation asks. A name may start with "=" (the
// per-drive directories, "=C:=C:\src"); empty entries are dropped.
func EnvBlock(env []string) ([]uint16, error) {
	sorted := slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return kv == "" })
	for _, kv := range sorted {
		if strings.IndexByte(kv, 0) >= 0 {
			return nil, fmt.Errorf("environment entry %q holds a NUL byte", kv)
		}
		if !strings.Contains(kv[1:], "=") {
			return nil, fmt.Errorf("environment entry %q is not NAME=VALUE", kv)
		}
	}
	slices.SortStableFunc(sorted, func(a, b string) int {
		return strings.Compare(strings.ToUpper(envName(a)), strings.ToUpper(envName(b)))
	})
	var block []uint16
	for _, kv := range sorted {
		block = append(block, utf16.Encode([]rune(kv))...)
		block = append(block, 0)
	}
	if len(block) == 0 {
		block = append(block, 0)
	}
	return append(block, 0), nil
}

// envName is the name of a NAME=VALUE entry; a leading "=" belongs to it.
func envName(kv string) string {
	i := strings.IndexByte(kv[1:], '=')
	return kv[:i+1]
}

package sandbox

import (
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// homeDirs are the caller's home directories, resolved: the account
// database's, Spec.Home and $HOME, when they differ.
func homeDirs(s Spec) []string {
	var homes []string
	add := func(h string) {
		if h == "" || !filepath.IsAbs(h) {
			return
		}
		if real, err := filepath.EvalSymlinks(h); err == nil {
			h = real
		}
		h = filepath.Clean(h)
		if h != "/" && !slices.Contains(homes, h) {
			homes = append(homes, h)
		}
	}
	add(s.Home)
	if u, err := user.LookupId(strconv.Itoa(os.Getuid())); err == nil {
		add(u.HomeDir)
	}
	for _, kv := range s.Environ {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			add(v)
		}
	}
	return homes
}

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

// secretBases are where the secret table's relative paths are looked for:
// under each home, and, for the entries in ~/.config and ~/.local/share,
// under $XDG_CONFIG_HOME and $XDG_DATA_HOME when the caller moved those
// (gh, rclone, gopass, glab and most tools in the table follow them:
// https://specifications.freedesktop.org/basedir-spec/latest/).
type secretBases struct {
	homes, config, data []string
}

func basesFor(s Spec, homes []string) secretBases {
	b := secretBases{homes: homes}
	add := func(list []string, dir, def string) []string {
		if dir == "" || !filepath.IsAbs(dir) {
			return list // the specification says to ignore a relative path
		}
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real
		}
		dir = filepath.Clean(dir)
		for _, h := range homes {
			if dir == filepath.Join(h, def) {
				return list // the default, found through the homes already
			}
		}
		if dir == "/" || slices.Contains(list, dir) {
			return list
		}
		return append(list, dir)
	}
	for _, kv := range s.Environ {
		if v, ok := strings.CutPrefix(kv, "XDG_CONFIG_HOME="); ok {
			b.config = add(b.config, v, ".config")
		} else if v, ok := strings.CutPrefix(kv, "XDG_DATA_HOME="); ok {
			b.data = add(b.data, v, ".local/share")
		}
	}
	return b
}

// each calls f with every directory a relative entry is looked for under
// and its path there.
func (b secretBases) each(rel string, f func(base, rel string)) {
	for _, h := range b.homes {
		f(h, rel)
	}
	for _, moved := range []struct {
		prefix string
		dirs   []string
	}{{".config/", b.config}, {".local/share/", b.data}} {
		if r, ok := strings.CutPrefix(rel, moved.prefix); ok {
			for _, d := range moved.dirs {
				f(d, r)
			}
		}
	}
}

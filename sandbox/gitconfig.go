package sandbox

import (
	"bufio"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strings"

	"github.com/forgebox/forgebox/pathtree"
)

// safeConfig lists the Git config keys a repository created during the run
// may keep: what `git init`, `git clone` and everyday commands write. Any
// other key (they include commands Git runs — core.fsmonitor, filters,
// merge drivers, aliases, remote.*.uploadpack — and files it reads) moves
// the config aside. Keys are section[.subsection].name; "*" matches any
// subsection.
var safeConfig = map[string]bool{
	"core.repositoryformatversion": true, "core.filemode": true, "core.bare": true, "core.logallrefupdates": true,
	"core.ignorecase": true, "core.precomposeunicode": true, "core.symlinks": true, "core.autocrlf": true,
	"core.eol": true, "core.safecrlf": true, "core.quotepath": true, "core.longpaths": true,
	"user.name": true, "user.email": true, "init.defaultbranch": true,
	"extensions.objectformat": true,
	"branch.*.remote":         true, "branch.*.merge": true, "branch.*.rebase": true, "branch.*.pushremote": true,
	"branch.*.description": true,
	"remote.*.url":         true, "remote.*.pushurl": true, "remote.*.fetch": true, "remote.*.push": true,
	"remote.*.tagopt": true, "remote.*.prune": true, "remote.*.mirror": true,
	"pull.rebase": true, "pull.ff": true, "push.default": true, "push.autosetupremote": true, "fetch.prune": true,
	"merge.ff": true, "merge.conflictstyle": true, "color.ui": true,
	// What git submodule writes: a submodule's Git directory names its
	// worktree, the superproject names its submodules (but not
	// submodule.*.update, which may be "!command").
	"core.worktree": true, "submodule.*.url": true, "submodule.*.active": true, "submodule.*.branch": true,
}

// configTextRisk reads a new repository's Git config and says why it must
// go, or returns "" when every key in it is safe (safeConfig).
func configTextRisk(f io.Reader) string {
	for e := range gitConfigEntries(f) {
		if e.Odd != "" {
			return "its config " + e.Odd
		}
		section := e.Section
		if e.Sub || strings.Contains(section, ".") {
			section = strings.SplitN(section, ".", 2)[0] + ".*"
		}
		if full := section + "." + e.Key; !safeConfig[full] {
			return "its config sets " + full
		}
	}
	return ""
}

// gitConfigEntry is one key of a Git config file as forgebox reads it:
// roughly, enough to vet a config and to find the paths Git follows. It is
// the only reader of Git configuration in the sandbox, on every OS.
type gitConfigEntry struct {
	// Section is the header's name, lower-case, without its subsection:
	// "core" for [core] and [core "x"], "a.b" for [a.b]. Sub says the
	// header named a subsection in quotes.
	Section string
	Sub     bool
	// Key is lower-case; Value is trimmed, outer quotes removed, and empty
	// for a key without "=".
	Key, Value string
	// Odd says why a line was not read ("continues lines", "is
	// malformed"): the entry has no key, and the file cannot be vetted.
	Odd string
}

// gitConfigEntries yields the keys of the Git config r, the first MiB of
// it. A key on a section header's line counts, as it does for Git.
func gitConfigEntries(r io.Reader) iter.Seq[gitConfigEntry] {
	return func(yield func(gitConfigEntry) bool) {
		var section string
		var sub bool
		sc := bufio.NewScanner(io.LimitReader(r, 1<<20))
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			switch {
			case line == "" || line[0] == '#' || line[0] == ';':
				continue
			case strings.HasSuffix(line, "\\"):
				if !yield(gitConfigEntry{Section: section, Sub: sub, Odd: "continues lines, which forgebox does not vet"}) {
					return
				}
				continue
			}
			if line[0] == '[' {
				end := strings.IndexByte(line, ']')
				if end < 0 {
					section, sub = "", false
					if !yield(gitConfigEntry{Odd: "is malformed"}) {
						return
					}
					continue
				}
				name, _, hasSub := strings.Cut(strings.TrimSpace(line[1:end]), " ")
				section, sub = strings.ToLower(name), hasSub
				if line = strings.TrimSpace(line[end+1:]); line == "" {
					continue
				}
			}
			k, v, _ := strings.Cut(line, "=")
			e := gitConfigEntry{Section: section, Sub: sub, Key: strings.ToLower(strings.TrimSpace(k)),
				Value: strings.Trim(strings.TrimSpace(v), `"`)}
			if !yield(e) {
				return
			}
		}
	}
}

// gitConfigValues are the values of key in the sections called section
// (any subsection; "" for any section) of the Git config file, in order.
func gitConfigValues(file, section, key string) []string {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	for e := range gitConfigEntries(f) {
		if (section == "" || e.Section == section) && e.Key == key && e.Odd == "" {
			out = append(out, e.Value)
		}
	}
	return out
}

// gitHooksPath is core.hooksPath of a Git config file, resolved against
// the worktree; "" when unset, or relative without a worktree.
func gitHooksPath(config, worktree string) string {
	v := gitConfigValues(config, "core", "hookspath")
	switch {
	case len(v) == 0 || v[len(v)-1] == "":
		return ""
	case filepath.IsAbs(v[len(v)-1]):
		return filepath.Clean(v[len(v)-1])
	case worktree == "":
		return ""
	}
	return filepath.Join(worktree, v[len(v)-1])
}

// submodulePaths lists the directories below root that root's .gitmodules
// names as a path: Git reads submodule.*.path, and any section's path is
// taken, which can only protect more.
func submodulePaths(root string) []string {
	var out []string
	for _, v := range gitConfigValues(filepath.Join(root, ".gitmodules"), "", "path") {
		if p := filepath.Join(root, v); pathtree.Beneath(p, root) {
			out = append(out, p)
		}
	}
	return out
}

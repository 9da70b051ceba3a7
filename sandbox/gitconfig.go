package sandbox

import (
	"bufio"
	"io"
	"strings"
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
	section := ""
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
			continue
		case strings.HasSuffix(line, "\\"):
			return "its config continues lines, which forgebox does not vet"
		case line[0] == '[':
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return "its config is malformed"
			}
			name, _, hasSub := strings.Cut(strings.TrimSpace(line[1:end]), " ")
			section = strings.ToLower(name)
			if hasSub || strings.Contains(section, ".") {
				section = strings.SplitN(section, ".", 2)[0] + ".*"
			}
			if rest := strings.TrimSpace(line[end+1:]); rest != "" {
				line = rest // a key on the header's line
			} else {
				continue
			}
		}
		key, _, _ := strings.Cut(line, "=")
		full := section + "." + strings.ToLower(strings.TrimSpace(key))
		if !safeConfig[full] {
			return "its config sets " + full
		}
	}
	return ""
}

// Package gitkeys is the one rule for Git configuration keys: which a
// command may set in the workspace's repository (ordinary keys), which a
// repository it made may keep (where its data comes from), and which
// neither may (a key that makes Git run a program, send data elsewhere,
// read another file, or that forgebox does not know). The sandbox carries
// changes back by it; the judge lets ordinary changes through by it. It
// imports nothing of forgebox's.
package gitkeys

import "strings"

// Class is what a run may do with a Git config key.
type Class uint8

const (
	// Refused: the key makes Git run a program, send data to or
	// fetch code from a place of the key's choosing, read another file or
	// directory, or change what the repository is; or forgebox does not
	// know it. Neither the workspace's repository nor one made during the
	// run may keep it.
	Refused Class = iota
	// NewRepo: where a new repository's data comes from and how it
	// is laid out, as git init, clone and submodule write it. A
	// repository made during the run keeps it (the run cloned from
	// there); the workspace's repository may not change it (that would
	// redirect the user's next push or fetch).
	NewRepo
	// Ordinary: what everyday commands and people write; any
	// repository may change it.
	Ordinary
)

// table is the allowlist behind Classify. A key is
// section[.subsection].name, lower-case but for the subsection, and is
// looked up as written, then with its subsection as "*", then with its
// name as "*". Anything not listed is refused: an allowlist, because Git
// grows keys that run programs (hook.*.command and alias.*.command are
// recent) and a denylist would let each new one through until someone
// noticed. The keys refused on purpose are listed in gitconfig_keys_test.go
// and docs/security-model.md.
var table = map[string]Class{
	// Identity. Not user.signingKey: with gpg.format ssh it may be a
	// command's output.
	"user.name": Ordinary, "user.email": Ordinary,
	"author.name": Ordinary, "author.email": Ordinary,
	"committer.name": Ordinary, "committer.email": Ordinary,
	// How the work tree is checked out and compared.
	"core.filemode": Ordinary, "core.logallrefupdates": Ordinary, "core.ignorecase": Ordinary,
	"core.precomposeunicode": Ordinary, "core.symlinks": Ordinary, "core.autocrlf": Ordinary,
	"core.eol": Ordinary, "core.safecrlf": Ordinary, "core.quotepath": Ordinary,
	"core.longpaths": Ordinary, "core.whitespace": Ordinary, "core.abbrev": Ordinary,
	"core.commentchar": Ordinary, "core.commentstring": Ordinary, "core.checkstat": Ordinary,
	"core.trustctime": Ordinary, "core.untrackedcache": Ordinary, "core.splitindex": Ordinary,
	"core.preloadindex": Ordinary, "core.compression": Ordinary, "core.fscache": Ordinary,
	"init.defaultbranch": Ordinary,
	// Not branch.*.mergeOptions or pull.twohead (a merge strategy is a
	// git-merge-* program found on PATH), push.followTags or
	// submodule.recurse (they push or fetch more than the user asks).
	// Branches and their upstreams (branch.*.remote and pushRemote, and
	// remote.pushDefault, name a remote: see Classify).
	"branch.*.remote": Ordinary, "branch.*.pushremote": Ordinary, "branch.*.merge": Ordinary,
	"branch.*.rebase": Ordinary, "branch.*.description": Ordinary,
	"branch.autosetupmerge": Ordinary, "branch.autosetuprebase": Ordinary, "branch.sort": Ordinary,
	"remote.pushdefault": Ordinary,
	// A remote's local bookkeeping (where it is, and what is pushed
	// there, is NewRepo).
	"remote.*.fetch": Ordinary, "remote.*.tagopt": Ordinary, "remote.*.prune": Ordinary,
	"remote.*.prunetags": Ordinary, "remote.*.skipdefaultupdate": Ordinary,
	"remote.*.skipfetchall": Ordinary,
	// Everyday behaviour.
	"pull.rebase": Ordinary, "pull.ff": Ordinary,
	"push.default": Ordinary, "push.autosetupremote": Ordinary,
	"fetch.prune": Ordinary, "fetch.prunetags": Ordinary, "fetch.parallel": Ordinary,
	"merge.ff": Ordinary, "merge.conflictstyle": Ordinary, "merge.renames": Ordinary,
	"merge.log": Ordinary, "merge.autostash": Ordinary,
	"rebase.autostash": Ordinary, "rebase.autosquash": Ordinary, "rebase.updaterefs": Ordinary,
	"rebase.stat": Ordinary, "rebase.missingcommitscheck": Ordinary, "rerere.enabled": Ordinary,
	"rerere.autoupdate": Ordinary,
	"commit.verbose":    Ordinary, "commit.cleanup": Ordinary, "commit.status": Ordinary,
	"status.showuntrackedfiles": Ordinary, "status.short": Ordinary, "status.branch": Ordinary,
	"status.relativepaths": Ordinary, "status.renames": Ordinary, "status.aheadbehind": Ordinary,
	"diff.renames": Ordinary, "diff.algorithm": Ordinary, "diff.colormoved": Ordinary,
	"diff.mnemonicprefix": Ordinary, "diff.noprefix": Ordinary, "diff.context": Ordinary,
	"diff.interhunkcontext": Ordinary, "diff.statgraphwidth": Ordinary, "diff.submodule": Ordinary,
	"diff.indentheuristic": Ordinary, "diff.relative": Ordinary,
	"log.date": Ordinary, "log.decorate": Ordinary, "log.follow": Ordinary,
	"log.abbrevcommit": Ordinary, "log.mailmap": Ordinary,
	"tag.sort": Ordinary, "column.ui": Ordinary, "grep.linenumber": Ordinary,
	"grep.patterntype": Ordinary, "gc.auto": Ordinary, "gc.autodetach": Ordinary,
	"index.version": Ordinary, "feature.manyfiles": Ordinary, "checkout.defaultremote": Ordinary,
	"submodule.fetchjobs": Ordinary, "i18n.commitencoding": Ordinary,
	"i18n.logoutputencoding": Ordinary,
	// Colours (color.ui, color.diff, color.diff.meta, ...) and advice
	// messages are only ever shown.
	"color.*": Ordinary, "color.*.*": Ordinary, "advice.*": Ordinary,

	// The layout and origin of a repository: what git init, clone and
	// submodule write in the repository they make.
	"core.repositoryformatversion": NewRepo, "core.bare": NewRepo, "core.worktree": NewRepo,
	"extensions.objectformat": NewRepo, "extensions.refstorage": NewRepo,
	"remote.*.url": NewRepo, "remote.*.pushurl": NewRepo, "remote.*.push": NewRepo,
	"remote.*.mirror": NewRepo, "submodule.*.url": NewRepo, "submodule.*.active": NewRepo,
	"submodule.*.branch": NewRepo,
}

// Classify is the one rule for what a run may leave in a Git config:
// the workspace's repository keeps a change to a Ordinary key (its
// config's private copy, gitconfig_copy_linux.go), a repository made
// during the run keeps NewRepo keys too (configTextRisk). section
// and name are lower-case; sub says the key has a subsection.
func Classify(section string, sub bool, name, value string) Class {
	k := section + "." + name
	if sub {
		k = section + ".*." + name
	}
	c, ok := table[k]
	if !ok {
		star := section + ".*"
		if sub {
			star = section + ".*.*"
		}
		c = table[star]
	}
	// A remote may be given as a URL or a path instead of a name: then it
	// says where the user's next push or pull goes.
	if c == Ordinary && (k == "branch.*.remote" || k == "branch.*.pushremote" || k == "remote.pushdefault" ||
		k == "checkout.defaultremote") && !remoteName(value) {
		return NewRepo
	}
	return c
}

// remoteName reports whether v can only name a configured remote, not a
// URL or a path.
func remoteName(v string) bool {
	if v == "" || v[0] == '.' || v[0] == '-' {
		return false
	}
	return !strings.ContainsFunc(v, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' || r == '_' || r == '.')
	})
}

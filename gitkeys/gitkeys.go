package sandbox

import "strings"

// gitKeyClass is what a run may do with a Git config key.
type gitKeyClass uint8

const (
	// gitKeyRefused: the key makes Git run a program, send data to or
	// fetch code from a place of the key's choosing, read another file or
	// directory, or change what the repository is; or forgebox does not
	// know it. Neither the workspace's repository nor one made during the
	// run may keep it.
	gitKeyRefused gitKeyClass = iota
	// gitKeyNewRepo: where a new repository's data comes from and how it
	// is laid out, as git init, clone and submodule write it. A
	// repository made during the run keeps it (the run cloned from
	// there); the workspace's repository may not change it (that would
	// redirect the user's next push or fetch).
	gitKeyNewRepo
	// gitKeyOrdinary: what everyday commands and people write; any
	// repository may change it.
	gitKeyOrdinary
)

// gitKeys is the allowlist behind gitConfigKey. A key is
// section[.subsection].name, lower-case but for the subsection, and is
// looked up as written, then with its subsection as "*", then with its
// name as "*". Anything not listed is refused: an allowlist, because Git
// grows keys that run programs (hook.*.command and alias.*.command are
// recent) and a denylist would let each new one through until someone
// noticed. The keys refused on purpose are listed in gitconfig_keys_test.go
// and the README.
var gitKeys = map[string]gitKeyClass{
	// Identity. Not user.signingKey: with gpg.format ssh it may be a
	// command's output.
	"user.name": gitKeyOrdinary, "user.email": gitKeyOrdinary,
	"author.name": gitKeyOrdinary, "author.email": gitKeyOrdinary,
	"committer.name": gitKeyOrdinary, "committer.email": gitKeyOrdinary,
	// How the work tree is checked out and compared.
	"core.filemode": gitKeyOrdinary, "core.logallrefupdates": gitKeyOrdinary, "core.ignorecase": gitKeyOrdinary,
	"core.precomposeunicode": gitKeyOrdinary, "core.symlinks": gitKeyOrdinary, "core.autocrlf": gitKeyOrdinary,
	"core.eol": gitKeyOrdinary, "core.safecrlf": gitKeyOrdinary, "core.quotepath": gitKeyOrdinary,
	"core.longpaths": gitKeyOrdinary, "core.whitespace": gitKeyOrdinary, "core.abbrev": gitKeyOrdinary,
	"core.commentchar": gitKeyOrdinary, "core.commentstring": gitKeyOrdinary, "core.checkstat": gitKeyOrdinary,
	"core.trustctime": gitKeyOrdinary, "core.untrackedcache": gitKeyOrdinary, "core.splitindex": gitKeyOrdinary,
	"core.preloadindex": gitKeyOrdinary, "core.compression": gitKeyOrdinary, "core.fscache": gitKeyOrdinary,
	"init.defaultbranch": gitKeyOrdinary,
	// Not branch.*.mergeOptions or pull.twohead (a merge strategy is a
	// git-merge-* program found on PATH), push.followTags or
	// submodule.recurse (they push or fetch more than the user asks).
	// Branches and their upstreams (branch.*.remote and pushRemote, and
	// remote.pushDefault, name a remote: see gitConfigKey).
	"branch.*.remote": gitKeyOrdinary, "branch.*.pushremote": gitKeyOrdinary, "branch.*.merge": gitKeyOrdinary,
	"branch.*.rebase": gitKeyOrdinary, "branch.*.description": gitKeyOrdinary,
	"branch.autosetupmerge": gitKeyOrdinary, "branch.autosetuprebase": gitKeyOrdinary, "branch.sort": gitKeyOrdinary,
	"remote.pushdefault": gitKeyOrdinary,
	// A remote's local bookkeeping (where it is, and what is pushed
	// there, is gitKeyNewRepo).
	"remote.*.fetch": gitKeyOrdinary, "remote.*.tagopt": gitKeyOrdinary, "remote.*.prune": gitKeyOrdinary,
	"remote.*.prunetags": gitKeyOrdinary, "remote.*.skipdefaultupdate": gitKeyOrdinary,
	"remote.*.skipfetchall": gitKeyOrdinary,
	// Everyday behaviour.
	"pull.rebase": gitKeyOrdinary, "pull.ff": gitKeyOrdinary,
	"push.default": gitKeyOrdinary, "push.autosetupremote": gitKeyOrdinary,
	"fetch.prune": gitKeyOrdinary, "fetch.prunetags": gitKeyOrdinary, "fetch.parallel": gitKeyOrdinary,
	"merge.ff": gitKeyOrdinary, "merge.conflictstyle": gitKeyOrdinary, "merge.renames": gitKeyOrdinary,
	"merge.log": gitKeyOrdinary, "merge.autostash": gitKeyOrdinary,
	"rebase.autostash": gitKeyOrdinary, "rebase.autosquash": gitKeyOrdinary, "rebase.updaterefs": gitKeyOrdinary,
	"rebase.stat": gitKeyOrdinary, "rebase.missingcommitscheck": gitKeyOrdinary, "rerere.enabled": gitKeyOrdinary,
	"rerere.autoupdate": gitKeyOrdinary,
	"commit.verbose":    gitKeyOrdinary, "commit.cleanup": gitKeyOrdinary, "commit.status": gitKeyOrdinary,
	"status.showuntrackedfiles": gitKeyOrdinary, "status.short": gitKeyOrdinary, "status.branch": gitKeyOrdinary,
	"status.relativepaths": gitKeyOrdinary, "status.renames": gitKeyOrdinary, "status.aheadbehind": gitKeyOrdinary,
	"diff.renames": gitKeyOrdinary, "diff.algorithm": gitKeyOrdinary, "diff.colormoved": gitKeyOrdinary,
	"diff.mnemonicprefix": gitKeyOrdinary, "diff.noprefix": gitKeyOrdinary, "diff.context": gitKeyOrdinary,
	"diff.interhunkcontext": gitKeyOrdinary, "diff.statgraphwidth": gitKeyOrdinary, "diff.submodule": gitKeyOrdinary,
	"diff.indentheuristic": gitKeyOrdinary, "diff.relative": gitKeyOrdinary,
	"log.date": gitKeyOrdinary, "log.decorate": gitKeyOrdinary, "log.follow": gitKeyOrdinary,
	"log.abbrevcommit": gitKeyOrdinary, "log.mailmap": gitKeyOrdinary,
	"tag.sort": gitKeyOrdinary, "column.ui": gitKeyOrdinary, "grep.linenumber": gitKeyOrdinary,
	"grep.patterntype": gitKeyOrdinary, "gc.auto": gitKeyOrdinary, "gc.autodetach": gitKeyOrdinary,
	"index.version": gitKeyOrdinary, "feature.manyfiles": gitKeyOrdinary, "checkout.defaultremote": gitKeyOrdinary,
	"submodule.fetchjobs": gitKeyOrdinary, "i18n.commitencoding": gitKeyOrdinary,
	"i18n.logoutputencoding": gitKeyOrdinary,
	// Colours (color.ui, color.diff, color.diff.meta, ...) and advice
	// messages are only ever shown.
	"color.*": gitKeyOrdinary, "color.*.*": gitKeyOrdinary, "advice.*": gitKeyOrdinary,

	// The layout and origin of a repository: what git init, clone and
	// submodule write in the repository they make.
	"core.repositoryformatversion": gitKeyNewRepo, "core.bare": gitKeyNewRepo, "core.worktree": gitKeyNewRepo,
	"extensions.objectformat": gitKeyNewRepo, "extensions.refstorage": gitKeyNewRepo,
	"remote.*.url": gitKeyNewRepo, "remote.*.pushurl": gitKeyNewRepo, "remote.*.push": gitKeyNewRepo,
	"remote.*.mirror": gitKeyNewRepo, "submodule.*.url": gitKeyNewRepo, "submodule.*.active": gitKeyNewRepo,
	"submodule.*.branch": gitKeyNewRepo,
}

// gitConfigKey is the one rule for what a run may leave in a Git config:
// the workspace's repository keeps a change to a gitKeyOrdinary key (its
// config's private copy, gitconfig_copy_linux.go), a repository made
// during the run keeps gitKeyNewRepo keys too (configTextRisk). section
// and name are lower-case; sub says the key has a subsection.
func gitConfigKey(section string, sub bool, name, value string) gitKeyClass {
	k := section + "." + name
	if sub {
		k = section + ".*." + name
	}
	c, ok := gitKeys[k]
	if !ok {
		star := section + ".*"
		if sub {
			star = section + ".*.*"
		}
		c = gitKeys[star]
	}
	// A remote may be given as a URL or a path instead of a name: then it
	// says where the user's next push or pull goes.
	if c == gitKeyOrdinary && (k == "branch.*.remote" || k == "branch.*.pushremote" || k == "remote.pushdefault" ||
		k == "checkout.defaultremote") && !remoteName(value) {
		return gitKeyNewRepo
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

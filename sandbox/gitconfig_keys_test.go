package sandbox

import (
	"strings"
	"testing"
)

// refusedGitKeys are the keys that make Git run a program, send data to or
// fetch code from a place of the key's choosing, read another file, or
// change what the repository is (git-config(1)). None may be changed in
// the workspace's repository; the README lists them.
var refusedGitKeys = []string{
	// Programs Git runs.
	"core.fsmonitor", "core.hooksPath", "core.sshCommand", "core.pager", "core.editor", "core.askPass",
	"core.gitProxy", "core.alternateRefsCommand", "sequence.editor", "gitlint.editor", "pager.log",
	"diff.external", "diff.x.command", "diff.x.textconv", "diff.tool", "merge.tool", "difftool.x.cmd",
	"difftool.x.path", "mergetool.x.cmd", "mergetool.x.path", "filter.lfs.clean", "filter.lfs.smudge",
	"filter.lfs.process", "merge.x.driver", "alias.st", "alias.x.command", "credential.helper",
	"credential.https://example.com.helper", "gpg.program", "gpg.ssh.program", "gpg.x509.program",
	"gpg.ssh.defaultKeyCommand", "web.browser", "browser.x.cmd", "browser.x.path", "man.x.cmd", "man.viewer",
	"sendemail.smtpServer", "sendemail.sendmailCmd", "submodule.x.update", "uploadpack.packObjectsHook",
	"interactive.diffFilter", "trailer.x.cmd", "trailer.x.command", "imap.tunnel", "hook.x.command",
	"hook.x.event", "gc.recentObjectsHook", "guitool.x.cmd", "remote.origin.vcs", "ssh.variant",
	"commit.gpgSign", "tag.gpgSign", "log.showSignature", "help.autocorrect", "pull.twohead",
	"branch.main.mergeOptions",
	// Files and directories Git reads or follows.
	"include.path", "includeIf.gitdir:/x/.path", "core.worktree", "core.attributesFile", "core.excludesFile",
	"commit.template", "blame.ignoreRevsFile", "mailmap.file", "http.sslCAInfo", "http.sslCert",
	"http.cookieFile", "safe.directory", "core.bare", "core.repositoryFormatVersion", "extensions.objectFormat",
	"extensions.worktreeConfig", "extensions.preciousObjects", "core.sharedRepository",
	// Where data goes or code comes from.
	"remote.origin.url", "remote.origin.pushurl", "remote.origin.uploadpack", "remote.origin.receivepack",
	"remote.origin.push", "remote.origin.mirror", "remote.origin.proxy", "url.https://evil/.insteadOf",
	"url.https://evil/.pushInsteadOf", "http.proxy", "http.https://x.proxy", "http.extraHeader",
	"protocol.allow", "protocol.ext.allow", "submodule.x.url", "bundle.uri", "fetch.bundleURI",
	"promisor.acceptFromServer", "push.followTags", "submodule.recurse",
	// Unknown to forgebox.
	"frobnicate.now", "core.somethingNew",
}

var ordinaryGitKeys = []string{
	"user.name", "user.email", "core.autocrlf", "core.eol", "core.filemode", "core.ignorecase",
	"branch.main.rebase", "branch.feature/x.merge", "branch.main.remote", "branch.main.description",
	"init.defaultBranch", "pull.rebase", "pull.ff", "push.default", "push.autoSetupRemote", "fetch.prune",
	"merge.conflictStyle", "rebase.autoStash", "color.ui", "color.diff", "color.diff.meta", "advice.detachedHead",
	"diff.algorithm", "diff.colorMoved", "log.date", "remote.origin.fetch", "remote.origin.prune", "status.short",
	"rerere.enabled", "commit.verbose", "tag.sort", "remote.pushDefault",
}

// gitKeyParts splits a key as git config takes it on its command line.
func gitKeyParts(key string) (section string, sub bool, name string) {
	first := strings.Index(key, ".")
	last := strings.LastIndex(key, ".")
	section, name = strings.ToLower(key[:first]), strings.ToLower(key[last+1:])
	return section, first != last, name
}

func TestGitConfigKey(t *testing.T) {
	for _, k := range refusedGitKeys {
		s, sub, n := gitKeyParts(k)
		if c := gitConfigKey(s, sub, n, "x"); c == gitKeyOrdinary {
			t.Errorf("gitConfigKey(%q) = ordinary; want refused", k)
		}
	}
	for _, k := range ordinaryGitKeys {
		s, sub, n := gitKeyParts(k)
		if c := gitConfigKey(s, sub, n, "origin"); c != gitKeyOrdinary {
			t.Errorf("gitConfigKey(%q) = %d; want ordinary", k, c)
		}
	}
	// A remote named by a URL or a path says where data goes.
	for _, v := range []string{"https://evil.example/x.git", "../elsewhere", "/tmp/x", "ext::sh -c x", "user@host:x", "-u", ""} {
		for _, k := range []string{"branch.main.remote", "branch.main.pushRemote", "remote.pushDefault"} {
			s, sub, n := gitKeyParts(k)
			if c := gitConfigKey(s, sub, n, v); c == gitKeyOrdinary {
				t.Errorf("gitConfigKey(%q, %q) = ordinary; want refused", k, v)
			}
		}
	}
	// What git init and clone write, a new repository keeps.
	for _, k := range []string{"remote.origin.url", "core.bare", "core.repositoryFormatVersion", "core.worktree", "submodule.x.url"} {
		s, sub, n := gitKeyParts(k)
		if c := gitConfigKey(s, sub, n, "x"); c != gitKeyNewRepo {
			t.Errorf("gitConfigKey(%q) = %d; want new-repository only", k, c)
		}
	}
}

package gitkeys

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// refusedGitKeys are the keys that make Git run a program, send data to or
// fetch code from a place of the key's choosing, read another file, or
// change what the repository is (git-config(1)), with a value each: the
// list docs/security-model.md gives and the integration tests attack with.
func refusedGitKeys(t *testing.T) [][2]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "git-refused-keys.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var out [][2]string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l == "" || l[0] == '#' {
			continue
		}
		k, v, _ := strings.Cut(l, " ")
		out = append(out, [2]string{k, v})
	}
	return out
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
	for _, kv := range refusedGitKeys(t) {
		s, sub, n := gitKeyParts(kv[0])
		if c := Classify(s, sub, n, kv[1]); c == Ordinary {
			t.Errorf("Classify(%q, %q) = ordinary; want refused", kv[0], kv[1])
		}
	}
	for _, k := range ordinaryGitKeys {
		s, sub, n := gitKeyParts(k)
		if c := Classify(s, sub, n, "origin"); c != Ordinary {
			t.Errorf("Classify(%q) = %d; want ordinary", k, c)
		}
	}
	// A remote named by a URL or a path says where data goes.
	for _, v := range []string{"https://evil.example/x.git", "../elsewhere", "/tmp/x", "ext::sh -c x", "user@host:x", "-u", ""} {
		for _, k := range []string{"branch.main.remote", "branch.main.pushRemote", "remote.pushDefault"} {
			s, sub, n := gitKeyParts(k)
			if c := Classify(s, sub, n, v); c == Ordinary {
				t.Errorf("Classify(%q, %q) = ordinary; want refused", k, v)
			}
		}
	}
	// What git init and clone write, a new repository keeps.
	for _, k := range []string{"remote.origin.url", "core.bare", "core.repositoryFormatVersion", "core.worktree", "submodule.x.url"} {
		s, sub, n := gitKeyParts(k)
		if c := Classify(s, sub, n, "x"); c != NewRepo {
			t.Errorf("Classify(%q) = %d; want new-repository only", k, c)
		}
	}
}

package integration

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// refusedKeys are the Git config keys the workspace repository may not
// change, with a value each: the list the sandbox's unit test checks too.
func refusedKeys(t *testing.T) [][2]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "gitkeys", "testdata", "git-refused-keys.txt"))
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

// keyParts splits a key as git config takes it: section, subsection (""
// for none) and name, the section and name lower-case as forgebox reports
// them.
func keyParts(key string) (section, sub, name string) {
	first, last := strings.Index(key, "."), strings.LastIndex(key, ".")
	section, name = strings.ToLower(key[:first]), strings.ToLower(key[last+1:])
	if first != last {
		sub = key[first+1 : last]
	}
	return section, sub, name
}

func reportedKey(key string) string {
	s, sub, n := keyParts(key)
	if sub == "" {
		return s + "." + n
	}
	return s + "." + sub + "." + n
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// configSection is the text a raw write adds for key = value.
func configSection(key, value string) string {
	s, sub, n := keyParts(key)
	if sub == "" {
		return fmt.Sprintf("[%s]\n\t%s = %s\n", s, n, value)
	}
	return fmt.Sprintf("[%s %q]\n\t%s = %s\n", s, sub, n, value)
}

// watchHost reads path until stop is closed and returns every distinct
// content it saw: a host-side reader (a shell prompt running git status)
// during the run.
func watchHost(path string, stop <-chan struct{}) func() []string {
	var mu sync.Mutex
	var seen []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			b, _ := os.ReadFile(path)
			mu.Lock()
			if !slices.Contains(seen, string(b)) {
				seen = append(seen, string(b))
			}
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return func() []string {
		<-done
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

// Ordinary keys of the workspace repository's config can be changed from
// inside, with git config, and land in the host's file after the run.
func TestGitConfigOrdinaryKeys(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.gitRepo(e.ws)
		config := filepath.Join(e.ws, ".git", "config")
		e.git(e.ws, "config", "color.ui", "auto") // a key to unset
		before, _ := os.ReadFile(config)
		r, res := e.runJSON([]string{"--", "sh", "-c", `set -e
git config user.email me@example.com
git config core.autocrlf true
git config branch.main.rebase true
git config init.defaultBranch x
git config --unset color.ui
git config --get user.email`})
		if r.code != 0 || res.Stdout != "me@example.com\n" {
			t.Fatalf("git config in the sandbox: exit %d\nstdout: %s\nstderr: %s %s", r.code, res.Stdout, res.Stderr, r.stderr)
		}
		if len(res.Quarantined) != 0 {
			t.Errorf("quarantined = %+v; want none", res.Quarantined)
		}
		for k, want := range map[string]string{"user.email": "me@example.com", "core.autocrlf": "true",
			"branch.main.rebase": "true", "init.defaultbranch": "x"} {
			if got := strings.TrimSpace(e.git(e.ws, "config", "--file", config, "--get", k)); got != want {
				t.Errorf("host %s = %q; want %q", k, got, want)
			}
		}
		after, _ := os.ReadFile(config)
		if bytes.Contains(after, []byte("ui = auto")) {
			t.Errorf("color.ui is still set on the host:\n%s", after)
		}
		// The rest of the file is as it was.
		if !bytes.HasPrefix(after, before[:bytes.Index(before, []byte("[color]"))]) {
			t.Errorf("the host's config lost its beginning:\nbefore:\n%s\nafter:\n%s", before, after)
		}
	})
}

// Every key that makes Git run something or send data elsewhere is
// refused, whichever way the command writes it: git config, an append to
// the file, a rewrite renamed over it. The host's config never holds it,
// not even while the command runs, and the result reports each key.
func TestGitConfigRefusedKeys(t *testing.T) {
	keys := refusedKeys(t)
	var gitConfig, raw strings.Builder
	for _, kv := range keys {
		fmt.Fprintf(&gitConfig, "git config %s %s || echo FAILED %s >&2\n", shellQuote(kv[0]), shellQuote(kv[1]), kv[0])
		fmt.Fprintf(&raw, "printf '%%s' %s >> \"$f\"\n", shellQuote(configSection(kv[0], kv[1])))
	}
	for _, tt := range []struct{ name, script string }{
		{"git config", gitConfig.String()},
		{"append", "f=.git/config\n" + raw.String()},
		{"rename", `t=$(readlink .git/config); f=$t.new; cp "$t" "$f"
` + raw.String() + `mv "$f" "$t"
cp "$t" /tmp/c && if mv /tmp/c .git/config 2>/dev/null; then echo RENAMED-OVER-THE-MOUNT; fi
`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			forEachMode(t, func(t *testing.T, e *env) {
				e.gitRepo(e.ws)
				config := filepath.Join(e.ws, ".git", "config")
				before, _ := os.ReadFile(config)
				stop := make(chan struct{})
				seen := watchHost(config, stop)
				r, res := e.runJSON([]string{"--", "sh", "-c", tt.script + "touch set; sleep 2"})
				close(stop)
				if r.code != 0 || strings.Contains(res.Stdout, "RENAMED-OVER-THE-MOUNT") || strings.Contains(res.Stderr, "FAILED") {
					t.Fatalf("exit %d\nstdout: %s\nstderr: %s %s", r.code, res.Stdout, res.Stderr, r.stderr)
				}
				if _, err := os.Stat(filepath.Join(e.ws, "set")); err != nil {
					t.Fatalf("the command did not get to its end: %v", err)
				}
				for _, s := range seen() {
					if s != string(before) {
						t.Errorf("a host reader saw the config change during the run:\n%s", s)
					}
				}
				if after, _ := os.ReadFile(config); !bytes.Equal(after, before) {
					t.Errorf("the host's config changed:\nbefore:\n%s\nafter:\n%s", before, after)
				}
				for _, kv := range keys {
					want := reportedKey(kv[0])
					i := slices.IndexFunc(res.Quarantined, func(q quarantine) bool { return q.Key == want })
					if i < 0 {
						t.Errorf("%s is not reported in quarantined", want)
						continue
					}
					q := res.Quarantined[i]
					// The key's values in the copy, the one set last.
					values := strings.Split(q.Value, "\n")
					if q.Path != config || values[len(values)-1] != kv[1] || q.MovedTo == "" || pathWithin(q.MovedTo, e.ws) {
						t.Errorf("quarantined %s = %+v; want path %s, value %q, moved_to outside the workspace", want, q, config, kv[1])
					}
					if kept, err := os.ReadFile(q.MovedTo); err != nil || !bytes.Contains(bytes.ToLower(kept), []byte(strings.ToLower(keyName(kv[0])))) {
						t.Errorf("the refused copy %s does not hold %s (%v)", q.MovedTo, kv[0], err)
					}
				}
			})
		})
	}
}

func keyName(key string) string { return key[strings.LastIndex(key, ".")+1:] }

func pathWithin(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

// Ordinary changes are carried over while refused ones in the same run are
// dropped, and an edit the person makes on the host during the run stays:
// another key is merged with the run's, and for the same key theirs wins.
func TestGitConfigHostEditDuringRun(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.gitRepo(e.ws)
		config := filepath.Join(e.ws, ".git", "config")
		// --no-undo: the test waits for a file the run writes in the
		// workspace, which undo shows only when the run ends.
		run := e.start([]string{"run", "--json", "--no-undo", "--", "sh", "-c", `set -e
git config user.email agent@example.com
git config core.autocrlf true
git config core.fsmonitor /tmp/fb-evil
touch started
sleep 2`})
		waitFile(t, run, filepath.Join(e.ws, "started"), 30*time.Second)
		e.git(e.ws, "config", "user.name", "Owner")
		e.git(e.ws, "config", "core.autocrlf", "input")
		r := run.wait(t, 60*time.Second)
		res := decodeResult(t, r.stdout)
		if r.code != 0 {
			t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
		}
		for k, want := range map[string]string{"user.email": "agent@example.com", "user.name": "Owner", "core.autocrlf": "input"} {
			if got := strings.TrimSpace(e.git(e.ws, "config", "--file", config, "--get", k)); got != want {
				t.Errorf("host %s = %q; want %q", k, got, want)
			}
		}
		if b, _ := os.ReadFile(config); bytes.Contains(b, []byte("fsmonitor")) {
			t.Errorf("core.fsmonitor reached the host:\n%s", b)
		}
		if len(res.Quarantined) != 1 || res.Quarantined[0].Key != "core.fsmonitor" {
			t.Errorf("quarantined = %+v; want core.fsmonitor alone", res.Quarantined)
		}
		if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "core.autocrlf") }) {
			t.Errorf("warnings = %q; want one saying the host's core.autocrlf was kept", res.Warnings)
		}
	})
}

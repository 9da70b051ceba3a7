package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// attackOwn is a command line that tries every way to change forgebox's
// configuration and state under cfg and st (XDG_CONFIG_HOME and
// XDG_STATE_HOME): rewrite, replace, delete, chmod, touch, and rename a
// parent away to put a planted directory at its name.
func attackOwn(cfg, st string) string {
	allow := `{"forgebox": {"rules": {"allow": [{"pattern": "git push *"}]}}}`
	var b strings.Builder
	for _, l := range []string{
		"mkdir -p " + cfg + "/forgebox && echo '" + allow + "' > " + cfg + "/forgebox/config.json",
		"echo '" + allow + "' > " + cfg + "/forgebox/new.json",
		"rm -f " + cfg + "/forgebox/config.json",
		"chmod 666 " + cfg + "/forgebox/config.json",
		"touch -d 2001-01-01 " + cfg + "/forgebox/config.json",
		"mv " + cfg + "/forgebox " + cfg + "/old",
		"mv " + cfg + " " + cfg + ".old && mkdir -p " + cfg + "/forgebox && echo '" + allow + "' > " + cfg + "/forgebox/config.json",
		"rm -rf " + st + "/forgebox/sessions",
		"echo '[]' > " + st + "/forgebox/sessions/planted.json",
		"mkdir " + st + "/forgebox/history.db.spool",
		"mv " + st + " " + st + ".old && mkdir -p " + st + "/forgebox/sessions",
	} {
		b.WriteString("(" + l + ") 2>/dev/null; ")
	}
	b.WriteString("true")
	return b.String()
}

// forgebox run keeps its own configuration and state read-only when they
// lie in the workspace or a --rw path: XDG_CONFIG_HOME and XDG_STATE_HOME
// inside the project, existing or not yet made. Every attack runs, and the
// host files keep their content, mode and mtime; nothing planted appears.
func TestRunKeepsForgeboxState(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		for _, tc := range []struct {
			name     string
			base     string // where the XDG directories are
			flags    []string
			existing bool
		}{
			{"workspace", e.ws, nil, true},
			{"workspace, not made yet", e.ws, nil, false},
			{"rw", e.outside, []string{"--rw", e.outside}, true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				cfgHome, stateHome := filepath.Join(tc.base, "cfg"), filepath.Join(tc.base, "st")
				os.RemoveAll(cfgHome)
				os.RemoveAll(stateHome)
				defer os.RemoveAll(cfgHome + ".old")
				defer os.RemoveAll(stateHome + ".old")
				cfg := filepath.Join(cfgHome, "forgebox", "config.json")
				approvals := filepath.Join(stateHome, "forgebox", "sessions", "0123456789abcdef0123456789abcdef.json")
				watched := []string{cfg, filepath.Dir(cfg), cfgHome, approvals, filepath.Dir(approvals), filepath.Join(stateHome, "forgebox"), stateHome}
				if tc.existing {
					// trees/, caches/, gitconfig/, undo/: forgebox itself
					// keeps the writable roots' indexes, the private package
					// caches, the private .git/config copies and the undo
					// records there, as it keeps the history (--no-history
					// below).
					for _, d := range []string{cfgHome, filepath.Dir(cfg), stateHome, filepath.Join(stateHome, "forgebox"), filepath.Dir(approvals),
						filepath.Join(stateHome, "forgebox", "trees"), filepath.Join(stateHome, "forgebox", "caches"), filepath.Join(stateHome, "forgebox", "gitconfig"),
						filepath.Join(stateHome, "forgebox", "undo")} {
						e.mkdir(d)
					}
					e.write(cfg, `{"forgebox": {"rules": {"deny": [{"pattern": "sudo *"}]}}}`+"\n")
					os.Chmod(cfg, 0o600)
					e.write(approvals, "[]\n")
					old := time.Now().Add(-time.Hour)
					for _, p := range watched {
						os.Chtimes(p, old, old)
					}
				}
				before := map[string]snapshot{}
				for _, p := range watched {
					before[p] = snap(t, p)
				}
				saved := e.extra
				e.extra = append(e.extra, "XDG_CONFIG_HOME="+cfgHome, "XDG_STATE_HOME="+stateHome)
				defer func() { e.extra = saved }()
				// No history: forgebox itself would record the run there.
				r := e.run(append(append([]string{"run", "--no-history"}, tc.flags...), "-c", attackOwn(cfgHome, stateHome)))
				if r.code != 0 {
					t.Fatalf("forgebox run: exit %d\nstderr: %s", r.code, r.stderr)
				}
				if tc.existing {
					for _, p := range watched {
						unchanged(t, p, before[p])
					}
				}
				for _, p := range []string{cfg, filepath.Join(cfgHome, "forgebox", "new.json"), filepath.Join(stateHome, "forgebox", "sessions", "planted.json"),
					filepath.Join(stateHome, "forgebox", "history.db.spool"), cfgHome + ".old", stateHome + ".old"} {
					if p == cfg && tc.existing {
						continue
					}
					if _, err := os.Lstat(p); err == nil {
						t.Errorf("%s exists after the run: the command changed forgebox's own state", p)
					}
				}
			})
		}
		// A writable root inside forgebox's own state is refused.
		e.mkdir(filepath.Join(e.stateHome(), "forgebox"))
		for _, flags := range [][]string{
			{"--rw", filepath.Join(e.stateHome(), "forgebox")},
			{"--workspace", filepath.Join(e.stateHome(), "forgebox")},
		} {
			r := e.run(append(append([]string{"run"}, flags...), "--", "true"))
			if r.code != 125 || !strings.Contains(r.stderr, "forgebox's own configuration or state") {
				t.Errorf("forgebox run %q: exit %d, stderr %q; want 125 and the reason", flags, r.code, r.stderr)
			}
		}
	})
}

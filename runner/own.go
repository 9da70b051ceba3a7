package runner

import (
	"path/filepath"
	"slices"
)

// OwnPaths names forgebox's own configuration and state: what, written by
// a command or an agent, would steer every later forgebox (an allow rule
// in config.json, a session approval, a planted history row to rerun).
// The sandbox keeps them read-only wherever they lie in a writable root,
// and the file tools never change them, whatever the workspace is. This is
// the one list; both take it from here.
//
// They are the configuration directory ($XDG_CONFIG_HOME/forgebox), the
// state directory ($XDG_STATE_HOME/forgebox: session approvals, the
// default history and its spool), and the files --policy, --history-db or
// $FORGEBOX_HISTORY_DB name, with the history's companions (SQLite's -wal,
// -shm and -journal, forgebox's .spool). Paths are absolute and cleaned,
// not resolved: the consumers resolve them where they act. A directory
// ends in a slash (sandbox.Spec.Own: the sandbox makes a missing one, so
// that it can hold it read-only).
func OwnPaths(h Host, policyFile, historyDB string) []string {
	var out []string
	add := func(p, slash string) {
		if p == "" {
			return
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(h.Cwd, p)
		}
		if p = filepath.Clean(p); filepath.IsAbs(p) && !slices.Contains(out, p+slash) {
			out = append(out, p+slash)
		}
	}
	if cfg, err := h.userConfigPath(); err == nil {
		add(filepath.Dir(cfg), "/")
	}
	if st, err := h.xdg("XDG_STATE_HOME", filepath.Join(".local", "state")); err == nil {
		add(filepath.Join(st, "forgebox"), "/")
	}
	add(policyFile, "")
	for _, db := range []string{historyDB, h.Getenv("FORGEBOX_HISTORY_DB")} {
		if db == "" {
			continue
		}
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			add(db+suffix, "")
		}
		add(db+".spool", "/")
	}
	return out
}

package runner

import (
	"slices"
	"testing"
)

// ownPaths names the same places the configuration, the approvals and the
// history are read from, directories with a trailing slash.
func TestOwnPaths(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	for _, tc := range []struct {
		name        string
		env         map[string]string
		policy, hdb string
		want        []string
	}{
		{"defaults", nil, "", "", []string{"/h/.config/forgebox/", "/h/.local/state/forgebox/"}},
		{"xdg", map[string]string{"XDG_CONFIG_HOME": "/p/.cfg", "XDG_STATE_HOME": "/p/.st/"}, "", "",
			[]string{"/p/.cfg/forgebox/", "/p/.st/forgebox/"}},
		{"relative xdg ignored", map[string]string{"XDG_CONFIG_HOME": "cfg"}, "", "", []string{"/h/.config/forgebox/", "/h/.local/state/forgebox/"}},
		{"flags and env", map[string]string{"FORGEBOX_HISTORY_DB": "/p/e.db"}, "pol.json", "/p/h.db", []string{
			"/h/.config/forgebox/", "/h/.local/state/forgebox/", "/w/pol.json",
			"/p/h.db", "/p/h.db-wal", "/p/h.db-shm", "/p/h.db-journal", "/p/h.db.spool/",
			"/p/e.db", "/p/e.db-wal", "/p/e.db-shm", "/p/e.db-journal", "/p/e.db.spool/"}},
	} {
		got := OwnPaths(Host{Getenv: env(tc.env), Cwd: "/w", Home: "/h"}, tc.policy, tc.hdb)
		if !slices.Equal(got, tc.want) {
			t.Errorf("OwnPaths(%s) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

package integration

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// forgebox serve --net allow=HOST hands the allowlist to every command and
// shell session: an allowed host answers, and a refused one is reported to
// the model as the network layer, naming the host and how to allow it; the
// refused host's server is never reached.
func TestServeNetAllow(t *testing.T) {
	needTools(t, "curl")
	forEachMode(t, func(t *testing.T, e *env) {
		ok := serveHost(t, "127.0.0.1", nil)
		refused := serveHost(t, "127.0.0.1", nil)
		hosts := e.hostsFile("127.0.0.1 ok.test no.test")
		cfg, err := json.Marshal(map[string]any{"forgebox": map[string]any{
			"rules":   map[string]any{"allow": []map[string]string{{"pattern": "*"}}},
			"network": netConfig{AllowPrivate: []string{"127.0.0.0/8"}, Hosts: hosts},
		}})
		if err != nil {
			t.Fatal(err)
		}
		e.write(filepath.Join(e.configHome(), "forgebox", "config.json"), string(cfg))
		c := e.serveMCP(nil, "--net", "allow=ok.test")

		var out commandOutput
		c.call("run_shell_command", map[string]any{"command": "curl -sS " + ok.url("http", "ok.test")}, &out)
		if out.ExitCode != 0 || out.Stdout != "hello ok.test\n" || out.Blocked != nil {
			t.Errorf("allowed host: %+v", out)
		}
		c.call("run_shell_command", map[string]any{"command": "curl -sS -f " + refused.url("http", "no.test")}, &out)
		if b := out.Blocked; out.ExitCode == 0 || b == nil || b.Layer != "network" || !strings.Contains(b.Message, "no.test") ||
			!strings.Contains(b.Hint, "--net allow=no.test") {
			t.Errorf("refused host: %+v, blocked %+v", out, out.Blocked)
		}

		// Sessions run without the judge (each line is judged by the
		// server): the allowlist still comes from the flags and the
		// configuration.
		var st struct {
			Session string `json:"session"`
		}
		if res, text := c.call("shell_start", map[string]any{}, &st); res.IsError || st.Session == "" {
			t.Fatalf("shell_start: %s", text)
		}
		var sh shellOut
		c.call("shell_exec", map[string]any{"session": st.Session, "command": "curl -sS " + ok.url("http", "ok.test")}, &sh)
		if !strings.Contains(sh.Output, "hello ok.test") {
			t.Errorf("allowed host from a session: %+v", sh)
		}
		c.call("shell_exec", map[string]any{"session": st.Session, "command": "curl -sS " + refused.url("http", "no.test") + "; echo status=$?"}, &sh)
		if strings.Contains(sh.Output, "hello") || !strings.Contains(sh.Output, "not in the network allowlist") {
			t.Errorf("refused host from a session: %+v", sh)
		}
		ok.wantRequests(t, 2)
		refused.wantAccepted(t, 0)
	})
}

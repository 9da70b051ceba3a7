package integration

import (
	"path/filepath"
	"strings"
	"testing"
)

// A command line longer than one exec argument can carry is refused with
// the limit and what to do instead, before anything runs; one just under
// it runs. (It failed with "argument list too long" from the server's own
// exec before.)
func TestServeLongCommandLine(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.write(filepath.Join(e.configHome(), "forgebox", "config.json"), `{"forgebox": {"rules": {"allow": [{"pattern": "*"}]}}}`)
		// The judge asks about lines this long; the person approves.
		c := e.serveMCP(func(string) string { return "once" })
		var out commandOutput
		long := ": " + strings.Repeat("a", 1<<20) + "; touch M"
		res, text := c.call("run_shell_command", map[string]any{"command": long}, &out)
		if !res.IsError || out.Ran || e.ran() || !strings.Contains(text, "over the limit of 131071 bytes") || !strings.Contains(text, "write_file") {
			t.Errorf("1 MiB line: isError %v, ran %v, %.200q; want a refusal naming the limit", res.IsError, out.Ran, text)
		}
		near := ": " + strings.Repeat("a", 120<<10) + "; echo ok"
		if res, text := c.call("run_shell_command", map[string]any{"command": near}, &out); res.IsError || out.Stdout != "ok\n" {
			t.Errorf("120 KiB line: isError %v, stdout %q, %.200q; want it run", res.IsError, out.Stdout, text)
		}
	})
}

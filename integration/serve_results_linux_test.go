package integration

import (
	"encoding/json"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// serveResult is the part of a command's result these tests read.
type serveResult struct {
	Ran          bool   `json:"ran"`
	ExitCode     *int   `json:"exit_code"`
	IdleTimedOut bool   `json:"idle_timed_out"`
	Stdout       string `json:"stdout"`
	Blocked      *struct {
		Layer, Message, Hint string
	} `json:"blocked"`
	Quarantined []struct {
		Path string `json:"path"`
	} `json:"quarantined"`
	Warnings []string `json:"warnings"`
}

// Every result that did not run carries forgebox run's exit code for it
// (125 for bad input, 126 for the policy's or the person's refusal),
// never 0.
func TestServeNotRunExitCodes(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e = judgedEnv(t, e)
		c := e.serveMCP(nil)
		for _, tc := range []struct {
			tool string
			args map[string]any
			want int
		}{
			{"run_shell_command", map[string]any{"command": "  "}, 125},
			{"run_shell_command", map[string]any{"command": "echo a\x00b"}, 125},
			{"run_shell_command", map[string]any{"command": "true", "directory": "/etc"}, 125},
			{"run_shell_command", map[string]any{"command": "true", "timeout_ms": -5}, 125},
			{"run_shell_command", map[string]any{"command": "true", "idle_timeout_ms": -1}, 125},
			{"run_shell_command", map[string]any{"command": askLine}, 126},
			{"run_shell_command", map[string]any{"command": denyLine}, 126},
			{"git", map[string]any{"subcommand": "config", "args": []string{"core.pager", "x"}}, 125},
			{"git", map[string]any{"subcommand": "log", "args": []string{"--exec=x"}}, 125},
		} {
			var out serveResult
			res, text := c.call(tc.tool, tc.args, &out)
			if !res.IsError || out.Ran || out.ExitCode == nil || *out.ExitCode != tc.want || e.ran() {
				t.Errorf("%s %q: isError %v, %+v; want not run with exit code %d\n%s", tc.tool, tc.args, res.IsError, out, tc.want, text)
			}
		}
		var out serveResult
		if _, text := c.call("run_shell_command", map[string]any{"command": "true", "timeout_ms": -5}, &out); !strings.Contains(text, "timeout_ms") || !strings.Contains(text, "out of range") {
			t.Errorf("a negative timeout: %q; want the argument and its range named", text)
		}
	})
}

// A call can give a silent command more time than the server's idle
// timeout, and the hint says what happened: no output for that long.
func TestServeIdleTimeoutPerCall(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		c := e.serveMCP(nil, "--idle-timeout=1s")
		var out serveResult
		c.call("run_shell_command", map[string]any{"command": "sleep 3; echo built"}, &out)
		if out.Ran && out.Stdout == "built\n" || !out.IdleTimedOut || out.Blocked == nil || !strings.Contains(out.Blocked.Message, "printed nothing for 1s") || !strings.Contains(out.Blocked.Hint, "idle_timeout_ms") {
			t.Errorf("silent for 3 s under an idle timeout of 1 s: %+v", out)
		}
		c.call("run_shell_command", map[string]any{"command": "sleep 3; echo built", "idle_timeout_ms": 10000}, &out)
		if !out.Ran || out.Stdout != "built\n" || out.IdleTimedOut {
			t.Errorf("with idle_timeout_ms 10000: %+v; want it to finish", out)
		}
	})
}

// What run --json says about a run the MCP result says too: a planted
// file that forgebox moved aside.
func TestServeReportsQuarantine(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		c := e.serveMCP(nil)
		var out serveResult
		_, text := c.call("run_shell_command", map[string]any{"command": "mkdir -p sub && echo 'echo hi' > sub/.envrc"}, &out)
		if !out.Ran || len(out.Quarantined) == 0 || !strings.Contains(text, "moved aside") {
			t.Errorf("a planted .envrc: %+v\n%s; want it in quarantined and in the text", out, text)
		}
	})
}

// A long output is shown once (in the text, never also in the data),
// head and tail within the server's budget, and the omitted bytes are
// read with read_output.
func TestServeOutputBudget(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		c := e.serveMCP(nil)
		full, err := exec.Command("seq", "1", "100000").Output()
		if err != nil {
			t.Fatal(err)
		}
		res, text := c.call("run_shell_command", map[string]any{"command": "seq 1 100000"}, nil)
		if res.StructuredContent != nil {
			t.Errorf("the result has structured content too: the output would reach some models twice")
		}
		meta, _ := json.Marshal(res.Meta)
		if strings.Contains(string(meta), `"stdout"`) || strings.Contains(string(meta), "\\n99999\\n") {
			t.Errorf("the output is in _meta as well: %.200s", meta)
		}
		if len(text) > 25<<10 || !strings.HasPrefix(streamText(text, "stdout"), "1\n2\n3\n") || !strings.HasSuffix(streamText(text, "stdout"), "99999\n100000\n") {
			t.Fatalf("result text of %d bytes; want at most the 24 KiB budget and a little, head and tail:\n%.300s", len(text), text)
		}
		m := regexp.MustCompile(`bytes (\d+) to (\d+) of (\d+) omitted here; read them with read_output \{"output_id": "([^"]+)", "stream": "stdout", "offset": (\d+)\}`).FindStringSubmatch(text)
		if m == nil || m[3] != strconv.Itoa(len(full)) {
			t.Fatalf("no read_output line for %d bytes in %.2000s", len(full), text)
		}
		from, _ := strconv.Atoi(m[1])
		to, _ := strconv.Atoi(m[2])
		var got strings.Builder
		for off := from; off < to; {
			_, part := c.call("read_output", map[string]any{"output_id": m[4], "stream": "stdout", "offset": off}, nil)
			header, body, _ := strings.Cut(part, "\n")
			if body == "" {
				t.Fatalf("read_output at %d: %q", off, part)
			}
			got.WriteString(body)
			off += len(body)
			_ = header
		}
		if want := string(full[from:to]); got.String()[:to-from] != want {
			t.Errorf("read_output gave other bytes than the command printed between %d and %d", from, to)
		}
		if res, text := c.call("read_output", map[string]any{"output_id": "nope"}, nil); !res.IsError || !strings.Contains(text, "no output") {
			t.Errorf("read_output of an unknown id: %q", text)
		}
	})
}

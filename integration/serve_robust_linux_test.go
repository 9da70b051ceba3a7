package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawServe is forgebox serve with a go-sdk client on it and a way past
// the client: raw lines written to the server's input between the
// client's messages, and the replies to them (id null, or a string id
// starting "raw-") read apart from the client's.
type rawServe struct {
	t     *testing.T
	mu    sync.Mutex // one writer of the server's input at a time
	in    io.WriteCloser
	raw   chan map[string]any
	mcp   *mcpClient
	pid   int
	ended chan struct{} // the server's output ended
}

func (e *env) serveRaw() *rawServe {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := e.command(ctx, forgebox, "serve")
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	r := &rawServe{t: e.t, in: in, raw: make(chan map[string]any, 16), pid: cmd.Process.Pid, ended: make(chan struct{})}
	toClient, fromServer := io.Pipe()
	go func() {
		defer close(r.ended)
		defer fromServer.Close()
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var m map[string]any
			json.Unmarshal(sc.Bytes(), &m)
			if id, ok := m["id"]; ok && (id == nil || strings.HasPrefix(fmt.Sprint(id), "raw-")) {
				r.raw <- m
				continue
			}
			fromServer.Write(append(sc.Bytes(), '\n'))
		}
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "forgebox-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: toClient, Writer: (*rawInput)(r)}, nil)
	if err != nil {
		cancel()
		e.t.Fatalf("connect to forgebox serve: %v\nstderr: %s", err, stderr)
	}
	e.t.Cleanup(func() {
		cs.Close()
		cancel()
		cmd.Wait()
		if e.t.Failed() {
			e.t.Logf("forgebox serve's stderr:\n%s", stderr)
		}
	})
	r.mcp = &mcpClient{t: e.t, cs: cs, srv: cmd.Process}
	return r
}

// rawInput is the client's writer: each of its messages whole.
type rawInput rawServe

func (w *rawInput) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.in.Write(p)
}

func (w *rawInput) Close() error { return nil }

// send writes raw bytes to the server's input.
func (r *rawServe) send(b []byte) {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.in.Write(b); err != nil {
		r.t.Fatalf("write to forgebox serve: %v", err)
	}
}

// reply is the next reply to a raw line.
func (r *rawServe) reply(what string) map[string]any {
	r.t.Helper()
	select {
	case m := <-r.raw:
		return m
	case <-r.ended:
		select {
		case m := <-r.raw: // the last words
			return m
		default:
		}
		r.t.Fatalf("%s: forgebox serve closed its output (it died)", what)
	case <-time.After(60 * time.Second):
		r.t.Fatalf("%s: no reply in 60s", what)
	}
	return nil
}

// A message over the server's limit, a line that is not JSON, one that is
// not UTF-8 and one with a NUL byte each get a JSON-RPC error, and the
// server and its shell session carry on. (The SDK's own reader ended the
// connection on each, and every session with it: the client saw
// "Connection closed".) A write under the transport's limit but over
// write_file's own gets write_file's answer.
func TestServeSurvivesBadMessages(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.write(filepath.Join(e.configHome(), "forgebox", "config.json"), `{"forgebox": {"rules": {"allow": [{"pattern": "*"}]}}}`)
		r := e.serveRaw()
		var st struct{ Session string }
		if res, text := r.mcp.call("shell_start", map[string]any{}, &st); res.IsError || st.Session == "" {
			t.Fatalf("shell_start: %s", text)
		}
		// 17 MiB, written as the TypeScript SDK writes a request: the id
		// last.
		big := `{"method":"tools/call","params":{"name":"write_file","arguments":{"path":"big","content":"` +
			strings.Repeat("x", 17<<20) + `"}},"jsonrpc":"2.0","id":"raw-big"}` + "\n"
		start := time.Now()
		r.send([]byte(big))
		m := r.reply("17 MiB message")
		t.Logf("the 17 MiB message was answered in %v", time.Since(start).Round(time.Millisecond))
		if m["id"] != "raw-big" || errCode(m) != -32600 || !strings.Contains(errMessage(m), "over forgebox serve's limit of 16777216 bytes") ||
			!strings.Contains(errMessage(m), "tools/call of write_file") {
			t.Errorf("reply to a 17 MiB write_file: %v; want an Invalid Request error with its id, the limit and the tool", m)
		}
		if _, err := os.Lstat(filepath.Join(e.ws, "big")); err == nil {
			t.Error("the refused write_file wrote its file")
		}
		for _, c := range []struct{ name, line, id string }{
			{"garbage", "this is not JSON", "<nil>"},
			{"invalid UTF-8", `{"jsonrpc":"2.0","id":"raw-utf8","method":"tools/call","params":{"name":"run_shell_command","arguments":{"command":"touch M` + "\xff\xfe" + `"}}}`, "raw-utf8"},
			{"a NUL byte", `{"jsonrpc":"2.0","id":"raw-nul","method":"tools/call","params":{"name":"run_shell_command","arguments":{"command":"touch M` + "\x00" + `"}}}`, "<nil>"},
		} {
			r.send([]byte(c.line + "\n"))
			m := r.reply(c.name)
			if fmt.Sprint(m["id"]) != c.id || errCode(m) != -32700 {
				t.Errorf("reply to %s: %v; want a Parse error with id %s", c.name, m, c.id)
			}
		}
		if e.ran() {
			t.Error("a refused message ran its command")
		}
		var so shellOut
		if res, text := r.mcp.call("shell_exec", map[string]any{"session": st.Session, "command": "echo still-$((20+22))"}, &so); res.IsError || !strings.Contains(so.Output, "still-42") {
			t.Errorf("shell_exec after the bad messages: %s; want the session alive", text)
		}
		var out commandOutput
		if res, text := r.mcp.call("run_shell_command", map[string]any{"command": "echo fine"}, &out); res.IsError || out.Stdout != "fine\n" {
			t.Errorf("run_shell_command after the bad messages: %s", text)
		}
		// 9 MiB fits the message, not write_file: its own refusal answers.
		res, text := r.mcp.call("write_file", map[string]any{"path": "nine", "content": strings.Repeat("y", 9<<20)}, nil)
		if !res.IsError || !strings.Contains(text, "limit is 8388608 per write: write it in parts") {
			t.Errorf("write_file of 9 MiB: isError %v, %.300q; want write_file's own limit", res.IsError, text)
		}
	})
}

func errCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

func errMessage(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

// SIGTERM, SIGINT or SIGHUP with calls in flight stops their commands,
// answers each call with a result saying so, and the server exits within
// its grace period, leaving no process behind. (Before, it waited for
// the command to end, up to its timeout, and never answered.)
func TestServeStopsOnSignal(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.write(filepath.Join(e.configHome(), "forgebox", "config.json"), `{"forgebox": {"rules": {"allow": [{"pattern": "*"}]}}}`)
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
			stopOnSignal(t, e, sig)
		}
	})
}

var signalNames = map[syscall.Signal]string{syscall.SIGTERM: "SIGTERM", syscall.SIGINT: "SIGINT", syscall.SIGHUP: "SIGHUP"}

// stopOnSignal is one server stopped by sig.
func stopOnSignal(t *testing.T, e *env, sig syscall.Signal) {
	c := e.serveMCP(nil)
	var st struct{ Session string }
	if res, text := c.call("shell_start", map[string]any{}, &st); res.IsError || st.Session == "" {
		t.Fatalf("shell_start: %s", text)
	}
	run, inSession := marker(), marker()
	type answer struct {
		res *mcp.CallToolResult
		err error
		at  time.Time
	}
	answers := make(chan answer, 2)
	for _, p := range []*mcp.CallToolParams{
		{Name: "run_shell_command", Arguments: map[string]any{"command": "sleep " + run}},
		{Name: "shell_exec", Arguments: map[string]any{"session": st.Session, "command": "sleep " + inSession}},
	} {
		go func() {
			res, err := c.cs.CallTool(context.Background(), p)
			answers <- answer{res, err, time.Now()}
		}()
	}
	if !waitFor(20*time.Second, func() bool { return len(processesWith(run)) > 0 && len(processesWith(inSession)) > 0 }) {
		t.Fatal("the commands did not start")
	}
	sent := time.Now()
	if err := c.srv.Signal(sig); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		a := <-answers
		if a.err != nil {
			t.Errorf("a call in flight at %s: %v; want its answer", signalNames[sig], a.err)
			continue
		}
		text := ""
		for _, ct := range a.res.Content {
			if tc, ok := ct.(*mcp.TextContent); ok {
				text += tc.Text
			}
		}
		t.Logf("answered %v after %s: %.200q", a.at.Sub(sent).Round(time.Millisecond), signalNames[sig], text)
		if !a.res.IsError || !strings.Contains(text, "forgebox serve is shutting down (it received "+signalNames[sig]+")") || !strings.Contains(text, "was stopped") ||
			!(strings.Contains(text, "run_shell_command \"sleep "+run+"\"") || strings.Contains(text, "shell_exec \"sleep "+inSession+"\"")) {
			t.Errorf("answer at %s: isError %v, %q; want the shutdown, the command and that it was stopped", signalNames[sig], a.res.IsError, text)
		}
	}
	if !waitFor(10*time.Second, func() bool { return exited(c.srv.Pid) }) {
		t.Fatalf("forgebox serve did not exit in 10s after %s", signalNames[sig])
	}
	took := time.Since(sent)
	t.Logf("forgebox serve exited %v after %s", took.Round(time.Millisecond), signalNames[sig])
	if took > 6*time.Second {
		t.Errorf("forgebox serve exited %v after %s; want within its grace period of 5s", took, signalNames[sig])
	}
	for _, mk := range []string{run, inSession} {
		noProcesses(t, mk)
	}
}

// When the client closes the server's input with a call in flight, the
// call is answered as at a signal, and the server exits.
func TestServeStopsAtEndOfInput(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.write(filepath.Join(e.configHome(), "forgebox", "config.json"), `{"forgebox": {"rules": {"allow": [{"pattern": "*"}]}}}`)
		r := e.serveRaw()
		m := marker()
		r.send([]byte(`{"jsonrpc":"2.0","id":"raw-sleep","method":"tools/call","params":{"name":"run_shell_command","arguments":{"command":"sleep ` + m + `"}}}` + "\n"))
		if !waitFor(20*time.Second, func() bool { return len(processesWith(m)) > 0 }) {
			t.Fatal("the command did not start")
		}
		r.mu.Lock()
		r.in.Close()
		r.mu.Unlock()
		reply := r.reply("the call in flight at the end of the input")
		res, _ := reply["result"].(map[string]any)
		b, _ := json.Marshal(res["content"])
		if reply["id"] != "raw-sleep" || res["isError"] != true || !strings.Contains(string(b), "its client closed its input") {
			t.Errorf("answer at the end of the input: %v; want the shutdown", reply)
		}
		if !waitFor(10*time.Second, func() bool { return exited(r.pid) }) {
			t.Error("forgebox serve did not exit after its input closed")
		}
		noProcesses(t, m)
	})
}

// exited tells whether process pid has ended (gone, or a zombie not yet
// reaped).
func exited(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && len(s) > i+2 && s[i+2] == 'Z'
}

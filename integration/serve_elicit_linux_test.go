package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// rawClient speaks JSON-RPC to forgebox serve line by line, as a client
// of an older protocol (2025-06-18) does: the server asks it questions
// with elicitation/create requests of its own.
type rawClient struct {
	t   *testing.T
	in  io.WriteCloser
	out *bufio.Reader
}

func (e *env) serveOldClient(t *testing.T) *rawClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cmd := e.command(ctx, forgebox, "serve")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	c := &rawClient{t: t, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	c.send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{"elicitation": map[string]any{}},
		"clientInfo": map[string]any{"name": "raw", "version": "1"}}})
	c.read()
	c.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return c
}

func (c *rawClient) send(m map[string]any) {
	c.t.Helper()
	b, _ := json.Marshal(m)
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
}

func (c *rawClient) read() map[string]any {
	c.t.Helper()
	type line struct {
		b   []byte
		err error
	}
	ch := make(chan line, 1)
	go func() { b, err := c.out.ReadBytes('\n'); ch <- line{b, err} }()
	select {
	case l := <-ch:
		var m map[string]any
		if l.err != nil || json.Unmarshal(l.b, &m) != nil {
			c.t.Fatalf("read from forgebox serve: %v %q", l.err, l.b)
		}
		return m
	case <-time.After(60 * time.Second):
		c.t.Fatal("forgebox serve did not answer within 60 s")
	}
	return nil
}

// A client that fails to put the question to the person, or answers
// outside the offered answers, gets a tool result the model can act on
// (approval_required with a code for forgebox approve), never a JSON-RPC
// error; the command does not run.
func TestServeElicitationFailures(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e = judgedEnv(t, e)
		for i, answer := range []map[string]any{
			{"error": map[string]any{"code": -32603, "message": "the client broke"}},
			{"result": map[string]any{"action": "accept", "content": map[string]any{"answer": "maybe"}}},
			{"result": map[string]any{"action": "accept", "content": map[string]any{"answer": 7}}},
			{"result": map[string]any{"action": "accept"}},
		} {
			c := e.serveOldClient(t)
			c.send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{
				"name": "run_shell_command", "arguments": map[string]any{"command": askLine}}})
			q := c.read()
			if q["method"] != "elicitation/create" {
				t.Fatalf("case %d: the server sent %v; want elicitation/create", i, q)
			}
			reply := map[string]any{"jsonrpc": "2.0", "id": q["id"]}
			for k, v := range answer {
				reply[k] = v
			}
			c.send(reply)
			m := c.read()
			for m["id"] != 2.0 {
				m = c.read()
			}
			res, _ := m["result"].(map[string]any)
			b, _ := json.Marshal(m)
			if m["error"] != nil || res == nil || res["isError"] != true || !strings.Contains(string(b), "forgebox approve") || e.ran() {
				t.Errorf("case %d (%v): %s; want a tool result with approval_required and a code, nothing run", i, answer, b)
			}
		}
	})
}

package agent

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func callReq(name, args string) *mcp.CallToolRequest {
	return &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: name, Arguments: json.RawMessage(args)}}
}

func shutdownText(t *testing.T, r mcp.Result) (string, bool) {
	t.Helper()
	res, ok := r.(*mcp.CallToolResult)
	if !ok {
		t.Fatalf("result %T; want a CallToolResult", r)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text + "\n")
		}
	}
	return b.String(), res.IsError
}

// A call in flight at Begin is cancelled and answered with the shutdown,
// its command and the tool's own result; one that does not stop is
// answered anyway; one after Begin does not run; other methods pass.
func TestShutdownAnswersCalls(t *testing.T) {
	sd := NewShutdown(200 * time.Millisecond)
	started := make(chan struct{}, 2)
	var ran atomic.Int32
	h := sd.Middleware(func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ran.Add(1)
		if method != "tools/call" {
			return &mcp.ListToolsResult{}, nil
		}
		started <- struct{}{}
		if strings.Contains(string(req.GetParams().(*mcp.CallToolParamsRaw).Arguments), "stuck") {
			select {} // never stops
		}
		<-ctx.Done()
		return textResult("killed after 1s; output so far: zzz", true), nil
	})
	type answer struct {
		r   mcp.Result
		err error
	}
	answers := make(chan answer, 2)
	for _, args := range []string{`{"command":"sleep 60"}`, `{"command":"stuck","session":"s1"}`} {
		go func() {
			r, err := h(context.Background(), "tools/call", callReq("shell_exec", args))
			answers <- answer{r, err}
		}()
	}
	<-started
	<-started
	sd.Begin("it received SIGTERM")
	for range 2 {
		a := <-answers
		if a.err != nil {
			t.Fatalf("call at Begin: %v; want a result", a.err)
		}
		text, isErr := shutdownText(t, a.r)
		if !isErr || !strings.Contains(text, "forgebox serve is shutting down (it received SIGTERM): shell_exec ") || !strings.Contains(text, "was stopped after") {
			t.Errorf("answer at Begin: %q; want an error naming the shutdown and the call", text)
		}
		switch {
		case strings.Contains(text, `"sleep 60"`) && !strings.Contains(text, "output so far: zzz"):
			t.Errorf("answer of the call that stopped: %q; want the tool's own result too", text)
		case strings.Contains(text, `"stuck" in session "s1"`) && !strings.Contains(text, "did not stop within 200ms"):
			t.Errorf("answer of the call that did not stop: %q; want it said", text)
		}
	}
	before := ran.Load()
	r, err := h(context.Background(), "tools/call", callReq("run_shell_command", `{"command":"touch x"}`))
	if text, isErr := shutdownText(t, r); err != nil || !isErr || !strings.Contains(text, `run_shell_command "touch x" was not started`) || ran.Load() != before {
		t.Errorf("call after Begin: %q, %v, ran %v; want it refused unrun", text, err, ran.Load() != before)
	}
	if r, err := h(context.Background(), "tools/list", nil); err != nil || r == nil {
		t.Errorf("tools/list after Begin: %v, %v; want it served", r, err)
	}
}

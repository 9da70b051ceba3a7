package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Shutdown stops a server's tool calls when the server is told to stop:
// Begin cancels the context of every call in flight, which stops its
// command (a run's cancellation kills its whole process tree; a session's
// Exec returns), and the call is answered with an error result that says
// the server is shutting down, what was running and that it was stopped,
// followed by what the tool itself returned. A call that comes after
// Begin is answered so without running.
//
// The SDK does not cancel calls when its session closes (it waits for
// them): without this a SIGTERM waited for the command to end, up to its
// timeout, and its answer was never sent.
type Shutdown struct {
	ctx    context.Context
	cancel context.CancelFunc
	// answerWithin bounds how long a call may take to stop once
	// cancelled before it is answered without the tool's own result.
	answerWithin time.Duration

	mu     sync.Mutex
	reason string
}

// NewShutdown returns a Shutdown that answers a stopped call within
// answerWithin of Begin.
func NewShutdown(answerWithin time.Duration) *Shutdown {
	ctx, cancel := context.WithCancel(context.Background())
	return &Shutdown{ctx: ctx, cancel: cancel, answerWithin: answerWithin}
}

// Begin stops the calls in flight and refuses new ones; reason says why
// ("it received SIGTERM").
func (s *Shutdown) Begin(reason string) {
	s.mu.Lock()
	if s.reason == "" {
		s.reason = reason
	}
	s.mu.Unlock()
	s.cancel()
}

func (s *Shutdown) why() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reason
}

// Middleware is the receiving middleware (mcp.Server.AddReceivingMiddleware)
// that ties tool calls to the shutdown.
func (s *Shutdown) Middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		what := callSummary(req)
		if s.ctx.Err() != nil {
			return s.result(what+" was not started", nil), nil
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(s.ctx, cancel)
		defer stop()
		start := time.Now()
		type answer struct {
			res mcp.Result
			err error
		}
		done := make(chan answer, 1)
		go func() {
			res, err := next(ctx, method, req)
			done <- answer{res, err}
		}()
		var a answer
		select {
		case a = <-done:
			if s.ctx.Err() == nil {
				return a.res, a.err
			}
		case <-s.ctx.Done():
			select {
			case a = <-done:
			case <-time.After(s.answerWithin):
				a.err = fmt.Errorf("it did not stop within %v; forgebox serve exits anyway, and what it ran dies with it", s.answerWithin)
			}
		}
		stopped := fmt.Sprintf("%s was stopped after %.1fs", what, time.Since(start).Seconds())
		r := s.result(stopped, a.err)
		if own, ok := a.res.(*mcp.CallToolResult); ok && own != nil {
			r.Content = append(r.Content, own.Content...)
			r.StructuredContent = own.StructuredContent
			if own.Meta != nil {
				r.Meta = own.Meta
			}
		}
		return r, nil
	}
}

// result is the answer of a call the shutdown stopped.
func (s *Shutdown) result(what string, err error) *mcp.CallToolResult {
	text := fmt.Sprintf("forgebox serve is shutting down (%s): %s; its processes were killed. Nothing more runs in this server: the client must start it again.", s.why(), what)
	if err != nil && !errors.Is(err, context.Canceled) {
		text += " (" + err.Error() + ")"
	}
	return textResult(text, true)
}

// callSummary says which tool call this is, and its command when it has
// one: what a person reading the answer needs to know was stopped.
func callSummary(req mcp.Request) string {
	p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
	if !ok || p == nil {
		return "the tool call"
	}
	var args struct {
		Command    string   `json:"command"`
		Subcommand string   `json:"subcommand"`
		Args       []string `json:"args"`
		Session    string   `json:"session"`
	}
	json.Unmarshal(p.Arguments, &args)
	what := p.Name
	switch {
	case args.Command != "":
		what += " " + quoteShort(args.Command)
	case args.Subcommand != "":
		what += " " + quoteShort(strings.Join(append([]string{"git", args.Subcommand}, args.Args...), " "))
	}
	if args.Session != "" {
		what += " in session " + quoteShort(args.Session)
	}
	return what
}

// quoteShort quotes s for a message, cut to a readable length.
func quoteShort(s string) string {
	const max = 200
	if len(s) > max {
		s = s[:max] + "..."
	}
	return fmt.Sprintf("%q", s)
}

package agent

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// progressEvery is how often a long command reports progress to a client
// that asked for it (a progressToken in the call).
const progressEvery = 3 * time.Second

// progress reports a running command to the client: how long it has run
// and its last line of output, every progressEvery, until stop is called.
// Clients show it while they wait (and may cancel the call, which kills
// the command's whole tree).
type progress struct {
	mu   sync.Mutex
	last []byte // the end of the output, enough for its last line
}

// see is the run's Output: it keeps the end of what the command printed.
func (p *progress) see(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = append(p.last, b...)
	if len(p.last) > 4096 {
		p.last = append(p.last[:0], p.last[len(p.last)-1024:]...)
	}
}

// lastLine is the last line of output with something on it, shortened,
// control characters dropped.
func (p *progress) lastLine() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	lines := bytes.Split(bytes.TrimRight(p.last, "\r\n\t "), []byte("\n"))
	line := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, string(lines[len(lines)-1]))
	return oneLine(line, 160)
}

// reportProgress starts reporting r's progress when the call asked for
// it; it returns the function that stops the reports.
func reportProgress(ctx context.Context, req *mcp.CallToolRequest, r *RunRequest) (stop func()) {
	if req == nil || req.Session == nil || req.Params == nil || req.Params.GetProgressToken() == nil {
		return func() {}
	}
	token := req.Params.GetProgressToken()
	p := &progress{}
	r.Output = p.see
	done := make(chan struct{})
	finished := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(finished)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			elapsed := time.Since(start).Round(time.Second)
			msg := fmt.Sprintf("running for %v", elapsed)
			if line := p.lastLine(); line != "" {
				msg += "; last output: " + line
			}
			if r.Timeout > 0 {
				msg += fmt.Sprintf(" (timeout %v)", r.Timeout)
			}
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token,
				Progress: elapsed.Seconds(), Total: r.Timeout.Seconds(), Message: msg})
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// logTo sends a log message to the client, when it asked for them
// (logging/setLevel); forgebox logs what it decided and did.
func logTo(ctx context.Context, req *mcp.CallToolRequest, level mcp.LoggingLevel, format string, args ...any) {
	if req == nil || req.Session == nil {
		return
	}
	req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: level, Logger: "forgebox", Data: fmt.Sprintf(format, args...)})
}

package integration

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A long command reports its progress (elapsed time, last line) to a
// client that sent a progressToken, forgebox logs what it did to a client
// that set a log level, and a cancelled call kills the command's tree.
func TestServeProgressLogsAndCancel(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		var mu sync.Mutex
		var progress, logs []string
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		client := mcp.NewClient(&mcp.Implementation{Name: "forgebox-test", Version: "1"}, &mcp.ClientOptions{
			ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
				mu.Lock()
				progress = append(progress, r.Params.Message)
				mu.Unlock()
			},
			LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
				mu.Lock()
				logs = append(logs, fmt.Sprint(r.Params.Level, " ", r.Params.Data))
				mu.Unlock()
			},
		})
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: e.command(ctx, forgebox, "serve"), TerminateDuration: 2 * time.Second}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
			t.Fatal(err)
		}
		p := &mcp.CallToolParams{Name: "run_shell_command", Arguments: map[string]any{"command": "for i in 1 2 3 4 5 6 7; do echo step $i; sleep 1; done"}}
		p.SetProgressToken("build-1")
		// Clients of the 2026-07-28 protocol give the level with each call;
		// older ones set it once (logging/setLevel, above).
		p.Meta[mcp.MetaKeyLogLevel] = "info"
		if res, err := cs.CallTool(ctx, p); err != nil || res.IsError {
			t.Fatalf("call: %v %v", res, err)
		}
		// Notifications may trail the result a little.
		waitFor(5*time.Second, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return strings.Contains(strings.Join(logs, "\n"), "exit 0")
		})
		mu.Lock()
		if len(progress) < 1 || !strings.Contains(progress[len(progress)-1], "running for") || !strings.Contains(progress[len(progress)-1], "last output: step") {
			t.Errorf("progress notifications: %q; want at least one with the elapsed time and the last line", progress)
		}
		if joined := strings.Join(logs, "\n"); !strings.Contains(joined, "info running for i in") || !strings.Contains(joined, "exit 0") {
			t.Errorf("log messages: %q; want the run and its end", logs)
		}
		mu.Unlock()

		// Cancelling the call kills the command, children included.
		unique := fmt.Sprintf("%d.%d", time.Now().UnixNano()%1000, 7)
		callCtx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			cs.CallTool(callCtx, &mcp.CallToolParams{Name: "run_shell_command", Arguments: map[string]any{"command": "sh -c 'sleep " + unique + "5; touch M' & wait"}})
			close(done)
		}()
		if !waitFor(10*time.Second, func() bool { return exec.Command("pgrep", "-f", "sleep "+unique).Run() == nil }) {
			t.Fatal("the command never started")
		}
		stop()
		<-done
		if !waitFor(10*time.Second, func() bool { return exec.Command("pgrep", "-f", "sleep "+unique).Run() != nil }) {
			t.Errorf("the cancelled command's child still runs")
		}
		if e.ran() {
			t.Errorf("the cancelled command went on")
		}
	})
}

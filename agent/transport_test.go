package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// syncBuffer is an output the transport and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Each line the SDK's reader would end the connection on gets a JSON-RPC
// error with the id it can read, and the next message is still read.
func TestTransportAnswersBadLines(t *testing.T) {
	const max = 1000
	big := `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"write_file","arguments":{"content":"` + strings.Repeat("a", 2*max) + `"}}`
	tests := []struct {
		name, line string
		id         string
		code       int64
		says       string
	}{
		{"garbage", "hello there", "null", jsonrpc.CodeParseError, "not JSON"},
		{"a NUL byte", `{"jsonrpc":"2.0","id":7,"method":"ping"` + "\x00}", "null", jsonrpc.CodeParseError, "not JSON"},
		{"invalid UTF-8", `{"jsonrpc":"2.0","id":8,"method":"p` + "\xff\xfe" + `"}`, "8", jsonrpc.CodeParseError, "UTF-8"},
		{"not JSON-RPC", `{"id":9,"method":"ping"}`, "9", jsonrpc.CodeInvalidRequest, "JSON-RPC 2.0"},
		{"a number", `42`, "null", jsonrpc.CodeInvalidRequest, "JSON-RPC 2.0"},
		{"a batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, "null", jsonrpc.CodeInvalidRequest, "batches"},
		{"trailing data", `{"jsonrpc":"2.0","id":10,"method":"ping"} x`, "null", jsonrpc.CodeParseError, "not JSON"},
		{"too large, id last", big + `,"id":11}`, "11", jsonrpc.CodeInvalidRequest, "over forgebox serve's limit of 1000 bytes"},
		{"too large, id first", `{"id":"abc","jsonrpc":"2.0","method":"tools/call","params":{"name":"write_file","arguments":{"content":"` + strings.Repeat("a", 2*max) + `"}}}`,
			`"abc"`, jsonrpc.CodeInvalidRequest, "(tools/call of write_file)"},
		{"too large, id in the middle", `{"jsonrpc":"2.0","method":"x","params":{"a":"` + strings.Repeat("a", 3*edge) + `"},"id":12,"b":1}`,
			"null", jsonrpc.CodeInvalidRequest, "over forgebox serve's limit"},
		{"too large, not JSON", strings.Repeat("x", 3*max), "null", jsonrpc.CodeInvalidRequest, "over forgebox serve's limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.line + "\n\n" + `{"jsonrpc":"2.0","id":99,"method":"ping"}` + "\n"
			var out, log syncBuffer
			tr := NewTransport(io.NopCloser(strings.NewReader(in)), &out, &log)
			tr.MaxMessage = max
			c, err := tr.Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			m, err := c.Read(ctx)
			if err != nil {
				t.Fatalf("Read after %s: %v; want the next message", tt.name, err)
			}
			if r, ok := m.(*jsonrpc.Request); !ok || r.Method != "ping" {
				t.Fatalf("Read after %s = %#v; want the ping", tt.name, m)
			}
			var reply struct {
				Version string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   struct {
					Code    int64
					Message string
				}
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &reply) != nil {
				t.Fatalf("output %q; want one JSON-RPC error", out.String())
			}
			if reply.Version != "2.0" || string(reply.ID) != tt.id || reply.Error.Code != tt.code || !strings.Contains(reply.Error.Message, tt.says) {
				t.Errorf("reply to %s = %s; want id %s, code %d, a message saying %q", tt.name, lines[0], tt.id, tt.code, tt.says)
			}
			if !strings.Contains(log.String(), "refused a message") {
				t.Errorf("log %q; want the refusal", log.String())
			}
		})
	}
}

// At the end of the input Read waits for Close, so that calls in flight
// can still be answered, and InputClosed tells the owner.
func TestTransportInputClosed(t *testing.T) {
	var out syncBuffer
	tr := NewTransport(io.NopCloser(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)), &out, nil)
	c, _ := tr.Connect(context.Background())
	if m, err := c.Read(context.Background()); err != nil || m.(*jsonrpc.Request).Method != "ping" {
		t.Fatalf("Read = %v, %v; want the last message, without a newline", m, err)
	}
	select {
	case <-tr.InputClosed():
	case <-time.After(5 * time.Second):
		t.Fatal("InputClosed not closed at the end of the input")
	}
	done := make(chan error)
	go func() { _, err := c.Read(context.Background()); done <- err }()
	select {
	case err := <-done:
		t.Fatalf("Read at the end of the input returned %v before Close", err)
	case <-time.After(100 * time.Millisecond):
	}
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := tr.WaitAnswered(short); err == nil {
		t.Error("WaitAnswered with a call unanswered returned nil")
	}
	if err := c.Write(context.Background(), &jsonrpc.Response{ID: mustID(t, float64(1)), Result: json.RawMessage(`{}`)}); err != nil {
		t.Fatalf("Write after the input closed: %v", err)
	}
	if err := tr.WaitAnswered(context.Background()); err != nil {
		t.Errorf("WaitAnswered after the answer: %v", err)
	}
	c.Close()
	if err := <-done; err != io.EOF {
		t.Errorf("Read after Close = %v; want EOF", err)
	}
	if got := out.String(); got != `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n" {
		t.Errorf("output %q; want the answer", got)
	}
}

func mustID(t *testing.T, v any) jsonrpc.ID {
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

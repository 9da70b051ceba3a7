package agent

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultOutputBudget is how many bytes of a command's output a result
// shows the model by default: well under what agent clients take in one
// tool result (Claude Code refuses results over 25,000 tokens, Codex and
// Gemini CLI cut them at about 40,000 characters) and small enough that a
// few results leave the model room to think. The rest stays readable with
// read_output.
const DefaultOutputBudget = 24 << 10

// maxKeptOutputs and maxKeptBytes bound the outputs the server keeps for
// read_output: the newest ones win.
const (
	maxKeptOutputs = 32
	maxKeptBytes   = 64 << 20
)

// keptOutput is a command's output as forgebox captured it.
type keptOutput struct {
	id             string
	stdout, stderr string
}

// outputs keeps the outputs of the latest commands whose results did not
// show them whole.
type outputs struct {
	mu   sync.Mutex
	kept []keptOutput // oldest first
	next int
}

// keep stores an output and returns the id read_output takes.
func (o *outputs) keep(id, stdout, stderr string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.next++
	if id == "" {
		id = "out-" + strconv.Itoa(o.next)
	}
	o.kept = append(o.kept, keptOutput{id: id, stdout: stdout, stderr: stderr})
	total := 0
	for _, k := range o.kept {
		total += len(k.stdout) + len(k.stderr)
	}
	for len(o.kept) > maxKeptOutputs || (total > maxKeptBytes && len(o.kept) > 1) {
		total -= len(o.kept[0].stdout) + len(o.kept[0].stderr)
		o.kept = o.kept[1:]
	}
	return id
}

func (o *outputs) find(id string) (keptOutput, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for i := len(o.kept) - 1; i >= 0; i-- {
		if o.kept[i].id == id {
			return o.kept[i], true
		}
	}
	return keptOutput{}, false
}

// shares splits the budget between two streams: each gets what it needs
// when both fit, else at least half, and what one leaves the other takes.
func shares(a, b, budget int) (int, int) {
	if a+b <= budget {
		return a, b
	}
	half := budget / 2
	switch {
	case a < half:
		return a, budget - a
	case b < half:
		return budget - b, b
	}
	return half, budget - half
}

// clip shows at most n bytes of s: a quarter from its head and the rest
// from its tail (where errors and summaries are), cut at character
// boundaries, with a line in the middle that says what was left out and
// how to read it.
func clip(s string, n int, stream, id string) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	head := n / 4
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	// Whole lines where a line ends near the cut.
	if i := strings.LastIndexByte(s[max(0, head-256):head], '\n'); i >= 0 {
		head = max(0, head-256) + i + 1
	}
	tail := len(s) - (n - head)
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	if i := strings.IndexByte(s[tail:min(len(s), tail+256)], '\n'); i >= 0 && tail > 0 && s[tail-1] != '\n' {
		tail += i + 1
	}
	return fmt.Sprintf("%s\n[forgebox: bytes %d to %d of %d omitted here; read them with read_output {\"output_id\": %q, \"stream\": %q, \"offset\": %d}]\n%s",
		s[:head], head, tail, len(s), id, stream, head, s[tail:]), true
}

// ReadOutputInput is read_output's arguments.
type ReadOutputInput struct {
	OutputID string `json:"output_id" jsonschema:"the output_id a command's result gave"`
	Stream   string `json:"stream,omitempty" jsonschema:"stdout (the default) or stderr"`
	Offset   int64  `json:"offset,omitempty" jsonschema:"the first byte to show, from 0"`
	Length   int64  `json:"length,omitempty" jsonschema:"how many bytes to show (default and most: the server's output budget, usually 24576)"`
}

const readOutputDescription = `Read a part of a command's output that its result left out (a long output shows its head and tail, and says which bytes it omitted). Give the result's output_id, the stream, and the offset the result named; length defaults to the server's output budget. The server keeps the outputs of its latest commands (forgebox keeps at most --max-output bytes of each stream, head and tail). To search an output instead, run the command again with grep or redirect it to a file in the workspace.`

func (s *server) addOutputTools(srv *mcp.Server) {
	addTool(srv, &mcp.Tool{Name: "read_output", Title: "Read omitted output", Description: readOutputDescription,
		Annotations: readOnly()}, s.readOutput)
}

func (s *server) readOutput(_ context.Context, _ *mcp.CallToolRequest, in ReadOutputInput) (*mcp.CallToolResult, any, error) {
	k, ok := s.outputs.find(in.OutputID)
	if !ok {
		return textResult(fmt.Sprintf("no output %q: the server keeps the outputs of its latest %d commands whose results left something out; run the command again", in.OutputID, maxKeptOutputs), true), nil, nil
	}
	text := k.stdout
	switch in.Stream {
	case "", "stdout":
		in.Stream = "stdout"
	case "stderr":
		text = k.stderr
	default:
		return textResult(fmt.Sprintf("stream is %q: give stdout or stderr", in.Stream), true), nil, nil
	}
	if in.Offset < 0 || in.Offset > int64(len(text)) {
		return textResult(fmt.Sprintf("offset %d is outside the %s, which has %d bytes", in.Offset, in.Stream, len(text)), true), nil, nil
	}
	n := int64(s.budget())
	if in.Length < 0 {
		return textResult(fmt.Sprintf("length is %d: give a number of bytes from 1 to %d", in.Length, n), true), nil, nil
	}
	if in.Length > 0 && in.Length < n {
		n = in.Length
	}
	start, end := int(in.Offset), int(min(in.Offset+n, int64(len(text))))
	for end < len(text) && end > start && !utf8.RuneStart(text[end]) {
		end--
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s of %s, bytes %d to %d of %d", in.Stream, in.OutputID, start, end, len(text))
	if end < len(text) {
		fmt.Fprintf(&b, " (more: offset %d)", end)
	}
	b.WriteString("\n")
	b.WriteString(text[start:end])
	return textResult(b.String(), false), nil, nil
}

// budget is the server's output budget.
func (s *server) budget() int {
	if s.c.OutputBudget > 0 {
		return s.c.OutputBudget
	}
	return DefaultOutputBudget
}

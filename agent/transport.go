package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxMessage is the most bytes one inbound message may hold: the
// go-sdk's own default line limit, so a client that works with other
// servers built on it works here too. It leaves write_file's own limit
// (8 MiB of content) room for JSON's escaping of typical text, so such a
// write reaches the tool and gets its own answer; and it bounds what one
// line can make the server buffer.
const DefaultMaxMessage = 16 << 20

// Transport is the MCP transport of forgebox serve: newline-delimited
// JSON-RPC on two streams, like the go-sdk's StdioTransport, except that a
// message the SDK cannot take is answered here instead of ending the
// connection. The SDK's reader gives up, and with it every open shell
// session, on the first line over its limit, not JSON, or not a JSON-RPC
// message; Transport answers such a line with a JSON-RPC error (with the
// request's id when it can be read cheaply, else id null, as JSON-RPC
// says for an unreadable request), drops it, and reads on.
//
// Batches (a JSON array of messages) are refused the same way: MCP took
// them out in protocol version 2025-06-18, and the SDK ends the
// connection on one once a later version is agreed.
//
// When the input ends, Read does not report it at once: calls still
// running can still be answered on the output. InputClosed is closed
// instead, and the owner shuts down and calls Close, which ends Read.
type Transport struct {
	in  io.ReadCloser
	out io.Writer
	log io.Writer
	// MaxMessage bounds one inbound message (DefaultMaxMessage when 0).
	MaxMessage int

	inputClosed chan struct{}

	mu sync.Mutex
	// unanswered are the ids of the calls read and not yet answered.
	unanswered map[jsonrpc.ID]bool
}

// NewTransport returns a transport reading in and writing out. log, when
// not nil, gets a line for each message refused.
func NewTransport(in io.ReadCloser, out, log io.Writer) *Transport {
	return &Transport{in: in, out: out, log: log, inputClosed: make(chan struct{}), unanswered: map[jsonrpc.ID]bool{}}
}

// WaitAnswered waits until every call read has been answered on the
// output, or ctx is done. (A call's handler returning is not enough: the
// SDK writes its answer after, and drops it if the session is closed
// first.)
func (t *Transport) WaitAnswered(ctx context.Context) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		t.mu.Lock()
		n := len(t.unanswered)
		t.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d calls not answered: %w", n, ctx.Err())
		case <-tick.C:
		}
	}
}

// InputClosed is closed when the input ends (or cannot be read).
func (t *Transport) InputClosed() <-chan struct{} { return t.inputClosed }

// Connect implements mcp.Transport; call it once.
func (t *Transport) Connect(context.Context) (mcp.Connection, error) {
	max := t.MaxMessage
	if max <= 0 {
		max = DefaultMaxMessage
	}
	c := &conn{t: t, max: max, incoming: make(chan jsonrpc.Message), closed: make(chan struct{})}
	go c.readLoop()
	return c, nil
}

// conn is a Transport's one connection.
type conn struct {
	t        *Transport
	max      int
	incoming chan jsonrpc.Message

	writeMu sync.Mutex

	closeOnce sync.Once
	closed    chan struct{}
}

func (c *conn) SessionID() string { return "" }

func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case m := <-c.incoming:
		if r, ok := m.(*jsonrpc.Request); ok && r.IsCall() {
			c.t.mu.Lock()
			c.t.unanswered[r.ID] = true
			c.t.mu.Unlock()
		}
		return m, nil
	case <-c.closed:
		return nil, io.EOF
	}
}

func (c *conn) Write(ctx context.Context, m jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		return fmt.Errorf("encode a JSON-RPC message: %w", err)
	}
	err = c.writeLine(data)
	if r, ok := m.(*jsonrpc.Response); ok {
		c.t.mu.Lock()
		delete(c.t.unanswered, r.ID)
		c.t.mu.Unlock()
	}
	return err
}

func (c *conn) writeLine(data []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.t.out.Write(append(data, '\n'))
	return err
}

// Close closes the input (the output stays the caller's) and ends Read.
func (c *conn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		err = c.t.in.Close()
		close(c.closed)
	})
	return err
}

// readLoop reads the input line by line: each message for Read, each
// line that is not one answered and dropped. It may stay blocked in a read
// of the input after Close (no portable way unblocks a read of stdin);
// the process is ending then.
func (c *conn) readLoop() {
	defer close(c.t.inputClosed)
	br := bufio.NewReaderSize(c.t.in, 64<<10)
	for {
		l, err := readLine(br, c.max)
		if l.size > 0 {
			m, refusal := c.decode(l)
			if refusal != nil {
				c.refuse(refusal)
			} else {
				select {
				case c.incoming <- m:
				case <-c.closed:
					return
				}
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && c.t.log != nil {
				fmt.Fprintf(c.t.log, "forgebox: serve: read the client's messages: %v\n", err)
			}
			return
		}
	}
}

// line is one line of input, without its newline: all of it when it fits
// the limit, else its start and end only (for the request's id).
type line struct {
	data       []byte // nil when over the limit
	head, tail []byte
	size       int
}

// edge is how much of an oversized line's start and end is kept.
const edge = 4 << 10

// readLine reads up to the next newline, keeping at most max bytes.
func readLine(br *bufio.Reader, max int) (line, error) {
	var l line
	var buf []byte
	over := false
	for {
		frag, err := br.ReadSlice('\n')
		l.size += len(frag)
		if over {
			// Keep a rolling end of the line.
			l.tail = append(l.tail, frag...)
			if len(l.tail) > 2*edge {
				l.tail = append(l.tail[:0], l.tail[len(l.tail)-edge:]...)
			}
		} else {
			buf = append(buf, frag...)
			if n := len(bytes.TrimRight(buf, "\n")); n > max {
				over = true
				l.head = append([]byte(nil), buf[:min(len(buf), edge)]...)
				l.tail = append([]byte(nil), buf[len(buf)-min(len(buf), edge):]...)
				buf = nil
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == nil {
			l.size-- // the newline
		}
		if over {
			l.tail = bytes.TrimRight(l.tail, "\r\n")
		} else if l.data = bytes.TrimRight(buf, "\r\n"); len(bytes.TrimSpace(l.data)) == 0 {
			l.size = 0 // a blank line: nothing to answer
		}
		return l, err
	}
}

// refusal is the JSON-RPC error that answers a line.
type refusal struct {
	id      json.RawMessage // null when unknown
	code    int64
	message string
}

// decode turns a line into a message, or the refusal that answers it.
func (c *conn) decode(l line) (jsonrpc.Message, *refusal) {
	if l.data == nil {
		what := ""
		if m := headMethod(l.head); m != "" {
			what = " (" + m + ")"
		}
		return nil, &refusal{id: oversizedID(l.head, l.tail), code: jsonrpc.CodeInvalidRequest,
			message: fmt.Sprintf("message of %d bytes%s is over forgebox serve's limit of %d bytes per message: it was not read, and nothing was done. Send less in one call: a file over write_file's limit is made by a command instead, or in parts",
				l.size, what, c.max)}
	}
	data := bytes.TrimSpace(l.data)
	if !utf8.Valid(data) {
		return nil, &refusal{id: lenientID(data), code: jsonrpc.CodeParseError,
			message: "message is not valid UTF-8 (JSON text must be): it was not read, and nothing was done"}
	}
	if !json.Valid(data) {
		return nil, &refusal{id: json.RawMessage("null"), code: jsonrpc.CodeParseError,
			message: "message is not JSON (one JSON-RPC message per line, no NUL bytes or raw control characters): it was not read, and nothing was done"}
	}
	if data[0] == '[' {
		return nil, &refusal{id: json.RawMessage("null"), code: jsonrpc.CodeInvalidRequest,
			message: "JSON-RPC batches are not supported (MCP removed them in protocol version 2025-06-18): send one message per line; nothing was done"}
	}
	m, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return nil, &refusal{id: lenientID(data), code: jsonrpc.CodeInvalidRequest,
			message: fmt.Sprintf("not a JSON-RPC 2.0 message: %v; nothing was done", err)}
	}
	return m, nil
}

// refuse answers a line the server could not take, and logs it.
func (c *conn) refuse(r *refusal) {
	if c.t.log != nil {
		fmt.Fprintf(c.t.log, "forgebox: serve: refused a message (id %s): %s\n", r.id, r.message)
	}
	type wireError struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	data, err := json.Marshal(struct {
		Version string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   wireError       `json:"error"`
	}{"2.0", r.id, wireError{r.code, r.message}})
	if err == nil {
		c.writeLine(data)
	}
}

// validID is id if it is a JSON-RPC id (a string or a number), else null.
func validID(id json.RawMessage) json.RawMessage {
	var v any
	if json.Unmarshal(id, &v) == nil {
		switch v.(type) {
		case string, float64:
			return id
		}
	}
	return json.RawMessage("null")
}

// lenientID is the id of a message the SDK refused, read by
// encoding/json (which takes invalid UTF-8 in strings), or null.
func lenientID(data []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(data, &m) != nil || m.ID == nil {
		return json.RawMessage("null")
	}
	return validID(m.ID)
}

// oversizedID reads the id of a message too large to read whole: from its
// start, when a member "id" comes before the first value that does not
// fit, else from its end, when "id" is the object's last member (as
// JSON.stringify writes the TypeScript SDK's requests).
func oversizedID(head, tail []byte) json.RawMessage {
	if id, ok := headMember(head, "id"); ok {
		return validID(id)
	}
	if m := tailID().FindSubmatch(tail); m != nil {
		return validID(m[1])
	}
	return json.RawMessage("null")
}

// tailID matches a last member "id" with a number or a plain string. It
// is compiled on first use: its {0,200} unrolls into a large program,
// and compiling it when the package initialised cost every forgebox
// process, `forgebox run` included, about 1 ms of CPU (issue 21).
var tailID = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`[,{]\s*"id"\s*:\s*(-?[0-9]+|"[^"\\]{0,200}")\s*\}\s*$`)
})

// headMethod is what an oversized message's start says it is: its method,
// and the tool a tools/call names when that comes before the arguments.
func headMethod(head []byte) string {
	raw, ok := headMember(head, "method")
	var method string
	if !ok || json.Unmarshal(raw, &method) != nil || len(method) > 100 {
		return ""
	}
	if method != "tools/call" {
		return method
	}
	d := json.NewDecoder(bytes.NewReader(head))
	if !enterMember(d, "params") {
		return method
	}
	raw, ok = member(d, "name")
	var name string
	if ok && json.Unmarshal(raw, &name) == nil && len(name) <= 100 {
		return method + " of " + name
	}
	return method
}

// headMember reads a top-level member of the object the truncated JSON
// text head starts, if it is complete in head.
func headMember(head []byte, name string) (json.RawMessage, bool) {
	d := json.NewDecoder(bytes.NewReader(head))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	return member(d, name)
}

// member reads the members of the object d is in until name; it reads
// each other value whole, and fails where head ends.
func member(d *json.Decoder, name string) (json.RawMessage, bool) {
	for d.More() {
		k, err := d.Token()
		if err != nil {
			return nil, false
		}
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, false
		}
		if k == name {
			return v, true
		}
	}
	return nil, false
}

// enterMember moves d into the top-level member name's object value.
func enterMember(d *json.Decoder, name string) bool {
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	for d.More() {
		k, err := d.Token()
		if err != nil {
			return false
		}
		if k == name {
			t, err := d.Token()
			return err == nil && t == json.Delim('{')
		}
		var skip json.RawMessage
		if d.Decode(&skip) != nil {
			return false
		}
	}
	return false
}

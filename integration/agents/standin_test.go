//go:build linux && agents

package agents

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// step is one tool call the stand-in model asks for. Tool is the tool's
// name as forgebox or the client names it; the client may qualify it
// (mcp__forgebox__run_shell_command, forgebox__run_shell_command).
type step struct {
	Tool string
	Args map[string]any
	// Before, when set, runs once before the model asks for this call,
	// with the tool results the model has seen so far: what happens
	// between two turns of the model (a person answering at a terminal).
	// An error ends the conversation with a text instead of the call.
	Before func(results []json.RawMessage) error
}

func shell(line string) step {
	return step{Tool: "run_shell_command", Args: map[string]any{"command": line}}
}

// standin is a model API on 127.0.0.1 that answers every conversation by
// asking for the script's next tool call — the one after as many tool
// results as the conversation holds — and, once the script is done, with
// a short text. It records every request and the tool results it saw.
type standin struct {
	t      *testing.T
	script []step
	proto  protocol
	url    string

	mu       sync.Mutex
	requests []recorded
	results  []json.RawMessage // the latest conversation's tool results, in order
	missing  []string          // tools the script asked for that the client did not offer
	searched map[int]bool      // steps at which the model searched for its tool

	// before serializes the steps' Before; done holds each one's outcome.
	before sync.Mutex
	done   map[int]error
}

type recorded struct {
	Method, Path string
	Body         json.RawMessage
}

// protocol is one model API's wire format.
type protocol interface {
	// results returns a request's tool results, in order, as sent.
	results(body []byte) ([]json.RawMessage, error)
	// tools returns the names of the tools a request offers.
	tools(body []byte) []string
	// reply writes an answer to a request: a call of tool with args, or
	// (tool == "") the text.
	reply(w http.ResponseWriter, r *http.Request, body []byte, n int, tool string, args map[string]any, text string)
}

func newStandin(t *testing.T, proto protocol, script ...step) *standin {
	t.Helper()
	s := &standin{t: t, script: script, proto: proto}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: s}
	go srv.Serve(l)
	t.Cleanup(func() {
		srv.Close()
		s.save()
	})
	s.url = "http://" + l.Addr().String()
	return s
}

func (s *standin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	raw := json.RawMessage(body)
	if !json.Valid(body) {
		raw, _ = json.Marshal(string(body))
	}
	s.requests = append(s.requests, recorded{r.Method, r.URL.String(), raw})
	s.mu.Unlock()
	if r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	got, err := s.proto.results(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	offered := s.proto.tools(body)
	s.mu.Lock()
	if len(got) >= len(s.results) {
		s.results = got
	}
	n := len(s.requests)
	s.mu.Unlock()
	if len(offered) == 0 {
		// A client's side request (a title, a routing or next-speaker
		// check): no tools, so no step of the script.
		s.proto.reply(w, r, body, n, "", nil, `{"reasoning":"stand-in","next_speaker":"user","model_choice":"flash"}`)
		return
	}
	if len(got) >= len(s.script) {
		s.proto.reply(w, r, body, n, "", nil, fmt.Sprintf("done: %d tool calls made", len(got)))
		return
	}
	next := s.script[len(got)]
	if err := s.runBefore(len(got), got); err != nil {
		s.proto.reply(w, r, body, n, "", nil, "stand-in: before step "+fmt.Sprint(len(got))+": "+err.Error())
		return
	}
	name := pick(offered, next.Tool)
	if sr, ok := s.proto.(searcher); ok && name == "" && !s.searchedFor(len(got)) {
		// The client defers MCP tools behind a tool search, as a model
		// would use it: search for the tool, then call it.
		if search := sr.searchTool(offered); search != "" {
			sr.search(w, n, search, next.Tool)
			return
		}
	}
	if name == "" {
		s.mu.Lock()
		s.missing = append(s.missing, next.Tool)
		s.mu.Unlock()
		s.proto.reply(w, r, body, n, "", nil, "stand-in: the client offers no tool "+next.Tool+"; it offers "+strings.Join(offered, ", "))
		return
	}
	s.proto.reply(w, r, body, n, name, next.Args, "")
}

// runBefore runs step i's Before once, however many requests the client
// makes for that step (a retry, a tool search first), and returns its
// error every time.
func (s *standin) runBefore(i int, results []json.RawMessage) error {
	if s.script[i].Before == nil {
		return nil
	}
	s.before.Lock()
	defer s.before.Unlock()
	if err, ok := s.done[i]; ok {
		return err
	}
	err := s.script[i].Before(results)
	if err != nil {
		s.t.Errorf("before step %d (%s): %v", i, s.script[i].Tool, err)
	}
	if s.done == nil {
		s.done = map[int]error{}
	}
	s.done[i] = err
	return err
}

// searcher is a protocol whose client may hide MCP tools until the model
// searches for them.
type searcher interface {
	// searchTool returns the offered tool that searches, or "".
	searchTool(offered []string) string
	// search writes a call of the search tool looking for want.
	search(w http.ResponseWriter, n int, searchTool, want string)
}

// searchedFor reports whether the model already searched at the step with
// that many tool results, and records that it has.
func (s *standin) searchedFor(step int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.searched == nil {
		s.searched = map[int]bool{}
	}
	done := s.searched[step]
	s.searched[step] = true
	return done
}

// pick finds the offered tool that is want: forgebox's own (qualified by
// the client with the server's name) before any other of that name.
func pick(offered []string, want string) string {
	for _, name := range offered {
		if strings.Contains(name, "forgebox") && (strings.HasSuffix(name, "__"+want) || strings.HasSuffix(name, "_"+want)) {
			return name
		}
	}
	for _, name := range offered {
		if name == want {
			return name
		}
	}
	return ""
}

// offered returns the tools the client offered in its first request that
// offered any.
func (s *standin) offered() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.requests {
		if names := s.proto.tools(r.Body); len(names) > 0 {
			return names
		}
	}
	return nil
}

// toolResults returns the tool results the client sent back, in order; the
// test fails unless it sent one for every step.
func (s *standin) toolResults() []string {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.missing) > 0 {
		s.t.Errorf("the client did not offer %v", s.missing)
	}
	var out []string
	for _, r := range s.results {
		out = append(out, string(r))
	}
	if len(out) != len(s.script) {
		s.t.Errorf("%d tool results for %d steps: %q", len(out), len(s.script), out)
	}
	return out
}

// save writes the requests to $FORGEBOX_AGENTS_RECORD/<test>.json when that
// is set: the record of exactly what a client sent its model.
func (s *standin) save() {
	dir := os.Getenv("FORGEBOX_AGENTS_RECORD")
	if dir == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, _ := json.MarshalIndent(s.requests, "", "  ")
	name := strings.ReplaceAll(s.t.Name(), "/", "_") + ".json"
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		s.t.Logf("record: %v", err)
	}
}

package runner

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/forgebox/forgebox/pathtree"
	"github.com/forgebox/forgebox/policy"
)

// An ApprovalRequest is a command waiting for a person's approval that the agent's
// client could not ask for (an MCP client without elicitation, or one
// that declines every question). The server files it under a short code
// and tells the model to ask the person to run forgebox approve CODE in a
// terminal; the person's answer is written next to it, and the model's
// next identical call finds it and runs once.
//
// Only the person can answer: requests live in forgebox's state
// directory, which the sandbox hides from every run and the file tools
// cannot reach, never in the workspace (then no request is filed at all), and
// forgebox approve asks on a terminal.
type ApprovalRequest struct {
	Code      string   `json:"code"`
	Session   string   `json:"session"`
	Workspace string   `json:"workspace"`
	Dir       string   `json:"dir"`
	Line      string   `json:"line,omitempty"`
	Argv      []string `json:"argv,omitempty"`
	// Why is what the agent said the command is for.
	Why string `json:"why,omitempty"`
	// Sandbox is what the server's sandbox lets the command reach: the
	// person's answer is judged as the call will be.
	Sandbox policy.Containment `json:"sandbox"`
	// Policy is the server's --policy file, when it has one.
	Policy  string    `json:"policy,omitempty"`
	Created time.Time `json:"created"`
	// Answer is empty while the request waits, then once, session,
	// always or no.
	Answer   string    `json:"answer,omitempty"`
	Answered time.Time `json:"answered,omitzero"`

	path string
}

// How long a request waits for its answer, and how long an answer waits
// for the call it approves.
const (
	RequestLife = 30 * time.Minute
	AnswerLife  = 10 * time.Minute
)

// codeAlphabet has no letters that read as others (no I, L, O, U).
const codeAlphabet = "ABCDEFGHJKMNPQRSTVWXYZ23456789"

const codeLen = 8

// requestDir holds the pending requests.
func (h Host) requestDir() (string, error) {
	dir, err := h.xdg("XDG_STATE_HOME", filepath.Join(".local", "state"))
	if err != nil {
		return "", err
	}
	return ResolvePath(filepath.Join(dir, "forgebox", "requests")), nil
}

// requestStore is the request directory, refused inside the workspace:
// there the command could write an answer itself.
func requestStore(h Host, workspace string) (string, error) {
	dir, err := h.requestDir()
	if err != nil {
		return "", err
	}
	return dir, outsideWorkspace(dir, workspace)
}

// outsideWorkspace refuses a request store inside the workspace: there the
// command could answer its own approval request.
func outsideWorkspace(dir, workspace string) error {
	if workspace != "" && pathtree.Within(dir, workspace) {
		return fmt.Errorf("forgebox's state directory %s is inside the workspace %s, where a command could answer its own approval request; set XDG_STATE_HOME outside it", dir, workspace)
	}
	return nil
}

// NormalizeCode reads a code as a person may type it: any case, with or
// without the dash.
func NormalizeCode(code string) (string, error) {
	c := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(code), "-", ""))
	if len(c) != codeLen || strings.Trim(c, codeAlphabet) != "" {
		return "", fmt.Errorf("%q is not an approval code: a code is %d letters and digits like ABCD-2345, as the agent's result shows it", truncate(code, 20), codeLen)
	}
	return c, nil
}

// ShowCode prints a code as people read it: ABCD-2345.
func ShowCode(code string) string {
	if len(code) != codeLen {
		return code
	}
	return code[:4] + "-" + code[4:]
}

func newCode() string {
	b := make([]byte, codeLen)
	rand.Read(b)
	for i := range b {
		b[i] = codeAlphabet[int(b[i])%len(codeAlphabet)]
	}
	return string(b)
}

// sameCommand reports whether r asks about this command of this session.
func (r *ApprovalRequest) sameCommand(session, dir, line string, argv []string) bool {
	return r.Session == session && r.Dir == dir && r.Line == line && slices.Equal(r.Argv, argv)
}

// expired: a request nobody answered in time, or an answer nobody used.
func (r *ApprovalRequest) expired(now time.Time) bool {
	if r.Answer == "" {
		return now.Sub(r.Created) > RequestLife
	}
	return now.Sub(r.Answered) > AnswerLife
}

// FileRequest files a request for a command of a session, or returns the
// one still waiting for the same command, so that a model calling again
// before the person answered does not pile up codes.
func FileRequest(h Host, o PolicyOptions, dir, line string, argv []string, why string) (*ApprovalRequest, error) {
	workspace, session := o.Workspace, o.Session
	if session == "" {
		return nil, ErrNoSession
	}
	store, err := requestStore(h, workspace)
	if err != nil {
		return nil, err
	}
	all, err := loadRequests(store)
	if err != nil {
		return nil, err
	}
	for _, r := range all {
		if r.Answer == "" && r.sameCommand(session, dir, line, argv) {
			return r, nil
		}
	}
	r := &ApprovalRequest{Code: newCode(), Session: session, Workspace: workspace, Dir: dir, Line: line, Argv: argv,
		Why: truncate(why, 200), Sandbox: o.Sandbox, Policy: o.File, Created: time.Now().UTC()}
	r.path = filepath.Join(store, r.Code+".json")
	return r, r.save()
}

// TakeAnswer returns the person's answer to this command's request, if
// one was given, and removes the request: an answer approves one call.
func TakeAnswer(h Host, workspace, session, dir, line string, argv []string) (string, bool, error) {
	store, err := requestStore(h, workspace)
	if err != nil {
		return "", false, err
	}
	all, err := loadRequests(store)
	if err != nil {
		return "", false, err
	}
	for _, r := range all {
		if r.Answer != "" && r.sameCommand(session, dir, line, argv) {
			if err := os.Remove(r.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return "", false, fmt.Errorf("remove the answered request %s: %w", r.path, err)
			}
			return r.Answer, true, nil
		}
	}
	return "", false, nil
}

// LoadRequest reads the request with this code.
func LoadRequest(h Host, code string) (*ApprovalRequest, error) {
	c, err := NormalizeCode(code)
	if err != nil {
		return nil, err
	}
	store, err := h.requestDir()
	if err != nil {
		return nil, err
	}
	r, err := readRequest(filepath.Join(store, c+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no approval request %s: it was answered already, expired (requests wait %v), or belongs to another user", ShowCode(c), RequestLife)
	}
	if err != nil {
		return nil, err
	}
	if r.expired(time.Now()) {
		os.Remove(r.path)
		return nil, fmt.Errorf("the approval request %s expired: requests wait %v; ask the agent to try the command again", ShowCode(c), RequestLife)
	}
	if r.Answer != "" {
		return nil, fmt.Errorf("the approval request %s was answered already (%s)", ShowCode(c), r.Answer)
	}
	return r, nil
}

// PendingRequests lists the requests waiting for an answer, oldest
// first.
func PendingRequests(h Host) ([]*ApprovalRequest, error) {
	store, err := h.requestDir()
	if err != nil {
		return nil, err
	}
	all, err := loadRequests(store)
	if err != nil {
		return nil, err
	}
	var out []*ApprovalRequest
	for _, r := range all {
		if r.Answer == "" {
			out = append(out, r)
		}
	}
	return out, nil
}

// Record writes the person's answer: the scope approved, or no.
func (r *ApprovalRequest) Record(scope policy.Scope, yes bool) error {
	if err := outsideWorkspace(filepath.Dir(r.path), r.Workspace); err != nil {
		return err
	}
	r.Answer = "no"
	if yes {
		r.Answer = scope.String()
	}
	r.Answered = time.Now().UTC()
	return r.save()
}

func (r *ApprovalRequest) save() error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the approval request: %w", err)
	}
	if err := writeFileAtomic(r.path, append(data, '\n')); err != nil {
		return fmt.Errorf("record the approval request: %w", err)
	}
	return nil
}

func readRequest(path string) (*ApprovalRequest, error) {
	data, err := ReadSmallFile(path)
	if err != nil {
		return nil, err
	}
	var r ApprovalRequest
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("read the approval request %s: %w", path, err)
	}
	if filepath.Base(path) != r.Code+".json" {
		return nil, fmt.Errorf("read the approval request %s: it holds the code %q", path, r.Code)
	}
	r.path = path
	return &r, nil
}

// loadRequests reads every request in the store, removing the expired
// ones; a store not yet created holds none.
func loadRequests(store string) ([]*ApprovalRequest, error) {
	entries, err := os.ReadDir(store)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the approval requests in %s: %w", store, err)
	}
	now := time.Now()
	var out []*ApprovalRequest
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		r, err := readRequest(filepath.Join(store, e.Name()))
		if err != nil {
			continue // not a request of ours; never an approval
		}
		if r.expired(now) {
			os.Remove(r.path)
			continue
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	return out, nil
}

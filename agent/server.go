package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/forgebox/forgebox/pathtree"
	"github.com/forgebox/forgebox/sandbox"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/forgebox/forgebox/files"
	"github.com/forgebox/forgebox/policy"
	"github.com/forgebox/forgebox/session"
	"github.com/forgebox/forgebox/undo"
)

// Backend is the run path the server shares with the command line: it
// judges, runs, approves and records exactly as forgebox run, check and
// policy approve do, with the settings the server was started with. The
// server adds only what a model needs: tools, approvals through the
// client, and results shaped for a model.
type Backend interface {
	// Run runs one command on forgebox run's run path and returns the
	// result forgebox run --json would print, as data.
	Run(ctx context.Context, r RunRequest) (RunResult, error)
	// Check judges a command as forgebox run would in r.Dir.
	Check(ctx context.Context, r Target) (*policy.Decision, error)
	// Approve records a person's approval of a command for the server's
	// session (policy.Session) or for good (policy.Always).
	Approve(ctx context.Context, r Target, scope policy.Scope) error
	// FileRequest files a command for a person to answer outside the
	// client, with forgebox approve CODE, and returns the code: the way
	// to approve for clients that cannot ask (runner.FileRequest).
	FileRequest(ctx context.Context, r Target, why string) (code string, err error)
	// TakeAnswer returns the person's answer to the command's request,
	// if they gave one; an answer counts for one call (runner.TakeAnswer).
	TakeAnswer(ctx context.Context, r Target) (answer string, ok bool, err error)
}

// Target is a command to judge: a line, or a program and its arguments,
// and the directory it would start in.
type Target struct {
	Line string
	Argv []string
	Dir  string
	// Session: the command runs in a shell session, which lives on a
	// terminal without undo (its changes show as they happen): the judge
	// must not count on undo for it.
	Session bool
}

// RunRequest is one command for Backend.Run.
type RunRequest struct {
	Target
	Timeout, IdleTimeout time.Duration
	// Yes: a person approved this command, once.
	Yes bool
	// Env sets variables for the command (NAME=VALUE).
	Env []string
	// Output, when set, sees the output as it arrives, for progress
	// reports (sandbox.Streams.Observe).
	Output func([]byte)
}

// Config fixes what the server's tools may do. The model reaches only the
// tools' arguments: the workspace, the sandbox's settings and the policy
// come from the person who started the server.
type Config struct {
	Workspace string // absolute, symbolic links resolved
	Version   string
	SessionID string // the server's history and approval session
	Backend   Backend

	// OutputBudget is how many bytes of a command's output a result shows
	// (DefaultOutputBudget when 0); read_output reads the rest.
	OutputBudget int

	// DefaultTimeout is a command's timeout when the model gives none;
	// MaxTimeout caps what it gives. IdleTimeout ends a command that
	// printed nothing for that long.
	DefaultTimeout, MaxTimeout, IdleTimeout time.Duration

	// Files, when set, offers the file tools, confined to the workspace.
	Files *files.FS
	// Sessions, when set, offers the shell session tools; SessionArgv is
	// the program a session runs in dir (forgebox run --pty ... bash).
	Sessions    *session.Manager
	SessionArgv func(dir string) []string
	// Record, when set, records a command run in a shell session in the
	// history; it returns the run's history key.
	Record func(SessionCommand) string
	// CheckWorkspace, when set, runs the sandbox's post-run check of the
	// writable roots now: a session's commands may plant a hook or an
	// .envrc long before the session ends, so it runs after each command
	// and each read of a session.
	CheckWorkspace func() ([]sandbox.Quarantined, []string)
	// Undo, when set, offers the undo tool on the workspace's records.
	Undo undo.Store
}

// Defaults of Config.
const (
	DefaultTimeout     = 2 * time.Minute
	DefaultMaxTimeout  = 10 * time.Minute
	DefaultIdleTimeout = 60 * time.Second
)

// server holds the tools' state.
type server struct {
	c       Config
	pending pending
	outputs outputs

	mu   sync.Mutex
	cwds map[string]string // shell sessions' directories, by id
	own  map[string]bool   // undo records of the commands this server ran
}

// NewServer returns the MCP server with forgebox's tools.
func NewServer(c Config) (*mcp.Server, error) {
	if c.Backend == nil || !filepath.IsAbs(c.Workspace) {
		return nil, errors.New("agent: a server needs a backend and an absolute workspace")
	}
	if c.DefaultTimeout <= 0 {
		c.DefaultTimeout = DefaultTimeout
	}
	if c.MaxTimeout <= 0 {
		c.MaxTimeout = DefaultMaxTimeout
	}
	if c.DefaultTimeout > c.MaxTimeout {
		c.DefaultTimeout = c.MaxTimeout
	}
	s := &server{c: c}
	srv := mcp.NewServer(&mcp.Implementation{Name: "forgebox", Title: "forgebox: sandboxed shell", Version: c.Version},
		&mcp.ServerOptions{Instructions: s.instructions()})
	srv.AddReceivingMiddleware(s.clientCouldNotAsk)
	s.addShellTools(srv)
	s.addOutputTools(srv)
	s.addFileTools(srv)
	s.addSessionTools(srv)
	s.addUndoTool(srv)
	return srv, nil
}

func (s *server) instructions() string {
	return fmt.Sprintf(`forgebox runs your commands in a sandbox: the workspace %s is writable, the rest of the system read-only, secrets hidden, the network %s.
Every command is judged by a policy first: it is allowed, denied (the result says why), or needs a person's approval (you will be told; do not try to work around it).
Use run_shell_command for one-off commands, check_command to learn whether a command would be allowed, the file tools to read and change files without a shell, git for version control, and shell_start/shell_exec for a shell whose state persists.`,
		s.c.Workspace, "as configured when the server started")
}

// couldNotAsk marks a call whose question the client failed to put to
// the person; its value is the client's error.
type couldNotAsk struct{}

// clientCouldNotAsk turns a question the client failed to answer (its
// elicitation failed, or it answered outside the offered answers, which
// the SDK refuses before forgebox sees it) into the tool's own result:
// the call is made again without asking, so the model gets the answer a
// client without elicitation gets (approval_required, with the code a
// person can answer in a terminal), never a bare JSON-RPC error.
func (s *server) clientCouldNotAsk(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil && method == "tools/call" && strings.Contains(err.Error(), "fulfilling input request") && ctx.Value(couldNotAsk{}) == nil {
			return next(context.WithValue(ctx, couldNotAsk{}, err.Error()), method, req)
		}
		return res, err
	}
}

// directory resolves a tool's directory argument: relative to the
// workspace, or absolute; it must lie inside the workspace.
func (s *server) directory(dir string) (string, error) {
	if dir == "" {
		return s.c.Workspace, nil
	}
	if strings.IndexByte(dir, 0) >= 0 {
		return "", errors.New("directory contains a NUL byte")
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(s.c.Workspace, dir)
	}
	real, err := filepath.EvalSymlinks(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("directory %s does not exist", dir)
	}
	if err != nil {
		return "", fmt.Errorf("directory %s: %v", dir, err)
	}
	if !pathtree.Within(real, s.c.Workspace) {
		return "", fmt.Errorf("directory %s lies outside the workspace; commands run inside the workspace %s", dir, s.c.Workspace)
	}
	if st, err := os.Stat(real); err != nil || !st.IsDir() {
		return "", fmt.Errorf("%s is not a directory", dir)
	}
	return real, nil
}

// timeout is the timeout of a command the model asked for ms of: the
// default for none, capped at the server's limit. A negative one is an
// error the model can act on.
func (s *server) timeout(ms int64) (d time.Duration, capped bool, err error) {
	max := s.c.MaxTimeout / time.Millisecond
	switch {
	case ms < 0:
		return 0, false, fmt.Errorf("timeout_ms is %d: give a number of milliseconds from 1 to %d, or leave it out for the default (%d)", ms, max, s.c.DefaultTimeout/time.Millisecond)
	case ms == 0:
		return s.c.DefaultTimeout, false, nil
	case ms > int64(max):
		return s.c.MaxTimeout, true, nil
	}
	return time.Duration(ms) * time.Millisecond, false, nil
}

// idleTimeout is how long a command may print nothing, as the model asked
// (ms): the server's default for none; never longer than the command's
// timeout, which ends it anyway.
func (s *server) idleTimeout(ms int64, timeout time.Duration) (time.Duration, error) {
	max := s.c.MaxTimeout / time.Millisecond
	switch {
	case ms < 0:
		return 0, fmt.Errorf("idle_timeout_ms is %d: give a number of milliseconds from 1 to %d, or leave it out for the server's default (%d)", ms, max, s.c.IdleTimeout/time.Millisecond)
	case ms == 0:
		return s.c.IdleTimeout, nil
	}
	d := time.Duration(min(ms, int64(max))) * time.Millisecond
	return min(d, timeout), nil
}

// textResult is a tool result for the model: text for it to read, and
// isError when the tool could not do what was asked.
func textResult(text string, isError bool) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isError}
}

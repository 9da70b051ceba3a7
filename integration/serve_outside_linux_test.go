package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// startServe starts forgebox serve with these options, says initialize to
// it over stdio as a client does, closes its input and returns what it
// answered, what it printed on stderr and its exit code. A server that
// starts answers and then exits 0 at the end of its input.
func (e *env) startServe(flags []string, opts ...runOpt) (answers []map[string]any, stderr string, code int) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := e.command(ctx, forgebox, append([]string{"serve"}, flags...)...)
	for _, o := range opts {
		o(cmd)
	}
	var errBuf strings.Builder
	cmd.Stderr = &errBuf
	in, err := cmd.StdinPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	// The input stays open until the server answers or ends its output:
	// a server that has not read its input yet must not see its end.
	in.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"forgebox-test","version":"1"}}}` + "\n"))
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			answers = append(answers, m)
			in.Close()
		}
	}
	in.Close()
	err = cmd.Wait()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		e.t.Fatalf("forgebox serve %q hung: killed after 60s\nstderr: %s", flags, errBuf.String())
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		e.t.Fatalf("forgebox serve %q: %v", flags, err)
	}
	return answers, errBuf.String(), code
}

// forgebox serve refuses, before it speaks MCP, every workspace forgebox
// run refuses: its file tools act outside the sandbox, with the user's
// rights, on whatever the workspace is. Started from the home directory
// without --workspace (the default is the current directory) it refuses
// too. The client sees a failed start, never an initialize result.
func TestServeRefusesWorkspacesRunRefuses(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		for _, tc := range []struct {
			name  string
			flags []string
			opts  []runOpt
			why   string
		}{
			{"root", []string{"--workspace=/"}, nil, "refusing workspace /: it is a system directory"},
			{"etc", []string{"--workspace=/etc"}, nil, "refusing workspace /etc: it is a system directory"},
			{"etc subdirectory", []string{"--workspace=/etc/ssh"}, nil, "it is inside the system directory /etc"},
			{"home", []string{"--workspace=" + e.home}, nil, "refusing workspace " + e.home + ": it is (or contains) the home directory"},
			{"parent of home", []string{"--workspace=" + e.dir}, nil, "refusing workspace " + e.dir + ": it is (or contains) the home directory"},
			{"default from home", nil, []runOpt{inDir(e.home)}, "refusing workspace " + e.home},
			{"relative from home", []string{"--workspace=."}, []runOpt{inDir(e.home)}, "refusing workspace " + e.home},
			{"rw home", []string{"--rw=" + e.home}, nil, "refusing --rw " + e.home},
			{"secret", []string{"--workspace=" + e.home + "/.ssh"}, nil, "which forgebox hides as a secret location"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if tc.name == "secret" {
					e.mkdir(e.home + "/.ssh")
				}
				answers, stderr, code := e.startServe(tc.flags, tc.opts...)
				if code == 0 {
					t.Errorf("forgebox serve %q exited 0; want a failed start\nstderr: %s", tc.flags, stderr)
				}
				for _, a := range answers {
					if _, ok := a["result"]; ok {
						t.Errorf("forgebox serve %q answered initialize: %v", tc.flags, a)
					}
				}
				if !strings.Contains(stderr, tc.why) {
					t.Errorf("forgebox serve %q stderr = %q; want the reason %q", tc.flags, stderr, tc.why)
				}
			})
		}
		// The check refuses only what run refuses: a project directory
		// starts, and answers initialize.
		answers, stderr, code := e.startServe(nil)
		if code != 0 || len(answers) == 0 || answers[0]["result"] == nil {
			t.Errorf("forgebox serve in the workspace: exit %d, answers %v; want a healthy start\nstderr: %s", code, answers, stderr)
		}
	})
}

//go:build linux && agents

package agents

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// sdkSession is what testdata/sdk-client.mjs saw.
type sdkSession struct {
	Tools []string `json:"tools"`
	Calls []struct {
		IsError bool `json:"isError"`
		// A command's data is in the result's _meta; its output only in
		// the text, once.
		Meta struct {
			Structured struct {
				Ran      bool            `json:"ran"`
				Approval json.RawMessage `json:"approval_required"`
			} `json:"forgebox/result"`
		} `json:"_meta"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
	} `json:"calls"`
	Asked []struct {
		Message string `json:"message"`
	} `json:"asked"`
}

// sdkDir holds the TypeScript SDK's package.
func sdkPackage() string {
	return filepath.Join(ciDir(), "mcp-sdk", "node_modules", "@modelcontextprotocol", "sdk", "package.json")
}

// sdkClient runs testdata/sdk-client.mjs as the mode's user: the person
// answers forgebox's questions with answer.
func sdkClient(t *testing.T, sc *scratch, answer string, commands ...string) sdkSession {
	t.Helper()
	script, err := filepath.Abs("testdata/sdk-client.mjs")
	if err != nil {
		t.Fatal(err)
	}
	// The unprivileged user may not reach the checkout: run a copy.
	b, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(sc.dir, "sdk-client.mjs")
	sc.write(copied, string(b))
	args := append([]string{copied, filepath.Join(ciDir(), "mcp-sdk"), forgebox, sc.ws, answer}, commands...)
	r := sc.run(context.Background(), filepath.Join(nodeBin(), "node"), nil, args...)
	t.Logf("sdk client took %v", r.took)
	var s sdkSession
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil || r.code != 0 {
		t.Fatalf("sdk client: exit %d, %v\nstdout: %s\nstderr: %s", r.code, err, r.stdout, r.stderr)
	}
	if len(s.Calls) != len(commands) {
		t.Fatalf("sdk client: %d results for %d commands", len(s.Calls), len(commands))
	}
	return s
}

// The TypeScript SDK's Client, declaring elicitation, lists forgebox's
// tools, runs a command, is refused a denied one without being asked, and
// is asked about one that needs approval: "once" runs it.
func TestTypeScriptSDKApproves(t *testing.T) {
	installed(t, sdkPackage())
	forEachMode(t, func(t *testing.T, sc *scratch) {
		s := sdkClient(t, sc, "once", "echo hello", denyLine, "git reset --hard")
		if !slices.Contains(s.Tools, "run_shell_command") {
			t.Errorf("tools/list: %v", s.Tools)
		}
		if c := s.Calls[0]; c.IsError || !strings.Contains(c.Content[0].Text, "--- stdout (6 bytes) ---\nhello\n") || c.StructuredContent != nil {
			t.Errorf("echo hello: %+v", c)
		}
		if c := s.Calls[1]; !c.IsError || c.Meta.Structured.Ran {
			t.Errorf("denied line: %+v", c)
		}
		if _, err := os.Stat(filepath.Join(sc.ws, "M")); err == nil {
			t.Error("the denied line ran: its marker M is in the workspace")
		}
		if len(s.Asked) != 1 || !strings.Contains(s.Asked[0].Message, "git reset --hard") {
			t.Errorf("the person was asked %+v, want once about git reset --hard", s.Asked)
		}
		if c := s.Calls[2]; c.IsError || !c.Meta.Structured.Ran {
			t.Errorf("git reset --hard, approved once: %+v", c)
		}
		if b, _ := os.ReadFile(filepath.Join(sc.ws, "README")); string(b) == changedReadme {
			t.Error("git reset --hard, approved, left the uncommitted change")
		}
	})
}

// A person who declines, or answers no, leaves the host unchanged.
func TestTypeScriptSDKRefuses(t *testing.T) {
	installed(t, sdkPackage())
	for _, answer := range []string{"decline", "no"} {
		t.Run(answer, func(t *testing.T) {
			forEachMode(t, func(t *testing.T, sc *scratch) {
				s := sdkClient(t, sc, answer, "git reset --hard")
				if len(s.Asked) != 1 {
					t.Errorf("the person was asked %d times, want 1", len(s.Asked))
				}
				if c := s.Calls[0]; !c.IsError || c.Meta.Structured.Ran || c.Meta.Structured.Approval == nil {
					t.Errorf("git reset --hard, refused: %+v", c)
				}
				sc.unchanged()
			})
		})
	}
}

package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
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
			{"system subdirectory", []string{"--workspace=/usr/share"}, nil, "it is inside the system directory /usr"},
			{"home", []string{"--workspace=" + e.home}, nil, "refusing workspace " + e.home + ": it is (or contains) the home directory"},
			{"parent of home", []string{"--workspace=" + e.dir}, nil, "refusing workspace " + e.dir + ": it is (or contains) the home directory"},
			{"default from home", nil, []runOpt{inDir(e.home)}, "refusing workspace " + e.home},
			{"relative from home", []string{"--workspace=."}, []runOpt{inDir(e.home)}, "refusing workspace " + e.home},
			{"rw home", []string{"--rw=" + e.home}, nil, "refusing --rw " + e.home},
			{"secret", []string{"--workspace=" + e.home + "/.ssh"}, nil, "which forgebox hides as a secret location"},
			{"forgebox state", []string{"--workspace=" + e.stateHome() + "/forgebox"}, nil, "it is inside forgebox's own configuration or state"},
			{"forgebox config", []string{"--workspace=" + e.configHome() + "/forgebox"}, nil, "it is inside forgebox's own configuration or state"},
			{"config through a link", []string{"--workspace=" + e.outside}, []runOpt{func(c *exec.Cmd) { c.Env = append(c.Env, "XDG_CONFIG_HOME="+e.outside+"/cfglink") }},
				"is reached through a symbolic link inside the writable root"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				switch tc.name {
				case "secret":
					e.mkdir(e.home + "/.ssh")
				case "forgebox state", "forgebox config":
					e.mkdir(strings.TrimPrefix(tc.flags[0], "--workspace="))
				case "config through a link":
					e.mkdir(e.outside + "/real")
					os.Symlink("real", e.outside+"/cfglink")
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

// The file tools never change forgebox's own configuration and state, even
// when they lie in the workspace (XDG_CONFIG_HOME and XDG_STATE_HOME
// inside it, FORGEBOX_HISTORY_DB too): not the configuration file (an
// allow rule written there would be honoured by every later forgebox), the
// session approvals, the state directory or the history, not through a
// symbolic link, and a hard link to them only ever has its own name
// replaced. Each attempt is refused with a reason and the host files keep
// their content, mode and mtime.
func TestServeFilesKeepForgeboxState(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		cfgHome, stateHome := filepath.Join(e.ws, ".cfg"), filepath.Join(e.ws, ".st")
		cfg := filepath.Join(cfgHome, "forgebox", "config.json")
		approvals := filepath.Join(stateHome, "forgebox", "sessions", "0123456789abcdef0123456789abcdef.json")
		db := filepath.Join(e.ws, "hist", "h.db")
		e.extra = append(e.extra, "XDG_CONFIG_HOME="+cfgHome, "XDG_STATE_HOME="+stateHome, "FORGEBOX_HISTORY_DB="+db)
		for _, d := range []string{cfgHome, filepath.Dir(cfg), stateHome, filepath.Join(stateHome, "forgebox")} {
			e.mkdir(d)
		}
		e.write(cfg, `{"forgebox": {"rules": {"deny": [{"pattern": "sudo *"}]}}}`+"\n")
		os.Chmod(cfg, 0o600)
		e.write(approvals, `[{"pattern": "make build"}]`+"\n")
		e.write(db, "not a database\n")
		e.write(filepath.Join(e.ws, "decoy.txt"), "decoy\n")
		e.write(filepath.Join(e.ws, "evil", "config.json"), `{"forgebox": {"rules": {"allow": [{"pattern": "git push *"}]}}}`)
		for _, l := range [][2]string{{".cfg/forgebox", "lnk"}, {".st", "stlnk"}} {
			if err := os.Symlink(l[0], filepath.Join(e.ws, l[1])); err != nil {
				t.Fatal(err)
			}
			e.chown(filepath.Join(e.ws, l[1]))
		}
		if err := os.Link(cfg, filepath.Join(e.ws, "hl")); err != nil {
			t.Fatal(err)
		}
		// Old mtimes: a change within the same clock tick still shows.
		old := time.Now().Add(-time.Hour)
		watched := []string{cfg, filepath.Dir(cfg), cfgHome, approvals, filepath.Dir(approvals), filepath.Join(stateHome, "forgebox"), stateHome, db}
		for _, p := range watched {
			os.Chtimes(p, old, old)
		}
		before := map[string]snapshot{}
		for _, p := range watched {
			before[p] = snap(t, p)
		}
		allow := `{"forgebox": {"rules": {"allow": [{"pattern": "git push *"}]}}}`
		sess := ".st/forgebox/sessions/" + filepath.Base(approvals)
		c := e.serveMCP(nil)
		for _, a := range []struct {
			tool string
			args map[string]any
		}{
			{"write_file", map[string]any{"path": ".cfg/forgebox/config.json", "content": allow}},
			{"write_file", map[string]any{"path": cfg, "content": allow}},
			{"write_file", map[string]any{"path": "lnk/config.json", "content": allow}},
			{"write_file", map[string]any{"path": ".cfg/forgebox/extra.json", "content": allow}},
			{"write_file", map[string]any{"path": sess, "content": `[{"pattern": "git push *"}]`}},
			{"write_file", map[string]any{"path": "stlnk/forgebox/sessions/new.json", "content": `[]`}},
			{"write_file", map[string]any{"path": ".st/forgebox/history.db", "content": "x"}},
			{"write_file", map[string]any{"path": "hist/h.db", "content": "x"}},
			{"write_file", map[string]any{"path": "hist/h.db-wal", "content": "x"}},
			{"make_directory", map[string]any{"path": ".cfg/forgebox/sub"}},
			{"make_directory", map[string]any{"path": ".st/forgebox"}},
			{"make_directory", map[string]any{"path": "hist/h.db.spool"}},
			{"move_item", map[string]any{"source": "decoy.txt", "destination": ".cfg/forgebox/x.json"}},
			{"move_item", map[string]any{"source": ".cfg/forgebox/config.json", "destination": "stolen.json"}},
			{"move_item", map[string]any{"source": ".cfg", "destination": "cfg-old"}},
			{"move_item", map[string]any{"source": ".st/forgebox/sessions", "destination": "sessions-old"}},
			{"move_item", map[string]any{"source": "hist/h.db", "destination": "h-old.db"}},
			{"copy_item", map[string]any{"source": "evil/config.json", "destination": ".cfg/forgebox/config2.json"}},
			{"copy_item", map[string]any{"source": "evil", "destination": ".st/forgebox/sessions/evil"}},
			{"copy_item", map[string]any{"source": "decoy.txt", "destination": "hist/h.db-shm"}},
			{"delete_item", map[string]any{"path": ".cfg/forgebox/config.json"}},
			{"delete_item", map[string]any{"path": "lnk/config.json"}},
			{"delete_item", map[string]any{"path": ".cfg", "recursive": true}},
			{"delete_item", map[string]any{"path": sess}},
			{"delete_item", map[string]any{"path": ".st", "recursive": true}},
			{"delete_item", map[string]any{"path": "hist/h.db"}},
		} {
			res, text := c.call(a.tool, a.args, nil)
			if !res.IsError {
				t.Errorf("%s %v: %q; want refused", a.tool, a.args, text)
			} else if !strings.Contains(text, "forgebox's own configuration or state") {
				t.Errorf("%s %v refused with %q; want the reason: forgebox's own configuration or state", a.tool, a.args, text)
			}
		}
		// A hard link is replaced or removed under its own name only.
		c.call("write_file", map[string]any{"path": "hl", "content": allow}, nil)
		c.call("delete_item", map[string]any{"path": "hl"}, nil)
		for _, p := range watched {
			unchanged(t, p, before[p])
		}
		for _, p := range []string{"hist/h.db-wal", "hist/h.db-shm", "hist/h.db.spool", ".st/forgebox/history.db", "stolen.json", "cfg-old"} {
			if _, err := os.Lstat(filepath.Join(e.ws, p)); err == nil {
				t.Errorf("%s exists after a refused action", p)
			}
		}
		// The rest of the workspace, .cfg included, is the agent's.
		if res, text := c.call("write_file", map[string]any{"path": ".cfg/other.json", "content": "{}"}, nil); res.IsError {
			t.Errorf("write_file .cfg/other.json: %s", text)
		}
	})
}

// The model's "directory" and "cwd" arguments choose where a command
// starts, never the workspace: outside it (absolute, "..", or a link in
// the workspace that leads out) they are refused, and nothing runs.
func TestServeDirectoryStaysInWorkspace(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		if err := os.Symlink(e.outside, filepath.Join(e.ws, "out")); err != nil {
			t.Fatal(err)
		}
		before := snap(t, e.outside)
		c := e.serveMCP(nil)
		for _, dir := range []string{"/", e.outside, "..", "out", "out/"} {
			if res, text := c.call("run_shell_command", map[string]any{"command": "touch fb-escaped", "directory": dir}, nil); !res.IsError || !strings.Contains(text, "outside the workspace") {
				t.Errorf("run_shell_command in %q: %q; want refused as outside the workspace", dir, text)
			}
			if res, text := c.call("shell_start", map[string]any{"cwd": dir}, nil); !res.IsError || !strings.Contains(text, "outside the workspace") {
				t.Errorf("shell_start in %q: %q; want refused as outside the workspace", dir, text)
			}
		}
		unchanged(t, e.outside, before)
	})
}

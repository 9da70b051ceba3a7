package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The history records every run in the scenario's own XDG state
// directory (or where --history-db says), and forgebox history reads it.

// histRun is one run as forgebox history --json prints it.
type histRun struct {
	ID         int64     `json:"id"`
	Key        string    `json:"key"`
	SessionID  string    `json:"session_id"`
	Command    string    `json:"command"`
	Argv       []string  `json:"argv"`
	Cwd        string    `json:"cwd"`
	Workspace  string    `json:"workspace"`
	Args       []string  `json:"args"`
	Status     string    `json:"status"`
	StartedAt  time.Time `json:"started_at"`
	EndedAt    *string   `json:"ended_at"`
	DurationMS *float64  `json:"duration_ms"`
	ExitCode   *int      `json:"exit_code"`
	Signal     string    `json:"signal"`
	ErrorCode  string    `json:"error_code"`
	Stdout     string    `json:"stdout"`
	Stderr     string    `json:"stderr"`
	StdoutN    int64     `json:"stdout_bytes"`
	OutputKept bool      `json:"output_kept"`
	Permission string    `json:"permission_status"`
	Scope      string    `json:"permission_scope"`
	Risk       int       `json:"risk_score"`
	Level      string    `json:"level"`
	Category   string    `json:"category"`
	Rule       string    `json:"matched_rule"`
	Decision   *struct {
		Action string `json:"action"`
	} `json:"decision"`
	Enforced *struct {
		Sandbox    bool     `json:"sandbox"`
		Namespaces []string `json:"namespaces"`
	} `json:"enforced"`
	Env []struct {
		Name   string `json:"name"`
		Value  string `json:"value"`
		Secret bool   `json:"secret"`
	} `json:"env"`
	Version string `json:"forgebox_version"`
	User    string `json:"user"`
	Host    string `json:"host"`
	PID     int    `json:"pid"`
}

func (e *env) historyDB() string { return filepath.Join(e.stateHome(), "forgebox", "history.db") }

// history runs forgebox history --json --limit 0 ARGS and decodes its
// lines, failing the test on any exit but 0.
func (e *env) history(args ...string) []histRun {
	e.t.Helper()
	r := e.run(append([]string{"history", "--json", "--limit", "0"}, args...))
	if r.code != 0 {
		e.t.Fatalf("forgebox history %q: exit %d\nstdout: %s\nstderr: %s", args, r.code, r.stdout, r.stderr)
	}
	return decodeRuns(e.t, r.stdout)
}

func decodeRuns(t *testing.T, s string) []histRun {
	t.Helper()
	var out []histRun
	dec := json.NewDecoder(strings.NewReader(s))
	for dec.More() {
		var h histRun
		if err := dec.Decode(&h); err != nil {
			t.Fatalf("history output %q: %v", s, err)
		}
		out = append(out, h)
	}
	return out
}

// show runs forgebox history show --json REF: a run's ID or key.
func (e *env) show(ref any, args ...string) (histRun, string) {
	e.t.Helper()
	r := e.run(append([]string{"history", "show", "--json", fmt.Sprint(ref)}, args...))
	if r.code != 0 {
		e.t.Fatalf("forgebox history show %v: exit %d\nstderr: %s", ref, r.code, r.stderr)
	}
	var h histRun
	if err := json.Unmarshal([]byte(r.stdout), &h); err != nil {
		e.t.Fatalf("history show --json: %v\n%s", err, r.stdout)
	}
	return h, r.stdout
}

// historyWarnings are the lines of stderr that are history warnings.
func historyWarnings(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "forgebox: warning: history: ") {
			out = append(out, l)
		}
	}
	return out
}

// A run leaves one finished row with what was asked, decided, enforced
// and how it ended; the JSON result names it.
func TestHistoryRecordsRun(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		judgedEnv(t, e)
		e.extra = append(e.extra, "FORGEBOX_SESSION=task-7")
		r, res := e.runJSON([]string{"--", "sh", "-c", "echo out; echo err >&2; exit 3"})
		if r.code != 3 {
			t.Fatalf("run: exit %d; want 3\n%s", r.code, r.stderr)
		}
		key, ok := res.raw["history_key"].(string)
		if !ok || key == "" {
			t.Fatalf("history_key = %v; want the run's key", res.raw["history_key"])
		}
		runs := e.history()
		if len(runs) != 1 || runs[0].Key != key {
			t.Fatalf("history holds %d runs (%+v); want the one with key %v", len(runs), runs, key)
		}
		if byKey, _ := e.show(key); byKey.ID != runs[0].ID {
			t.Errorf("history show %s = run %d; want %d", key, byKey.ID, runs[0].ID)
		}
		h, _ := e.show(runs[0].ID)
		ws, _ := filepath.EvalSymlinks(e.ws)
		switch {
		case h.Status != "finished" || h.ExitCode == nil || *h.ExitCode != 3 || h.EndedAt == nil || h.DurationMS == nil:
			t.Errorf("row status %s, exit %v, ended %v, duration %v; want finished, 3", h.Status, h.ExitCode, h.EndedAt, h.DurationMS)
		case strings.Join(h.Argv, " ") != "sh -c echo out; echo err >&2; exit 3" || h.Command != "":
			t.Errorf("row argv %q command %q", h.Argv, h.Command)
		case h.Cwd != ws || h.Workspace != ws:
			t.Errorf("row cwd %s workspace %s; want %s", h.Cwd, h.Workspace, ws)
		case h.Stdout != "out\n" || h.Stderr != "err\n" || !h.OutputKept || h.StdoutN != 4:
			t.Errorf("row output %q %q kept %v bytes %d; want out, err", h.Stdout, h.Stderr, h.OutputKept, h.StdoutN)
		case h.Permission != "auto_approved" || h.Level != "R0" || h.Decision == nil || h.Decision.Action != "allow":
			t.Errorf("row permission %s level %s decision %+v; want auto_approved, R0, allow", h.Permission, h.Level, h.Decision)
		case h.Enforced == nil || !h.Enforced.Sandbox || len(h.Enforced.Namespaces) == 0:
			t.Errorf("row enforced %+v; want the sandbox's layers", h.Enforced)
		case h.SessionID != "task-7" || h.Version == "" || h.User == "" || h.Host == "" || h.PID == 0:
			t.Errorf("row session %q version %q user %q host %q pid %d", h.SessionID, h.Version, h.User, h.Host, h.PID)
		case strings.Join(h.Args, " ") != "--json -- sh -c echo out; echo err >&2; exit 3":
			t.Errorf("row args %q; want the arguments of forgebox run", h.Args)
		}
		envs := map[string]string{}
		for _, v := range h.Env {
			envs[v.Name] = v.Value
		}
		if envs["PATH"] == "" || envs["HOME"] != e.home {
			t.Errorf("row env %+v; want PATH and HOME with their values", h.Env)
		}
		if st, err := os.Stat(e.historyDB()); err != nil || st.Mode().Perm() != 0o600 || int(st.Sys().(*syscall.Stat_t).Uid) != e.m.uid {
			t.Errorf("history database: %v, %v; want mode 0600, owned by uid %d", st.Mode(), err, e.m.uid)
		}

		// Output handed over as it is is not seen, so not kept, unless
		// --keep-output copies it; the caller gets it the same.
		r = e.run([]string{"run", "--", "sh", "-c", "echo handed over"})
		r2 := e.run([]string{"run", "--keep-output", "--", "sh", "-c", "echo handed over"})
		if r.code != 0 || r.stdout != "handed over\n" || r2.stdout != r.stdout {
			t.Errorf("runs without --json: exit %d, stdout %q and %q", r.code, r.stdout, r2.stdout)
		}
		runs = e.history()
		if len(runs) != 3 {
			t.Fatalf("history holds %d runs; want 3", len(runs))
		}
		if kept, _ := e.show(runs[0].ID); !kept.OutputKept || kept.Stdout != "handed over\n" {
			t.Errorf("--keep-output row: kept %v, stdout %q", kept.OutputKept, kept.Stdout)
		}
		if plain, _ := e.show(runs[1].ID); plain.OutputKept || plain.Stdout != "" || plain.Status != "finished" {
			t.Errorf("handed-over row: kept %v, stdout %q, status %s; want not kept", plain.OutputKept, plain.Stdout, plain.Status)
		}

		// A pseudo-terminal's output passes through forgebox: it is kept.
		if r := e.run([]string{"run", "--pty", "--", "echo", "on a terminal"}); r.code != 0 {
			t.Fatalf("run --pty: exit %d %s", r.code, r.stderr)
		}
		if h, _ := e.show(e.history("--limit", "1")[0].ID); !h.OutputKept || !strings.Contains(h.Stdout, "on a terminal") {
			t.Errorf("--pty row: kept %v, stdout %q", h.OutputKept, h.Stdout)
		}

		table := e.run([]string{"history"})
		lines := strings.Split(strings.TrimSuffix(table.stdout, "\n"), "\n")
		if table.code != 0 || len(lines) != 5 || !strings.Contains(lines[4], "sh -c 'echo out; echo err >&2; exit 3'") || !strings.Contains(lines[4], "auto R0") {
			t.Errorf("forgebox history: exit %d\n%s", table.code, table.stdout)
		}
		if r := e.run([]string{"history", "show", "999999"}); r.code != 1 {
			t.Errorf("history show 999999: exit %d; want 1", r.code)
		}
		if r := e.run([]string{"history", "show", "x"}); r.code != 125 {
			t.Errorf("history show x: exit %d; want 125", r.code)
		}
		if r := e.run([]string{"history", "--since", "2h", "--session", "task-7", "--json"}); len(decodeRuns(t, r.stdout)) != 4 {
			t.Errorf("history --since 2h --session task-7: %s", r.stdout)
		}
		if r := e.run([]string{"history", "--since", "2099-01-01", "--json"}); r.code != 0 || r.stdout != "" {
			t.Errorf("history --since 2099-01-01: exit %d, %q; want nothing", r.code, r.stdout)
		}
		var stats struct {
			Total    int64            `json:"total"`
			ByStatus map[string]int64 `json:"by_status"`
		}
		if r := e.run([]string{"history", "stats", "--json"}); json.Unmarshal([]byte(r.stdout), &stats) != nil || stats.Total != 4 || stats.ByStatus["finished"] != 4 {
			t.Errorf("history stats --json: %s", r.stdout)
		}
		var doc struct {
			History struct {
				Path string `json:"path"`
				OK   bool   `json:"ok"`
				Runs int64  `json:"runs"`
			} `json:"history"`
		}
		if r := e.run([]string{"doctor", "--json"}); json.Unmarshal([]byte(r.stdout), &doc) != nil || !doc.History.OK || doc.History.Runs != 4 || doc.History.Path != e.historyDB() {
			t.Errorf("doctor --json history: %+v\n%.500s", doc.History, r.stdout)
		}
	})
}

// A denied command starts nothing and is on record; so is one that needed
// an approval it did not get.
func TestHistoryDenied(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		judgedEnv(t, e)
		r := e.run([]string{"run", "-c", "touch M; mkfs.ext4 /dev/sda"})
		if r.code != 126 || e.ran() {
			t.Fatalf("denied line: exit %d, ran %v; want 126 and nothing run", r.code, e.ran())
		}
		r, res := e.runJSON([]string{"-c", askLine})
		if r.code != 126 || e.ran() {
			t.Fatalf("asking line: exit %d; want 126", r.code)
		}
		key, _ := res.raw["history_key"].(string)
		runs := e.history()
		if len(runs) != 2 {
			t.Fatalf("history holds %d runs; want 2", len(runs))
		}
		if key == "" || runs[0].Key != key {
			t.Errorf("refused run's history_key = %v; want its row's (%q)", res.raw["history_key"], runs[0].Key)
		}
		d, ask := runs[1], runs[0]
		if d.Status != "denied" || d.Permission != "denied" || d.Level != "R4" || !strings.Contains(d.Rule, "builtin") ||
			d.Command != "touch M; mkfs.ext4 /dev/sda" || d.ExitCode != nil || d.ErrorCode != "denied" {
			t.Errorf("denied row: %+v", d)
		}
		if ask.Status != "refused" || ask.Permission != "asked_denied" || ask.ErrorCode != "approval_required" {
			t.Errorf("refused row: %+v", ask)
		}
		if got := e.history("--denied"); len(got) != 2 {
			t.Errorf("history --denied: %d runs; want 2", len(got))
		}
		if got := e.history("--failed"); len(got) != 0 {
			t.Errorf("history --failed: %d runs; want none (nothing ran)", len(got))
		}
		// --yes approves the asking line once, and says so.
		if r := e.run([]string{"run", "--yes", "-c", askLine}); r.code != 0 || !e.ran() {
			t.Fatalf("run --yes: exit %d", r.code)
		}
		if h := e.history("--limit", "1")[0]; h.Permission != "asked_approved" || h.Scope != "once" || h.Status != "finished" {
			t.Errorf("--yes row: permission %s scope %s status %s; want asked_approved, once, finished", h.Permission, h.Scope, h.Status)
		}
	})
}

// 100 forgebox run at once leave exactly 100 complete rows and a database
// that passes the integrity check.
func TestHistoryConcurrentRuns(t *testing.T) {
	forEachModeSerial(t, func(t *testing.T, e *env) {
		const n = 100
		var wg sync.WaitGroup
		results := make([]result, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
				defer cancel()
				cmd := e.command(ctx, forgebox, "run", "--", "true")
				e.skipJudge(cmd)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				err := cmd.Run()
				results[i].stderr = stderr.String()
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					results[i].code = ee.ExitCode()
				} else if err != nil {
					results[i].code = -1
					results[i].stderr += err.Error()
				}
			}()
		}
		wg.Wait()
		for i, r := range results {
			// (Concurrent runs may warn about each other's cgroups.)
			if r.code != 0 || len(historyWarnings(r.stderr)) > 0 || strings.Contains(r.stderr, "locked") {
				t.Errorf("run %d: exit %d, stderr %q; want 0 and no history warning", i, r.code, r.stderr)
			}
		}
		runs := e.history()
		finished := 0
		for _, h := range runs {
			if h.Status == "finished" && h.ExitCode != nil && *h.ExitCode == 0 {
				finished++
			}
		}
		if len(runs) != n || finished != n {
			t.Errorf("history holds %d runs, %d finished with exit 0; want %d of each", len(runs), finished, n)
		}
		var doc struct {
			History struct {
				OK      bool   `json:"ok"`
				Runs    int64  `json:"runs"`
				Problem string `json:"problem"`
			} `json:"history"`
		}
		r := e.run([]string{"doctor", "--json"})
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || !doc.History.OK || doc.History.Runs != n {
			t.Errorf("doctor --json after %d concurrent runs: history %+v (%v)", n, doc.History, err)
		}
	})
}

// A forgebox SIGKILLed mid-run leaves its row running; the next forgebox
// to open the history marks it abandoned. The command died with it.
func TestHistoryAbandoned(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		mark := marker()
		run := e.start([]string{"run", "--", "sleep", mark})
		var row histRun
		if !waitFor(10*time.Second, func() bool {
			runs := e.history()
			if len(runs) == 1 && runs[0].Status == "running" {
				row = runs[0]
				return true
			}
			return false
		}) {
			t.Fatalf("no running row appeared\nstderr: %s", run.stderr)
		}
		if !waitFor(5*time.Second, func() bool { return len(processesWith(mark)) > 0 }) {
			t.Fatalf("the sleep never started")
		}
		if err := run.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		run.wait(t, 10*time.Second)
		noProcesses(t, mark)
		runs := e.history()
		if len(runs) != 1 || runs[0].ID != row.ID || runs[0].Status != "abandoned" || runs[0].EndedAt == nil {
			t.Errorf("after SIGKILL: %+v; want run %d abandoned", runs, row.ID)
		}
	})
}

// Realistic secrets, printed by the command and given to it as arguments
// or environment, are in neither the shown runs nor the export, nor in the
// database files.
func TestHistoryRedaction(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		judgedEnv(t, e)
		secrets := map[string]string{
			"AWS access key": "AKIAIOSFODNN7QX2ZT5B",
			"AWS secret key": "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",
			"GitHub token":   "ghp_R2d9Xk4LqPz7Vw1Nc8Hs3Jf6Tb0Ym5Ue2Ai9",
			"JWT": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ." +
				"SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
			"private key":     "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZWQyNTUxOQ",
			"API_TOKEN value": "tok-6f1c2a9e8b7d4c3f",
		}
		key := "-----BEGIN OPENSSH PRIVATE KEY-----\n" + secrets["private key"] + "\n-----END OPENSSH PRIVATE KEY-----"
		e.write(filepath.Join(e.ws, "id_test"), key+"\n")
		// A value withheld from the command as a secret is redacted
		// wherever it appears, whatever its shape.
		e.extra = append(e.extra, "API_TOKEN="+secrets["API_TOKEN value"], "AWS_SECRET_ACCESS_KEY="+secrets["AWS secret key"])
		runs := [][]string{
			{"run", "--json", "--env", "API_TOKEN", "--", "sh", "-c", `echo "token=$API_TOKEN"; echo "$1 $2"; echo "$3" >&2; cat id_test`,
				"sh", secrets["AWS access key"], secrets["AWS secret key"], secrets["GitHub token"]},
			{"run", "--json", "-c", "echo Authorization: Bearer " + secrets["JWT"] + "; echo aws_secret_access_key=" + secrets["AWS secret key"]},
			{"run", "--keep-output", "--env", "API_TOKEN", "--", "printenv", "API_TOKEN"},
			{"run", "--", "echo", secrets["GitHub token"], secrets["JWT"]},
		}
		for _, args := range runs {
			if r := e.run(args); r.code != 0 {
				t.Fatalf("forgebox %.80q: exit %d\n%s", args, r.code, r.stderr)
			}
		}
		if r := e.run(runs[0]); !strings.Contains(r.stdout, secrets["GitHub token"]) || !strings.Contains(r.stdout, secrets["private key"]) {
			t.Fatalf("the command's own output lacks the secrets (the test proves nothing):\n%s", r.stdout)
		}
		var texts []string
		for _, h := range e.history() {
			_, raw := e.show(h.ID)
			texts = append(texts, raw)
		}
		export := e.run([]string{"history", "export", "--jsonl"})
		if export.code != 0 || strings.Count(export.stdout, "\n") != len(runs)+1 {
			t.Fatalf("history export: exit %d, %d lines\n%s", export.code, strings.Count(export.stdout, "\n"), export.stderr)
		}
		texts = append(texts, export.stdout)
		files, _ := filepath.Glob(e.historyDB() + "*")
		for _, f := range files {
			b, _ := os.ReadFile(f)
			texts = append(texts, string(b))
		}
		for name, s := range secrets {
			for i, text := range texts {
				if strings.Contains(text, s) {
					t.Errorf("%s %q is in the history (text %d of %d: shown runs, the export, then the database files)", name, s, i, len(texts))
				}
			}
		}
		if !strings.Contains(export.stdout, "[REDACTED]") || !strings.Contains(export.stdout, `"name":"API_TOKEN","secret":true`) {
			t.Errorf("export shows no redaction and no secret variable:\n%.2000s", export.stdout)
		}
	})
}

// --no-history, and a configuration that turns the history off, record
// nothing; a workspace configuration cannot turn it off.
func TestHistoryOff(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		if r := e.run([]string{"run", "--no-history", "--", "true"}); r.code != 0 {
			t.Fatalf("run --no-history: exit %d %s", r.code, r.stderr)
		}
		r, res := e.runJSON([]string{"--no-history", "--", "true"})
		if v, ok := res.raw["history_key"]; r.code != 0 || !ok || v != nil {
			t.Errorf("run --json --no-history: exit %d, history_key %v; want null", r.code, v)
		}
		// A run writes its record to the spool next to the database;
		// neither may exist.
		for _, p := range []string{e.historyDB(), e.historyDB() + ".spool"} {
			if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("--no-history created %s (%v)", p, err)
			}
		}
		e.write(filepath.Join(e.configHome(), "forgebox", "config.json"), `{"forgebox": {"history": {"enabled": false}}}`)
		e.run([]string{"run", "--", "true"}) // --no-policy: the recorder reads the configuration itself
		e.judged = true
		e.run([]string{"run", "--", "true"})
		e.run([]string{"run", "-c", "touch M; mkfs.ext4 /dev/sda"})
		for _, p := range []string{e.historyDB(), e.historyDB() + ".spool"} {
			if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("enabled: false created %s (%v)", p, err)
			}
		}
		// The agent writes the workspace: its configuration may only turn
		// the history on.
		e.write(filepath.Join(e.configHome(), "forgebox", "config.json"), `{"forgebox": {}}`)
		e.write(filepath.Join(e.ws, ".forgebox", "config.json"), `{"forgebox": {"history": {"enabled": false}}}`)
		e.run([]string{"run", "--", "true"})
		if runs := e.history(); len(runs) != 1 {
			t.Errorf("a workspace configuration turned the history off: %d runs; want 1", len(runs))
		}
	})
}

// A history that cannot be written changes nothing of the command's
// outcome: the same exit code and output, and one warning.
func TestHistoryUnwritable(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		dir := filepath.Join(e.dir, "ro")
		e.mkdir(dir)
		os.Chmod(dir, 0o555)
		if e.m.root() {
			dir = "/proc/forgebox-history" // root writes through modes; /proc takes no new files
		}
		db := filepath.Join(dir, "history.db")
		r := e.run([]string{"run", "--history-db", db, "--", "sh", "-c", "echo out; echo err >&2; exit 7"})
		if r.code != 7 || r.stdout != "out\n" {
			t.Errorf("run with an unwritable history: exit %d, stdout %q; want 7 and out", r.code, r.stdout)
		}
		if w := historyWarnings(r.stderr); len(w) != 1 || strings.Count(r.stderr, "\n") != 2 || !strings.HasPrefix(r.stderr, "err\n") {
			t.Errorf("stderr %q; want err and one history warning", r.stderr)
		}
		r, res := e.runJSON([]string{"--history-db", db, "--", "sh", "-c", "exit 5"})
		warned := 0
		for _, w := range res.Warnings {
			if strings.HasPrefix(w, "history: ") {
				warned++
			}
		}
		if r.code != 5 || res.ExitCode != 5 || res.raw["history_key"] != nil || warned != 1 || len(historyWarnings(r.stderr)) != 1 {
			t.Errorf("run --json with an unwritable history: exit %d, result %d, history_key %v, warnings %q", r.code, res.ExitCode, res.raw["history_key"], res.Warnings)
		}
	})
}

// A corrupt database is moved aside with a warning, and the run recorded
// in a new one.
func TestHistoryCorrupt(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		db := e.historyDB()
		garbage := bytes.Repeat([]byte("this is not a database\x00\xff"), 4096)
		e.write(db, string(garbage))
		os.Chmod(db, 0o600)
		r := e.run([]string{"run", "--", "sh", "-c", "echo still runs"})
		if r.code != 0 || r.stdout != "still runs\n" {
			t.Fatalf("run over a corrupt history: exit %d, stdout %q", r.code, r.stdout)
		}
		if w := historyWarnings(r.stderr); len(w) != 0 {
			t.Errorf("stderr %q; want no warning: the run only spools", r.stderr)
		}
		// The first reader opens the database, moves it aside and ingests
		// the run into a new one.
		r = e.run([]string{"history", "--json", "--limit", "0"})
		if w := historyWarnings(r.stderr); r.code != 0 || len(w) != 1 || !strings.Contains(w[0], "corrupt") {
			t.Errorf("history: exit %d, stderr %q; want one warning saying the database was corrupt and moved", r.code, r.stderr)
		}
		moved, _ := filepath.Glob(db + ".corrupt-*")
		if len(moved) != 1 {
			t.Fatalf("moved aside: %v; want one file", moved)
		}
		if b, _ := os.ReadFile(moved[0]); !bytes.Equal(b, garbage) {
			t.Errorf("%s is not the old file", moved[0])
		}
		if runs := e.history(); len(runs) != 1 || runs[0].Status != "finished" {
			t.Errorf("new history: %+v; want the run", runs)
		}
	})
}

// rerun runs a recorded command again from its directory with its flags,
// judged again: a denied command stays denied.
func TestHistoryRerun(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		judgedEnv(t, e)
		e.mkdir(filepath.Join(e.ws, "sub"))
		db := filepath.Join(e.dir, "h", "history.db")
		r := e.run([]string{"run", "--history-db", db, "--workspace", "..", "-c", "echo again >> log.txt"}, inDir(filepath.Join(e.ws, "sub")))
		if r.code != 0 {
			t.Fatalf("run: exit %d %s", r.code, r.stderr)
		}
		r = e.run([]string{"run", "--history-db", db, "-c", "touch M; mkfs.ext4 /dev/sda"})
		if r.code != 126 {
			t.Fatalf("denied run: exit %d", r.code)
		}
		runs := e.history("--history-db", db)
		if len(runs) != 2 {
			t.Fatalf("history: %d runs", len(runs))
		}
		// From elsewhere: the rerun goes back to where the run was.
		r = e.run([]string{"history", "rerun", "--history-db", db, strconv.FormatInt(runs[1].ID, 10)}, inDir(e.outside))
		if r.code != 0 {
			t.Errorf("rerun: exit %d\n%s", r.code, r.stderr)
		}
		if b, _ := os.ReadFile(filepath.Join(e.ws, "sub", "log.txt")); string(b) != "again\nagain\n" {
			t.Errorf("log.txt after the rerun: %q; want two lines", b)
		}
		r = e.run([]string{"history", "rerun", "--history-db", db, "--yes", strconv.FormatInt(runs[0].ID, 10)}, inDir(e.outside))
		if r.code != 126 || e.ran() || !strings.Contains(r.stderr, "forgebox: denied: ") {
			t.Errorf("rerun of a denied run: exit %d, stderr %q; want 126, denied again", r.code, r.stderr)
		}
		if r := e.run([]string{"history", "rerun", "--history-db", db, "4242"}); r.code != 1 {
			t.Errorf("rerun of no such run: exit %d; want 1", r.code)
		}
		after := e.history("--history-db", db)
		if len(after) != 4 || after[1].Status != "finished" || after[0].Status != "denied" {
			t.Fatalf("history after the reruns: %+v; want two more runs", after)
		}
		if after[1].Cwd != runs[1].Cwd || strings.Join(after[1].Argv, " ")+after[1].Command != "echo again >> log.txt" {
			t.Errorf("rerun row: cwd %s, command %q; want %s and the same command", after[1].Cwd, after[1].Command, runs[1].Cwd)
		}
	})
}

// prune keeps the newest runs.
func TestHistoryPrune(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		for i := range 8 {
			if r := e.run([]string{"run", "--", "sh", "-c", fmt.Sprintf("exit %d", i)}); r.code != i {
				t.Fatalf("run %d: exit %d %s", i, r.code, r.stderr)
			}
		}
		r := e.run([]string{"history", "prune", "--keep-rows", "5"})
		if r.code != 0 || !strings.Contains(r.stdout, "removed 3 runs") {
			t.Errorf("history prune --keep-rows 5: exit %d, %q", r.code, r.stdout)
		}
		runs := e.history()
		if len(runs) != 5 || *runs[0].ExitCode != 7 || *runs[4].ExitCode != 3 {
			t.Errorf("after prune: %d runs; want the newest 5", len(runs))
		}
	})
}

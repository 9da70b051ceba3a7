package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/forgebox/forgebox/history"
)

func TestParseSince(t *testing.T) {
	loc := time.FixedZone("X", 3600)
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, loc)
	good := map[string]time.Time{
		"2h":                        now.Add(-2 * time.Hour),
		"90m":                       now.Add(-90 * time.Minute),
		"7d":                        now.Add(-7 * 24 * time.Hour),
		"2w":                        now.Add(-14 * 24 * time.Hour),
		"1d12h":                     now.Add(-36 * time.Hour),
		"0.5d":                      now.Add(-12 * time.Hour),
		"2026-11-20":                time.Date(2026, 11, 20, 0, 0, 0, 0, loc),
		"2026-11-20T15:04":          time.Date(2026, 11, 20, 15, 4, 0, 0, loc),
		"2026-11-20 15:04:05":       time.Date(2026, 11, 20, 15, 4, 5, 0, loc),
		"2026-11-20T15:04:05Z":      time.Date(2026, 11, 20, 15, 4, 5, 0, time.UTC),
		"2026-11-20T15:04:05+02:00": time.Date(2026, 11, 20, 13, 4, 5, 0, time.UTC),
		" 3h ":                      now.Add(-3 * time.Hour),
	}
	for in, want := range good {
		got, err := parseSince(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseSince(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "yesterday", "-2h", "2x", "7dd", "d", "2026-13-01", "20/11/2026", "1w-1d"} {
		if got, err := parseSince(in, now); err == nil {
			t.Errorf("parseSince(%q) = %v; want an error", in, got)
		}
	}
}

// The flags of history take values before and after the ID, and --since
// reaches the filter.
func TestHistoryFlags(t *testing.T) {
	q := queryFlags{json: true, withLimit: true, defaultLimit: 20}
	fs := historyFlagSet("list")
	q.register(fs)
	pos, err := parseInterleaved(fs, []string{"--failed", "x", "--since", "2h", "--limit", "5", "--grep", "make test"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := q.filter()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pos, []string{"x"}) || f.Limit != 5 || !f.Failed || f.Grep != "make test" || time.Since(f.Since) < 2*time.Hour-time.Minute || time.Since(f.Since) > 2*time.Hour+time.Minute {
		t.Errorf("parsed %q, %+v", pos, f)
	}
	if err := fs.Parse([]string{"--since", "soon"}); err == nil {
		t.Errorf("--since soon parsed; want an error")
	}
	q = queryFlags{withLimit: true, defaultLimit: 20}
	fs = historyFlagSet("list")
	q.register(fs)
	if _, err := parseInterleaved(fs, nil); err != nil || q.limit != 20 {
		t.Errorf("default limit %d, %v; want 20", q.limit, err)
	}
}

func TestParseID(t *testing.T) {
	for _, tt := range []struct {
		in      string
		id      int64
		wantKey string
	}{{"12", 12, ""}, {"#7", 7, ""}, {"1700000000000000000-42-1", 0, "1700000000000000000-42-1"}} {
		if id, key, err := parseID([]string{tt.in}); err != nil || id != tt.id || key != tt.wantKey {
			t.Errorf("parseID(%q) = %d, %q, %v; want %d, %q", tt.in, id, key, err, tt.id, tt.wantKey)
		}
	}
	for _, in := range [][]string{nil, {"0"}, {"-3"}, {"x"}, {"1", "2"}} {
		if _, _, err := parseID(in); err == nil {
			t.Errorf("parseID(%q) = nil error; want one", in)
		}
	}
}

// Relative paths are recorded absolute, so that a rerun from the
// recorded directory finds the same ones; nothing else changes.
func TestRecordedArgs(t *testing.T) {
	var f runFlags
	fs := f.flagSet()
	f.judgeFlags(fs)
	f.historyFlags(fs)
	args := []string{"--workspace", "proj", "--rw=../cache", "-ro", "/abs", "--json", "--env", "A=b", "--history-db", "h.db", "--", "ls", "--workspace", "x"}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	got := recordedArgs(fs, args, "/home/u")
	want := []string{"--workspace", "/home/u/proj", "--rw=/home/cache", "-ro", "/abs", "--json", "--env", "A=b", "--history-db", "/home/u/h.db", "--", "ls", "--workspace", "x"}
	if !slices.Equal(got, want) {
		t.Errorf("recordedArgs = %q\nwant %q", got, want)
	}
	if !slices.Equal(args[:2], []string{"--workspace", "proj"}) {
		t.Errorf("recordedArgs changed its input: %q", args)
	}
	line := []string{"-c", "cat a", "--policy", "p.json"}
	if got := recordedArgs(fs, line, "/w"); !slices.Equal(got, []string{"-c", "cat a", "--policy", "/w/p.json"}) {
		t.Errorf("recordedArgs(%q) = %q", line, got)
	}
}

// A rerun goes through the judge again: a recorded --yes or --no-policy
// does not carry over, not even in the command's own arguments' place.
func TestRerunArgs(t *testing.T) {
	got := rerunArgs([]string{"--yes", "--json", "-no-policy", "--yes=true", "--timeout", "5s", "--", "prog", "--yes"})
	want := []string{"--json", "--timeout", "5s", "--", "prog", "--yes"}
	if !slices.Equal(got, want) {
		t.Errorf("rerunArgs = %q; want %q", got, want)
	}
}

func TestEscapeControls(t *testing.T) {
	tests := []struct {
		in        string
		multiline bool
		want      string
	}{
		{"ls -la", false, "ls -la"},
		{"a\nb\tc", false, `a\nb\tc`},
		{"a\nb\tc", true, "a\nb\tc"},
		{"\x1b[2J\x1b]0;pwned\x07", true, `\x1b[2J\x1b]0;pwned\a`},
		{"caf\xc3", false, `caf\xc3`},
		{"x\u009by", false, `x\u009by`},
		{"日本", false, "日本"},
	}
	for _, tt := range tests {
		if got := escapeControls(tt.in, tt.multiline); got != tt.want {
			t.Errorf("escapeControls(%q, %v) = %q; want %q", tt.in, tt.multiline, got, tt.want)
		}
	}
}

// The listing people read: one line per run, newest first as given, cut to
// the width, a stored command unable to break the table or drive the
// terminal.
func TestWriteTable(t *testing.T) {
	start := time.Date(2026, 11, 23, 9, 15, 2, 0, time.UTC)
	ms := func(f float64) *float64 { return &f }
	code := func(c int) *int { return &c }
	runs := []history.Run{
		{ID: 1207, StartedAt: start.Add(5 * time.Minute), Status: history.StatusRunning, Permission: history.PermNotJudged, Argv: []string{"sleep", "30"}},
		{ID: 1206, StartedAt: start.Add(4 * time.Minute), Status: history.StatusAbandoned, Permission: history.PermAutoApproved, Level: "R0", Argv: []string{"make", "test"}},
		{ID: 1205, StartedAt: start.Add(3 * time.Minute), Status: history.StatusDenied, Permission: history.PermDenied, Level: "R4", Command: "touch M; mkfs.ext4 /dev/sda"},
		{ID: 1204, StartedAt: start.Add(2 * time.Minute), Status: history.StatusRefused, Permission: history.PermAskedDenied, Level: "R1", Command: "frobnicate --x"},
		{ID: 1203, StartedAt: start.Add(time.Minute), Status: history.StatusFinished, DurationMS: ms(125432), ExitCode: code(124), TimedOut: true, Permission: history.PermAskedApproved, Scope: "session", Level: "R2", Command: "npm run build"},
		{ID: 1202, StartedAt: start.Add(30 * time.Second), Status: history.StatusFinished, DurationMS: ms(2.25), ExitCode: code(137), Signal: "SIGKILL", Permission: history.PermGranted, Scope: "permanent", Level: "R0", Argv: []string{"kill", "-9", "$$"}},
		{ID: 1201, StartedAt: start, Status: history.StatusFinished, DurationMS: ms(1534.5), ExitCode: code(1), Permission: history.PermAutoApproved, Level: "R0",
			Command: "printf '\\033[2J' >/dev/null; echo \x1b[31mred\x1b[0m\nand a second line that is long enough to be cut at one hundred columns for sure"},
		{ID: 12, StartedAt: start, Status: history.StatusFailed, ExitCode: code(127), Permission: history.PermNotJudged, Argv: []string{"nonexistent"}},
	}
	var b bytes.Buffer
	writeTable(&b, runs, 100, time.UTC)
	golden(t, "table.golden", b.Bytes())
	for i, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if n := len([]rune(line)); n > 100 {
			t.Errorf("line %d is %d columns wide; want at most 100: %q", i, n, line)
		}
		if strings.ContainsAny(line, "\x1b\r\n") {
			t.Errorf("line %d holds a control character: %q", i, line)
		}
	}
	b.Reset()
	writeTable(&b, nil, 100, time.UTC)
	if b.String() != "no runs recorded\n" {
		t.Errorf("empty table = %q", b.String())
	}
}

// golden compares got with testdata/history/NAME (go test -update
// rewrites it).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "history", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update rewrites it):\n%s", path, got)
	}
}

func TestDurationText(t *testing.T) {
	for in, want := range map[float64]string{0.42: "0.4ms", 12.5: "12.5ms", 1534.5: "1.53s", 125432: "2m05s", 4*3600e3 + 62e3: "4h01m"} {
		if got := durationText(&in); got != want {
			t.Errorf("durationText(%v) = %q; want %q", in, got, want)
		}
	}
	if got := durationText(nil); got != "-" {
		t.Errorf("durationText(nil) = %q", got)
	}
}

// A run recorded without the arguments of forgebox run cannot be rerun;
// one that is not there is exit 1.
func TestRerunRefusesWithoutArgs(t *testing.T) {
	db := filepath.Join(t.TempDir(), "history.db")
	ctx := t.Context()
	st, _, err := history.Open(ctx, db, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := &history.Run{Status: history.StatusDenied, Command: "make deploy", Cwd: t.TempDir()}
	if _, err := st.Record(ctx, r); err != nil {
		t.Fatal(err)
	}
	st.Close()
	out, errs := tempFile(t), tempFile(t)
	e := env{stdin: nil, stdout: out, stderr: errs}
	if code := e.historyCmd([]string{"rerun", "--history-db", db, strconv.FormatInt(r.ID, 10)}); code != exitForgebox {
		t.Errorf("rerun of a row without args: exit %d; want %d", code, exitForgebox)
	}
	if b, _ := os.ReadFile(errs.Name()); !strings.Contains(string(b), "no recorded arguments") {
		t.Errorf("stderr %q; want the reason", b)
	}
	if code := e.historyCmd([]string{"rerun", "--history-db", db, "77"}); code != 1 {
		t.Errorf("rerun of no such run: exit %d; want 1", code)
	}
	if code := e.historyCmd([]string{"show", "--history-db", db, "77"}); code != 1 {
		t.Errorf("show of no such run: exit %d; want 1", code)
	}
}

func tempFile(t *testing.T) *os.File {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/forgebox/forgebox/policy"
	"github.com/forgebox/forgebox/shellquote"
)

// maxSessionID bounds a session ID; it is only hashed into a file name,
// but it is printed in hints and stored in the file.
const maxSessionID = 128

// validSessionID accepts 1-128 characters of [A-Za-z0-9._:@-]: enough for
// UUIDs, host:pid and user@task, nothing a shell or a path would read.
func validSessionID(id string) error {
	if id == "" || len(id) > maxSessionID {
		return fmt.Errorf("invalid session ID %q: it must be 1 to %d characters long", truncate(id, 40), maxSessionID)
	}
	for _, c := range id {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.ContainsRune("._:@-", c):
		default:
			return fmt.Errorf("invalid session ID %q: it may hold only letters, digits and . _ : @ -", truncate(id, 40))
		}
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// sessionStore is the file holding one session's approvals.
type sessionStore struct {
	id   string
	path string
}

// sessionFile is the store's content.
type sessionFile struct {
	Session string        `json:"session"`
	Rules   []policy.Rule `json:"rules"`
}

// newSessionStore names the store of a session in dir: the ID is hashed,
// so that no ID can name a path, and long enough that two IDs never meet.
func newSessionStore(dir, id string) *sessionStore {
	sum := sha256.Sum256([]byte(id))
	return &sessionStore{id: id, path: filepath.Join(dir, hex.EncodeToString(sum[:])[:32]+".json")}
}

// load returns the session's approvals; a store not yet written has none.
func (s *sessionStore) load() ([]policy.Rule, error) {
	data, err := readSmallFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the approvals of session %s: %w", s.id, err)
	}
	var f sessionFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("read the approvals of session %s in %s: %w", s.id, s.path, err)
	}
	if f.Session != s.id {
		return nil, fmt.Errorf("read the approvals of session %s: %s belongs to session %q", s.id, s.path, f.Session)
	}
	for i := range f.Rules {
		f.Rules[i].Source = "session"
	}
	return f.Rules, nil
}

// add records approvals, each once.
func (s *sessionStore) add(rules []policy.Rule) error {
	old, err := s.load()
	if err != nil {
		return err
	}
	for _, r := range rules {
		r.Scope = policy.Session
		if !slices.ContainsFunc(old, func(o policy.Rule) bool { return sameRule(o, r) }) {
			old = append(old, r)
		}
	}
	return s.save(old)
}

// remove drops the approvals drop selects and returns them.
func (s *sessionStore) remove(drop func(policy.Rule) bool) ([]policy.Rule, error) {
	old, err := s.load()
	if err != nil {
		return nil, err
	}
	var kept, removed []policy.Rule
	for _, r := range old {
		if drop(r) {
			removed = append(removed, r)
		} else {
			kept = append(kept, r)
		}
	}
	if len(removed) == 0 {
		return nil, nil
	}
	return removed, s.save(kept)
}

func (s *sessionStore) save(rules []policy.Rule) error {
	if rules == nil {
		rules = []policy.Rule{}
	}
	data, err := json.MarshalIndent(sessionFile{Session: s.id, Rules: rules}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the approvals of session %s: %w", s.id, err)
	}
	if err := writeFileAtomic(s.path, append(data, '\n')); err != nil {
		return fmt.Errorf("record the approvals of session %s: %w", s.id, err)
	}
	return nil
}

func sameRule(a, b policy.Rule) bool {
	return a.Text() == b.Text() && (a.Command != "") == (b.Command != "")
}

// writeFileAtomic replaces path with data: readers see the old file or the
// new one, never a part, and a crash leaves one of them. Directories it
// creates are private (0700), and so is the file (0600): approvals say
// what may run unasked.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create directory %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("create a temporary file in %s: %w", dir, err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return fmt.Errorf("chmod %s: %w", tmp.Name(), err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	// The data must be on disk before the rename makes it the file, or a
	// crash could leave an empty file under the real name.
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		done = true
		return fmt.Errorf("rename %s to %s: %w", tmp.Name(), path, err)
	}
	done = true
	// The rename itself is durable once the directory is synced; not every
	// system can sync a directory, and the file is complete either way.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// recordAlways adds approvals to the user's configuration file as allow
// rules, creating the file if need be.
func recordAlways(path string, rules []policy.Rule) error {
	data, err := readSmallFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read the configuration: %w", err)
	}
	for _, r := range rules {
		r.Scope = policy.Always
		if data, err = policy.AddRule(path, data, "allow", r); err != nil {
			return fmt.Errorf("add the rule %q to %s: %w", r.Text(), path, err)
		}
	}
	if err := writeFileAtomic(path, data); err != nil {
		return fmt.Errorf("write the configuration: %w", err)
	}
	return nil
}

// revokeAlways removes from the user's configuration the allow rules that
// approvals wrote (those with "added") and drop selects.
func revokeAlways(path string, drop func(policy.Rule) bool) ([]policy.Rule, error) {
	data, err := readSmallFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the configuration: %w", err)
	}
	out, removed, err := policy.RemoveRules(path, data, func(kind string, r policy.Rule) bool {
		return kind == "allow" && r.Added != "" && drop(r)
	})
	if err != nil || len(removed) == 0 {
		return nil, err
	}
	if err := writeFileAtomic(path, out); err != nil {
		return nil, fmt.Errorf("write the configuration: %w", err)
	}
	return removed, nil
}

// maxAnswer bounds what is read of an answer to the prompt.
const maxAnswer = 256

// readAnswer reads one line from the terminal, a byte at a time: whatever
// is typed after it belongs to the command that runs next. It reports
// false at the end of input.
func readAnswer(r io.Reader) (string, bool) {
	var line []byte
	b := make([]byte, 1)
	for {
		n, err := r.Read(b)
		if n == 1 {
			if b[0] == '\n' {
				return string(line), true
			}
			if len(line) < maxAnswer {
				line = append(line, b[0])
			}
		}
		if err != nil {
			return string(line), len(line) > 0
		}
	}
}

// errNotOffered marks an answer naming a scope the prompt did not offer.
var errNotOffered = errors.New("not offered")

// parseAnswer reads an answer to the approval prompt. ok is false for no
// (the default: an empty line); an error means the answer should be asked
// again.
func parseAnswer(answer string, offered []policy.Scope) (policy.Scope, bool, error) {
	var s policy.Scope
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "", "n", "no":
		return 0, false, nil
	case "o", "once", "y", "yes":
		s = policy.Once
	case "s", "session":
		s = policy.Session
	case "a", "always":
		s = policy.Always
	default:
		return 0, false, fmt.Errorf("unknown answer %q", truncate(answer, 20))
	}
	if !slices.Contains(offered, s) {
		return 0, false, fmt.Errorf("%s is %w for this command", s, errNotOffered)
	}
	return s, true, nil
}

// promptChoices renders the offered scopes: "[o]nce, [s]ession, [N]o".
func promptChoices(offered []policy.Scope) string {
	var parts []string
	for _, s := range offered {
		n := s.String()
		parts = append(parts, "["+n[:1]+"]"+n[1:])
	}
	return strings.Join(append(parts, "[N]o"), ", ")
}

// askPerson puts an asking decision to the person at the terminal and
// returns the scope approved, or false for no.
func askPerson(in io.Reader, out io.Writer, what string, d *policy.Decision, offered []policy.Scope, note string) (policy.Scope, bool) {
	fmt.Fprintf(out, "forgebox: approve this command?\n  %s\n", what)
	fmt.Fprintf(out, "  risk %d, %s (%s), %s\n", d.Risk, d.Level, levelMeaning(d.Level), d.Category)
	for _, j := range askingCommands(d) {
		if len(d.Commands) > 1 {
			fmt.Fprintf(out, "  %s:\n", j.Command)
		}
		for _, r := range j.Reasons {
			fmt.Fprintf(out, "    - %s\n", r)
		}
	}
	if note != "" {
		fmt.Fprintf(out, "  (%s)\n", note)
	}
	for range 3 {
		fmt.Fprintf(out, "Run it? %s: ", promptChoices(offered))
		answer, ok := readAnswer(in)
		if !ok {
			fmt.Fprintln(out)
			return 0, false
		}
		s, yes, err := parseAnswer(answer, offered)
		if err == nil {
			return s, yes
		}
		fmt.Fprintf(out, "forgebox: %v\n", err)
	}
	return 0, false
}

// askingCommands are the sub-commands that made the decision ask.
func askingCommands(d *policy.Decision) []policy.Judgement {
	var out []policy.Judgement
	for _, j := range d.Commands {
		if j.Action == policy.Ask {
			out = append(out, j)
		}
	}
	return out
}

// levelMeaning says what a level means to the person deciding.
func levelMeaning(l policy.Level) string {
	switch l {
	case policy.R0:
		return "runs without asking"
	case policy.R1, policy.R2:
		return "approved once per session"
	case policy.R3:
		return "asked every time"
	}
	return "blocked"
}

// commandArgs are the arguments that name a command to forgebox again:
// -c 'LINE' or -- ARGV.
func commandArgs(line string, argv []string) string {
	if argv == nil {
		return "-c " + shellquote.Quote(line)
	}
	return "-- " + shellquote.Join(argv)
}

// approvalHint says how to approve an asking decision without a terminal,
// with the exact commands.
func approvalHint(d *policy.Decision, line string, argv []string, session string) string {
	cmd := commandArgs(line, argv)
	var ways []string
	if d.Offers(policy.Once) {
		ways = append(ways, "once: add --yes to forgebox run")
	}
	if d.Offers(policy.Session) {
		id := session
		if id == "" {
			id = "ID"
		}
		ways = append(ways, fmt.Sprintf("for a session: forgebox policy approve --session %s %s, then run with --session %s (or FORGEBOX_SESSION=%s)", id, cmd, id, id))
	}
	if d.Offers(policy.Always) {
		ways = append(ways, fmt.Sprintf("for good: forgebox policy approve --always %s", cmd))
	}
	if len(ways) == 1 {
		return "approve it " + ways[0] + " (it is asked every time)"
	}
	return "approve it " + strings.Join(ways, "; ")
}

// approveAtTerminal asks the person and records a session or standing
// approval. It reports whether the command may run, and the scope of the
// approval that took effect (once, when recording a wider one failed).
func (e env) approveAtTerminal(js *judgeSetup, d *policy.Decision, what string) (policy.Scope, bool) {
	var offered []policy.Scope
	note := ""
	for _, s := range d.Scopes {
		switch {
		case s == policy.Session && js.noStore != "":
			note = js.noStore
		case s == policy.Session && js.store == nil:
			note = "to approve it for this session, set FORGEBOX_SESSION or pass --session ID"
		default:
			offered = append(offered, s)
		}
	}
	scope, ok := askPerson(e.stdin, e.stderr, what, d, offered, note)
	if !ok {
		return 0, false
	}
	today := time.Now().Format(time.DateOnly)
	switch scope {
	case policy.Session:
		if err := js.store.add(d.ApprovalRules(today)); err != nil {
			e.errorf("cannot record the approval for session %s: %v; running it once", js.sessionID, err)
			scope = policy.Once
		} else {
			e.errorf("approved for session %s", js.sessionID)
		}
	case policy.Always:
		switch {
		case js.noAlways != "":
			e.errorf("cannot record the approval for good: %s; running it once", js.noAlways)
			scope = policy.Once
		default:
			if err := recordAlways(js.userConfig, d.ApprovalRules(today)); err != nil {
				e.errorf("cannot record the approval for good: %v; running it once", err)
				scope = policy.Once
			} else {
				e.errorf("approved for good: the rule is in %s (forgebox policy revoke removes it)", js.userConfig)
			}
		}
	}
	return scope, true
}

package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/forgebox/forgebox/pathtree"
	"github.com/forgebox/forgebox/policy"
)

// maxSessionID bounds a session ID; it is only hashed into a file name,
// but it is printed in hints and stored in the file.
const maxSessionID = 128

// ValidSessionID accepts 1-128 characters of [A-Za-z0-9._:@-]: enough for
// UUIDs, host:pid and user@task, nothing a shell or a path would read.
func ValidSessionID(id string) error {
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

// SessionStore is the file holding one session's approvals.
type SessionStore struct {
	id   string
	path string
}

// sessionFile is the store's content.
type sessionFile struct {
	Session string        `json:"session"`
	Rules   []policy.Rule `json:"rules"`
}

// NewSessionStore names the store of a session in dir: the ID is hashed,
// so that no ID can name a path, and long enough that two IDs never meet.
func NewSessionStore(dir, id string) *SessionStore {
	sum := sha256.Sum256([]byte(id))
	return &SessionStore{id: id, path: filepath.Join(dir, hex.EncodeToString(sum[:])[:32]+".json")}
}

// load returns the session's approvals; a store not yet written has none.
func (s *SessionStore) Load() ([]policy.Rule, error) {
	data, err := ReadSmallFile(s.path)
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
func (s *SessionStore) Add(rules []policy.Rule) error {
	old, err := s.Load()
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
func (s *SessionStore) Remove(drop func(policy.Rule) bool) ([]policy.Rule, error) {
	old, err := s.Load()
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

func (s *SessionStore) save(rules []policy.Rule) error {
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

// RecordAlways adds approvals to the user's configuration file as allow
// rules, creating the file if need be.
func RecordAlways(path string, rules []policy.Rule) error {
	data, err := ReadSmallFile(path)
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

// RevokeAlways removes from the user's configuration the allow rules that
// approvals wrote (those with "added") and drop selects.
func RevokeAlways(path string, drop func(policy.Rule) bool) ([]policy.Rule, error) {
	data, err := ReadSmallFile(path)
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

// ErrNoSession: a session approval needs a session ID.
var ErrNoSession = errors.New("no session to record the approval in: give --session ID (or set FORGEBOX_SESSION)")

// NotApprovableError: the decision does not offer the scope (a denial
// offers none).
type NotApprovableError struct {
	Decision *policy.Decision
	Scope    policy.Scope
}

func (e *NotApprovableError) Error() string {
	if e.Decision == nil || e.Decision.Action != policy.Ask {
		return "the command is not asking for an approval"
	}
	return fmt.Sprintf("the command cannot be approved %s", e.Scope)
}

// Approve records a person's approval of d with scope: for the session in
// its store, for good as allow rules in the user's configuration, once
// nowhere. It is the one way an approval is recorded, for every surface,
// and it refuses what the gate refuses (policy.Decision.Approvable). It
// returns the rules recorded.
func (j *Judge) Approve(d *policy.Decision, scope policy.Scope, now time.Time) ([]policy.Rule, error) {
	if !d.Approvable(scope) {
		return nil, &NotApprovableError{Decision: d, Scope: scope}
	}
	if scope == policy.Once {
		return nil, nil
	}
	rules := d.ApprovalRules(now.Format(time.DateOnly))
	switch {
	case scope == policy.Always && j.NoAlways != "":
		return nil, errors.New(j.NoAlways)
	case scope == policy.Always:
		return rules, RecordAlways(j.UserConfig, rules)
	case j.NoStore != "":
		return nil, errors.New(j.NoStore)
	case j.Store == nil:
		return nil, ErrNoSession
	}
	return rules, j.Store.Add(rules)
}

// Path is the store's file.
func (s *SessionStore) Path() string { return s.path }

// Revoke removes the approvals drop selects: from the session o.Session
// names (only an explicit one: a FORGEBOX_SESSION left in the environment
// must not turn a revocation of standing approvals into a no-op on a
// session), else the allow rules approvals wrote into the user's
// configuration. It returns what it removed and where from. Neither store
// is touched inside the workspace, where forgebox does not keep approvals.
func Revoke(h Host, o PolicyOptions, drop func(policy.Rule) bool) ([]policy.Rule, string, error) {
	ctx, err := JudgeContext(h, o.Workspace)
	if err != nil {
		return nil, "", err
	}
	if o.Session != "" {
		if err := ValidSessionID(o.Session); err != nil {
			return nil, "", err
		}
		dir, err := h.sessionDir()
		if err != nil {
			return nil, "", err
		}
		st := NewSessionStore(ResolvePath(dir), o.Session)
		if pathtree.Within(st.path, ctx.Workspace) {
			return nil, "", fmt.Errorf("the session store %s is inside the workspace; forgebox neither reads nor writes approvals there", st.path)
		}
		removed, err := st.Remove(drop)
		return removed, "session " + o.Session, err
	}
	path, err := userConfigFile(h, o.File)
	if err != nil {
		return nil, "", err
	}
	if pathtree.Within(path, ctx.Workspace) {
		return nil, "", fmt.Errorf("the configuration file %s is inside the workspace; forgebox does not write approvals there", path)
	}
	removed, err := RevokeAlways(path, drop)
	return removed, path, err
}

package runner

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/forgebox/forgebox/history"
	"github.com/forgebox/forgebox/policy"
	"github.com/forgebox/forgebox/sandbox"
)

const (
	// What the history keeps unless the configuration says otherwise.
	defaultKeepDays = 90
	defaultKeepRows = 100_000
	// historyTimeout bounds each history step: a locked or stuck database
	// must not hold forgebox's exit, nor the command's exit code.
	historyTimeout = 3 * time.Second
)

// recorder writes one run to the history without slowing the run down:
// the run goes to the history's spool (a journal of JSON lines, see
// history.Spool),
// not to SQLite, whose open and insert cost milliseconds of CPU on a
// machine busy launching the sandbox. A goroutine gathers the row's facts
// beside the judge and writes the running row once forgebox's share of the
// launch is done (Streams.Launched), so that it takes no CPU from the
// launch; the complete row replaces it once the command ended. A command
// that ended before its running row was written gets only the complete
// row. A run still going after durableAfter has its running row synced to
// disk. Every so often the goroutine also moves the spool into the
// database, while the command runs. Every history failure becomes a
// warning: the command's outcome never depends on its record. A nil
// *recorder records nothing.
type recorder struct {
	row *history.Run // the background goroutine's until ready is closed
	// verdicts carries the judge's word to the background goroutine.
	verdicts chan verdict
	ready    chan struct{}
	sent     bool
	// launched is closed when the launch leaves forgebox's hands, ending
	// when the run is over (complete): the running row waits for one.
	launched, ending       chan struct{}
	launchOnce, endingOnce sync.Once
	// enforced is what the sandbox enforces, as the launch reported it
	// (set before launched is closed); nil when it did not.
	enforced *sandbox.Enforced
	synced   chan error // the running row's sync, if it failed

	// Set by the background goroutine before ready is closed.
	spool    *history.Spool
	settings policy.History
	warnings []string

	pruned      chan struct{} // closed when the background ingest and prune ended
	pruneCancel context.CancelFunc
	pruneWarn   []string // set before pruned is closed
}

// verdict is what the judge decided about a run, for its row.
type verdict struct {
	// settings are the configuration's history settings, and where are
	// the workspace and the command's directory; nil means the recorder
	// finds them itself (--no-policy: nothing else read them).
	settings *policy.History
	where    *policy.Context
	// skip: do not record (the configuration could not be read, so
	// whether recording is on is unknown).
	skip   bool
	status string // history.StatusRunning, StatusDenied, StatusRefused, StatusFailed
	j      *judged
	// errCode says why a run did not start.
	errCode string
}

// startRecorder begins recording the run req asks for; it returns at
// once. It returns nil when recording is off.
func startRecorder(req *Request, spec sandbox.Spec) *recorder {
	if req.History.Off {
		return nil
	}
	r := &recorder{
		verdicts: make(chan verdict, 1), ready: make(chan struct{}),
		launched: make(chan struct{}), ending: make(chan struct{}), synced: make(chan error, 1),
	}
	go r.background(req, spec)
	return r
}

// HistoryPath is the database a command uses: --history-db, else
// $FORGEBOX_HISTORY_DB, else the XDG state directory's.
func HistoryPath(flagValue string) (string, error) {
	if flagValue == "" {
		return history.DefaultPath()
	}
	return filepath.Abs(flagValue)
}

// background gathers what the row needs while the judge decides, then
// opens the database and writes the row.
func (r *recorder) background(req *Request, spec sandbox.Spec) {
	defer close(r.ready)
	row, secrets := runFacts(req, spec)
	redact := history.NewRedactor(secrets)
	v := <-r.verdicts
	if v.skip {
		return
	}
	if v.settings == nil {
		s, where, err := HistorySettings(req.Host, req.Policy)
		if err != nil {
			r.warn("read the configuration's history settings: %v; this run is not recorded", err)
			return
		}
		v.settings, v.where = &s, where
	}
	r.settings = *v.settings
	if s := r.settings.Enabled; s != nil && !*s {
		return
	}
	v.fill(row)
	path, err := HistoryPath(req.History.DB)
	if err != nil {
		r.warn("%v; this run is not recorded", err)
		return
	}
	sp, err := history.OpenSpool(path, StoreOptions(redact))
	if err != nil {
		r.warn("%v; this run is not recorded", err)
		return
	}
	running := v.status == history.StatusRunning
	if running {
		select {
		case <-r.launched:
		case <-r.ending:
		}
		select {
		case <-r.ending:
			// Over already: complete writes the whole row at once.
			r.spool, r.row = sp, row
			return
		default:
		}
		if b, err := json.Marshal(r.enforced); err == nil && r.enforced != nil {
			row.Enforced = b
		}
	}
	if err := sp.Write(row); err != nil {
		r.warn("%v; this run is not recorded", err)
		return
	}
	r.spool, r.row = sp, row
	if !running {
		return
	}
	go r.makeDurable(sp, row.Key)
	// The spool is moved into the database once its journal holds
	// ingestAt bytes, by a run that has a command running meanwhile;
	// retention is checked then too. Readers ingest whatever is left when
	// they open.
	if n, err := sp.Pending(); err == nil && n >= ingestAt {
		r.startIngest(path, redact)
	}
}

// durableAfter is how long a run goes on before its running row is
// synced to disk. A run that ends sooner gets its complete row, which,
// like a commit under synchronous=NORMAL, survives a crash of forgebox but
// not a power cut; so does its running row until then. Syncing every run
// at its start cost the launch 0.2 ms here, and a run that waits for a
// sync in flight when it ends pays up to a few ms more.
const durableAfter = 50 * time.Millisecond

// makeDurable syncs the running row with this key to disk once the run
// has lasted durableAfter, unless it ended first.
func (r *recorder) makeDurable(sp *history.Spool, key string) {
	t := time.NewTimer(durableAfter)
	defer t.Stop()
	select {
	case <-t.C:
		if err := sp.Sync(key); err != nil {
			r.synced <- err
		}
	case <-r.ending:
	}
}

// launch is Streams.Launched: the launch left forgebox's hands, and the
// sandbox enforces e.
func (r *recorder) launch(e sandbox.Enforced) {
	if r != nil {
		r.launchOnce.Do(func() {
			r.enforced = &e
			close(r.launched)
		})
	}
}

// ingestAt is the size of the spool's journal at which a run ingests it:
// one open of the database, and one transaction, per ~50 runs (a run
// takes 4-6 KiB: its running row and its completion).
const ingestAt = 256 << 10

// StoreOptions open the history; the store redacts what it writes with
// redact, and marks a running row abandoned once its forgebox is gone.
func StoreOptions(redact *history.Redactor) history.Options {
	return history.Options{Alive: history.ProcessAlive, Redact: redact}
}

// HistorySettings reads the history section of the configuration that
// forgebox run would judge with, and where the command would run.
func HistorySettings(h Host, o PolicyOptions) (policy.History, *policy.Context, error) {
	js, err := LoadJudge(h, o)
	if err != nil {
		return policy.History{}, nil, err
	}
	return js.Engine.Policy().History, js.Ctx, nil
}

// KeepLimits are the retention bounds of the settings, defaults filled in.
func KeepLimits(s policy.History) (days, rows int) {
	days, rows = s.KeepDays, s.KeepRows
	if days <= 0 {
		days = defaultKeepDays
	}
	if rows <= 0 {
		rows = defaultKeepRows
	}
	return days, rows
}

// startIngest opens the database, which ingests the spool, and removes
// what is past the retention bounds, in the background while the command
// runs; complete waits for it, within its deadline.
func (r *recorder) startIngest(path string, redact *history.Redactor) {
	days, rows := KeepLimits(r.settings)
	ctx, cancel := context.WithTimeout(context.Background(), historyTimeout)
	r.pruned, r.pruneCancel = make(chan struct{}), cancel
	go func() {
		defer close(r.pruned)
		o := StoreOptions(redact)
		// Never wait for another run's ingest: it moves this run's lines
		// too, or leaves them for the next open.
		o.IngestIfIdle = true
		store, warnings, err := history.Open(ctx, path, o)
		if errors.Is(err, history.ErrIngestBusy) {
			return
		}
		// Running out of time here is contention (other runs ingest the
		// same spool at once): this run's row is spooled and waits for the
		// next open, so nothing is lost and there is nothing to say.
		timedOut := ctx.Err() != nil
		for _, w := range warnings {
			// (a deadline mid-ingest surfaces as a closed statement too)
			if !timedOut || !strings.Contains(w, context.DeadlineExceeded.Error()) && !strings.HasSuffix(w, "the spooled runs wait for the next open") {
				r.pruneWarn = append(r.pruneWarn, "history: "+w)
			}
		}
		if err != nil {
			if !timedOut {
				r.pruneWarn = append(r.pruneWarn, fmt.Sprintf("history: ingest the spool: %v", err))
			}
			return
		}
		// The store is not closed: see complete.
		need, err := store.NeedsPrune(ctx, days, rows)
		if err == nil && need {
			_, err = store.Prune(ctx, days, rows)
		}
		if err != nil && ctx.Err() == nil {
			r.pruneWarn = append(r.pruneWarn, fmt.Sprintf("history: prune: %v", err))
		}
	}()
}

func (r *recorder) warn(format string, args ...any) {
	r.warnings = append(r.warnings, "history: "+fmt.Sprintf(format, args...))
}

// judged hands the recorder the judge's word on a command that runs; nil
// when nothing judged it (--no-policy).
func (r *recorder) judged(j *judged) {
	v := verdict{status: history.StatusRunning, j: j}
	if j != nil {
		v.settings, v.where = &j.history, j.where
	}
	r.send(v)
}

// stopped records a command that did not start: denied, not approved, or
// a run forgebox could not start. It waits for the row to be written and
// returns its key (nil when not recorded) and the history's warnings.
func (r *recorder) stopped(v verdict) (*string, []string) {
	if r == nil {
		return nil, nil
	}
	r.send(v)
	deadline := time.Now().Add(historyTimeout)
	if !r.waitReady(deadline) {
		return nil, []string{"history: the spool did not answer in time; this run is not recorded"}
	}
	if r.row == nil {
		return nil, r.warnings
	}
	key := r.row.Key
	return &key, r.warnings
}

// skip says the run is not to be recorded.
func (r *recorder) skip() {
	r.send(verdict{skip: true})
}

func (r *recorder) send(v verdict) {
	if r == nil || r.sent {
		return
	}
	r.sent = true
	r.verdicts <- v
}

func (r *recorder) waitReady(deadline time.Time) bool {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-r.ready:
		return true
	case <-t.C:
		return false
	}
}

// finish completes the row of a run that ended; kept says whether
// res holds its output (see Streams.Keep). It returns the row's key, nil
// when the run is not recorded, and the history's warnings.
func (r *recorder) finish(res *sandbox.Result, kept bool) (*string, []string) {
	return r.complete(func(row *history.Run, end time.Time) {
		completeRow(row, res, end, kept)
		// The running row holds what the launch reported; the encoding
		// is redone only if the sandbox changed it since (--best-effort).
		if row.Enforced == nil || r.enforced == nil || !reflect.DeepEqual(*r.enforced, res.Enforced) {
			if b, err := json.Marshal(res.Enforced); err == nil {
				row.Enforced = b
			}
		}
	})
}

// failed completes the row of a run forgebox could not start: its exit
// code is forgebox's (125, 126, 127).
func (r *recorder) failed(errCode string, code int) (*string, []string) {
	return r.complete(func(row *history.Run, end time.Time) {
		row.Status, row.ErrorCode = history.StatusFailed, errCode
		row.ExitCode, row.EndedAt = &code, &end
	})
}

func (r *recorder) complete(fill func(*history.Run, time.Time)) (*string, []string) {
	if r == nil {
		return nil, nil
	}
	if !r.sent {
		// Nothing judged it (a failure before the judge): nothing to record.
		r.skip()
		return nil, nil
	}
	r.endingOnce.Do(func() { close(r.ending) })
	deadline := time.Now().Add(historyTimeout)
	if !r.waitReady(deadline) {
		return nil, []string{"history: the spool did not answer in time; this run is not recorded"}
	}
	warnings := r.warnings
	if r.row == nil {
		return nil, warnings
	}
	row := r.row
	fill(row, time.Now())
	if row.DurationMS == nil && row.EndedAt != nil {
		// A run that failed to start lasted from its start to now.
		d := ms(row.EndedAt.Sub(row.StartedAt))
		row.DurationMS = &d
	}
	// Same key: the complete row replaces the running one.
	select {
	case err := <-r.synced:
		warnings = append(warnings, fmt.Sprintf("history: sync the running row: %v", err))
	default:
	}
	if err := r.spool.Write(row); err != nil {
		warnings = append(warnings, fmt.Sprintf("history: complete run %s: %v", row.Key, err))
	}
	if r.pruned != nil {
		t := time.NewTimer(time.Until(deadline))
		select {
		case <-r.pruned:
			warnings = append(warnings, r.pruneWarn...)
		case <-t.C:
			// Abandoned: the batch in flight rolls back when forgebox
			// exits; the next prune goes on from there.
		}
		t.Stop()
		r.pruneCancel()
	}
	// A store opened to ingest is not closed: closing the last connection
	// checkpoints the WAL into the database and syncs it (0.7-0.9 ms
	// here), on the path to forgebox's exit. Every write is committed
	// already, and SQLite recovers a WAL left by a process that exited, as
	// after a crash.
	key := row.Key
	return &key, warnings
}

// fill puts the judge's word into the row.
func (v verdict) fill(row *history.Run) {
	row.Status = v.status
	var d *policy.Decision
	var g Grant
	if v.j != nil {
		d, g = v.j.decision, v.j.Grant
	}
	row.Permission, row.Scope = PermissionStatus(d, g)
	if v.where != nil {
		row.Cwd, row.Workspace = v.where.Cwd, v.where.Workspace
	}
	if d != nil {
		row.Risk, row.Level, row.Category = d.Risk, d.Level.String(), d.Category.String()
		row.Rule = d.Rule.String()
		if b, err := json.Marshal(d); err == nil {
			row.Decision = b
		}
	}
	if v.status != history.StatusRunning {
		// Nothing ran: no exit code of its own, no duration.
		now := time.Now()
		row.EndedAt, row.ErrorCode = &now, v.errCode
	}
}

// Grant is how a command that asked was approved, if it was.
type Grant struct {
	Asked, Approved bool
	Scope           policy.Scope
}

// PermissionStatus says how the decision was reached: the history's
// permission_status and permission_scope.
func PermissionStatus(d *policy.Decision, g Grant) (status, scope string) {
	switch {
	case d == nil:
		return history.PermNotJudged, ""
	case d.Next(false) == policy.Refuse:
		return history.PermDenied, ""
	case d.Action == policy.Allow && d.Rule != nil && d.Rule.Kind == "allow":
		if d.Rule.Source == "session" {
			return history.PermGranted, "session"
		}
		return history.PermGranted, "permanent"
	case d.Action == policy.Allow:
		return history.PermAutoApproved, ""
	case g.Approved:
		return history.PermAskedApproved, scopeName(g.Scope)
	}
	return history.PermAskedDenied, ""
}

func scopeName(s policy.Scope) string {
	if s == policy.Always {
		return "permanent"
	}
	return s.String()
}

// runFacts is the row of a run as far as it is known before the judge
// decides, and the secret values the redactor must hide.
func runFacts(req *Request, spec sandbox.Spec) (*history.Run, []string) {
	row := &history.Run{
		Command: spec.Command, Argv: argvOrNil(spec),
		Cwd: spec.Dir, Workspace: spec.Workspace,
		Args:      req.History.Args,
		Status:    history.StatusRunning,
		StartedAt: time.Now(),
		Version:   req.History.Version,
	}
	row.Host, _ = os.Hostname()
	if u, err := user.Current(); err == nil {
		row.User = u.Username
	} else {
		row.User = strconv.Itoa(os.Getuid())
	}
	if id := cmp.Or(req.Policy.Session, req.Host.Getenv("FORGEBOX_SESSION")); ValidSessionID(id) == nil {
		row.SessionID = id
	}
	env, withheld, _ := sandbox.CommandEnv(spec)
	row.Env = envSnapshot(env)
	// Values set with --env NAME=VALUE under a secret-looking name are
	// secrets too; they also appear in the recorded arguments.
	secrets := withheld
	for _, kv := range spec.SetEnv {
		if k, v, ok := strings.Cut(kv, "="); ok && sandbox.LooksSecret(k) {
			secrets = append(secrets, v)
		}
	}
	return row, secrets
}

// envSnapshot keeps each variable's name, and its value unless the name
// looks secret.
func envSnapshot(env []string) []history.EnvVar {
	out := make([]history.EnvVar, 0, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if sandbox.LooksSecret(k) {
			out = append(out, history.EnvVar{Name: k, Secret: true})
		} else {
			out = append(out, history.EnvVar{Name: k, Value: v})
		}
	}
	return out
}

// completeRow puts how the run ended into its row.
func completeRow(row *history.Run, res *sandbox.Result, end time.Time, kept bool) {
	row.Status = history.StatusFinished
	row.EndedAt = &end
	dur := ms(res.Duration)
	row.DurationMS = &dur
	code := res.ExitCode
	row.ExitCode = &code
	row.Signal, row.TimedOut, row.OOMKilled = res.Signal, res.TimedOut, res.OOMKilled
	row.OutputKept = kept
	if len(res.Connections) > 0 || res.ConnectionsOmitted > 0 {
		if b, err := json.Marshal(NetworkRecord{res.Connections, res.ConnectionsOmitted}); err == nil {
			row.Network = b
		}
	}
	if kept {
		var cut bool
		row.Stdout, row.StdoutBytes, cut = keptText(res.Stdout)
		row.OutputTruncated = cut
		row.Stderr, row.StderrBytes, cut = keptText(res.Stderr)
		row.OutputTruncated = row.OutputTruncated || cut
	}
}

// NetworkRecord is what the history keeps of a run's connections.
type NetworkRecord struct {
	Connections []sandbox.Connection `json:"connections"`
	Omitted     int                  `json:"omitted,omitempty"`
}

// keptText renders what the history keeps of a stream: at most keptOutput
// bytes, the first and last halves, as text.
func keptText(c sandbox.Captured) (string, int64, bool) {
	kept := clip(c, keptOutput)
	text, _ := kept.Text()
	return text, c.Total, kept.Omitted > 0
}

// clip cuts captured output down to limit bytes, keeping the first and last
// halves on character boundaries.
func clip(c sandbox.Captured, limit int) sandbox.Captured {
	if len(c.Head)+len(c.Tail) <= limit {
		return c
	}
	all := append(append([]byte{}, c.Head...), c.Tail...)
	half := limit / 2
	head := all[:runeStart(all, half)]
	tailFrom := runeStart(all, len(all)-(limit-half))
	if tailFrom < len(head) {
		tailFrom = len(head)
	}
	out := sandbox.Captured{Head: head, Tail: all[tailFrom:], Total: c.Total}
	out.Omitted = c.Total - int64(len(out.Head)) - int64(len(out.Tail))
	return out
}

// runeStart moves i back to the start of the UTF-8 character it falls in.
func runeStart(p []byte, i int) int {
	for k := 0; k < 3 && i > 0 && i < len(p) && p[i]&0xC0 == 0x80; k++ {
		i--
	}
	return i
}

// FillRow puts into row what the judge decided and how an ask was
// approved, with its status, as a run's own record has them: for the
// commands a shell session runs, which forgebox records beside the
// session's run.
func FillRow(row *history.Run, status string, d *policy.Decision, g Grant) {
	verdict{status: status, j: &judged{decision: d, Grant: g}}.fill(row)
}

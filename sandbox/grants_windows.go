package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	conpty "github.com/forgebox/forgebox/conpty_windows"
	"golang.org/x/sys/windows"
)

// The changes a run makes to file security on the host, and their undo.
//
// A Low-integrity token writes only objects labelled Low that its DACL
// lets it write. A run makes its writable roots so (conpty.ApplyTree: the
// Low label, an OWNER RIGHTS entry, and ACEs naming the run's SID), and
// takes it all away at the end (conpty.RevokeTree). Nothing is left on the
// disk but the journal of what is in effect, under %LOCALAPPDATA%\
// forgebox\grants, which a run writes before it changes anything:
//
//   - a root used by several runs at once is set up by the first and
//     undone by the last (the journal counts them, under a lock file);
//   - a run that died (forgebox killed, the machine off) is undone by the
//     next run, which finds its record with no live process behind it;
//   - a record is kept when an undo fails, so that the next run retries.
//
// The private temporary directory is journalled too, and removed.

// journalHolder is one run using a root.
type journalHolder struct {
	PID     uint32 `json:"pid"`
	Created int64  `json:"created"` // the process's creation time, as FILETIME nanoseconds
	RunSID  string `json:"run_sid"`
}

// journalRecord is what is in effect on one root.
type journalRecord struct {
	Root    string          `json:"root"`
	Kind    string          `json:"kind"` // grantWrite, grantRead or grantTemp
	Holders []journalHolder `json:"holders"`
	// The shared changes of a writable root: the Low labels and the OWNER
	// RIGHTS entry. Complete is false while the first run's walk goes on:
	// its record of the objects' own Low labels is partial.
	Labeled     bool            `json:"labeled"`
	OwnerRights bool            `json:"owner_rights"`
	Complete    bool            `json:"complete"`
	OwnLow      []conpty.FileID `json:"own_low,omitempty"`
}

const (
	grantWrite = "write"
	grantRead  = "read"
	grantTemp  = "temp"
)

// lockWait bounds the wait for another run's setup or undo of a root
// (a walk over a very large tree).
const lockWait = 15 * time.Minute

// grants are one run's changes.
type grants struct {
	dir      string
	self     journalHolder
	strict   bool
	user     string
	held     []heldRoot // in the order taken; undone in reverse
	warnings []string
}

type heldRoot struct{ key, root, kind string }

// journalDir is where the journal lives.
func journalDir() (string, error) {
	local, err := windows.KnownFolderPath(windows.FOLDERID_LocalAppData, 0)
	if err != nil {
		return "", fmt.Errorf("find %%LOCALAPPDATA%%: %w", err)
	}
	return filepath.Join(local, "forgebox", "grants"), nil
}

// leftoverGrants lists what runs that died left in effect: the roots of
// the records no live run holds, which the next run undoes.
func leftoverGrants() []string {
	dir, err := journalDir()
	if err != nil {
		return nil
	}
	g := &grants{dir: dir}
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if key, ok := strings.CutSuffix(e.Name(), ".json"); ok {
			if rec := g.read(key); rec != nil {
				if live, _ := splitHolders(rec.Holders); len(live) == 0 {
					out = append(out, rec.Root)
				}
			}
		}
	}
	return out
}

func newGrants(runSID string, strict bool) (*grants, error) {
	dir, err := journalDir()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create the journal directory: %w", err)
	}
	created, err := processCreated(windows.CurrentProcess())
	if err != nil {
		return nil, fmt.Errorf("read forgebox's start time: %w", err)
	}
	user, err := conpty.UserSID()
	if err != nil {
		return nil, fmt.Errorf("read the user's SID: %w", err)
	}
	return &grants{dir: dir, strict: strict, user: user,
		self: journalHolder{PID: windows.GetCurrentProcessId(), Created: created, RunSID: runSID}}, nil
}

// writable makes root writable to the run, with its protected paths
// read-only. It refuses a root that overlaps one another live run holds
// writable: their labels cannot be shared.
func (g *grants) writable(ctx context.Context, root string, protect []protectedRel) (conpty.TreeResult, error) {
	if other, pid, ok := g.overlapping(root); ok {
		return conpty.TreeResult{}, &UnavailableError{Layer: "workspace",
			Reason: fmt.Sprintf("another forgebox run (process %d) holds %s writable, which overlaps %s: Windows labels of overlapping trees cannot be shared; wait for it to end", pid, other, root)}
	}
	plan := func(first bool) conpty.Plan {
		p := conpty.WritablePlan(g.self.RunSID, g.strict, first)
		for _, pr := range protect {
			p.Protect(pr.rel, pr.dir)
		}
		return p
	}
	return g.join(ctx, root, grantWrite, plan)
}

// readable lets the run read root (the strict profile's --ro).
func (g *grants) readable(ctx context.Context, root string) (conpty.TreeResult, error) {
	return g.join(ctx, root, grantRead, func(bool) conpty.Plan { return conpty.ReadablePlan(g.self.RunSID) })
}

// join records the run as a holder of root, then applies its plan.
func (g *grants) join(ctx context.Context, root, kind string, plan func(first bool) conpty.Plan) (conpty.TreeResult, error) {
	key := recordKey(kind, root)
	unlock, err := g.lock(ctx, key)
	if err != nil {
		return conpty.TreeResult{}, err
	}
	defer unlock()
	rec := g.read(key)
	if rec == nil {
		rec = &journalRecord{Root: root, Kind: kind}
	}
	live, dead := splitHolders(rec.Holders)
	first := len(live) == 0
	if len(dead) > 0 {
		if err := g.revoke(ctx, rec, dead, first); err != nil {
			return conpty.TreeResult{}, fmt.Errorf("undo what a dead forgebox run left on %s: %w", root, err)
		}
	}
	p := plan(first)
	if first {
		out, err := conpty.PreviewRoot(root, p)
		if err != nil {
			return conpty.TreeResult{}, &UnavailableError{Layer: "workspace", Reason: "cannot make it writable: " + err.Error(), Err: err}
		}
		rec.Labeled, rec.OwnerRights, rec.Complete, rec.OwnLow = p.Label && !out.AlreadyLow, out.OwnerRights, false, nil
	}
	// Journalled before anything changes: from here on, a crash is undone
	// by the next run.
	rec.Holders = append(live, g.self)
	if err := g.write(key, rec); err != nil {
		return conpty.TreeResult{}, err
	}
	g.held = append(g.held, heldRoot{key: key, root: root, kind: kind})
	res, err := conpty.ApplyTree(ctx, root, p)
	if first {
		rec.OwnLow, rec.Complete = res.OwnLow, err == nil
		if werr := g.write(key, rec); werr != nil && err == nil {
			err = werr
		}
	}
	return res, err
}

// temp creates the run's private temporary directory.
func (g *grants) temp(ctx context.Context, path string) error {
	key := recordKey(grantTemp, path)
	unlock, err := g.lock(ctx, key)
	if err != nil {
		return err
	}
	defer unlock()
	if err := g.write(key, &journalRecord{Root: path, Kind: grantTemp, Holders: []journalHolder{g.self}, Complete: true}); err != nil {
		return err
	}
	g.held = append(g.held, heldRoot{key: key, root: path, kind: grantTemp})
	return conpty.CreatePrivateDir(path, g.user, g.self.RunSID)
}

// release undoes the run's changes, newest first. It goes on past
// failures, keeping their records for the next run to retry, and returns
// them joined.
func (g *grants) release(ctx context.Context) error {
	var errs []error
	for i := len(g.held) - 1; i >= 0; i-- {
		h := g.held[i]
		if err := g.leave(ctx, h); err != nil {
			errs = append(errs, err)
		}
	}
	g.held = nil
	return errors.Join(errs...)
}

func (g *grants) leave(ctx context.Context, h heldRoot) error {
	unlock, err := g.lock(ctx, h.key)
	if err != nil {
		return fmt.Errorf("undo the run's changes to %s: %w", h.root, err)
	}
	defer unlock()
	rec := g.read(h.key)
	if rec == nil {
		rec = &journalRecord{Root: h.root, Kind: h.kind, Complete: true}
	}
	others := slices.DeleteFunc(slices.Clone(rec.Holders), func(x journalHolder) bool { return x == g.self })
	live, dead := splitHolders(others)
	if err := g.revoke(ctx, rec, append(dead, g.self), len(live) == 0); err != nil {
		rec.Holders = append(live, dead...)
		rec.Holders = append(rec.Holders, g.self) // dead once forgebox exits: the next run retries
		g.write(h.key, rec)
		return err
	}
	if len(live) == 0 {
		return g.remove(h.key)
	}
	rec.Holders = live
	return g.write(h.key, rec)
}

// revoke undoes the changes of the holders gone, and the shared ones when
// none is left.
func (g *grants) revoke(ctx context.Context, rec *journalRecord, gone []journalHolder, last bool) error {
	if rec.Kind == grantTemp {
		if !last {
			return nil
		}
		if err := os.RemoveAll(rec.Root); err != nil {
			return fmt.Errorf("remove the run's temporary directory %s: %w", rec.Root, err)
		}
		return nil
	}
	if _, err := os.Lstat(rec.Root); errors.Is(err, os.ErrNotExist) {
		return nil // the root is gone, and its descriptors with it
	}
	r := conpty.Revoke{OwnerRights: last && rec.OwnerRights, Labels: last && rec.Labeled, KeepExplicitLow: !rec.Complete}
	for _, h := range gone {
		r.RunSIDs = append(r.RunSIDs, h.RunSID)
	}
	res, err := conpty.RevokeTree(ctx, rec.Root, r, rec.OwnLow)
	if err != nil {
		return fmt.Errorf("undo the run's changes to the permissions of %s: %w", rec.Root, err)
	}
	if n := res.SkippedCount(); n > 0 {
		// Objects whose descriptors shut forgebox out (the command can
		// create such files): no retry would help, so the record goes.
		g.warnings = append(g.warnings, fmt.Sprintf("%d entries under %s keep permissions of the run that forgebox may not change (%s); "+
			"an administrator can reset them with icacls /reset", n, rec.Root, strings.Join(res.Examples, "; ")))
	}
	if last {
		rec.Labeled, rec.OwnerRights = false, false
	}
	return nil
}

// sweep undoes what runs that died left behind: records whose holders are
// all gone, or the gone holders' part of the others. It reports what it
// cannot undo and never fails the run.
func (g *grants) sweep(ctx context.Context) []string {
	entries, err := os.ReadDir(g.dir)
	if err != nil {
		return nil
	}
	var warnings []string
	for _, e := range entries {
		key, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok {
			continue
		}
		unlock, err := g.tryLock(key)
		if err != nil {
			continue // another run is at it
		}
		if rec := g.read(key); rec != nil {
			live, dead := splitHolders(rec.Holders)
			if len(dead) > 0 {
				if err := g.revoke(ctx, rec, dead, len(live) == 0); err != nil {
					warnings = append(warnings, "undoing what a dead forgebox run left: "+err.Error())
				} else if len(live) == 0 {
					g.remove(key)
				} else {
					rec.Holders = live
					g.write(key, rec)
				}
			}
		}
		unlock()
	}
	return warnings
}

// overlapping finds a writable root of another live run that contains root
// or lies in it.
func (g *grants) overlapping(root string) (string, uint32, bool) {
	entries, err := os.ReadDir(g.dir)
	if err != nil {
		return "", 0, false
	}
	for _, e := range entries {
		key, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok {
			continue
		}
		rec := g.read(key)
		if rec == nil || rec.Kind != grantWrite || strings.EqualFold(rec.Root, root) {
			continue
		}
		a, _ := winWithin(root, rec.Root)
		b, _ := winWithin(rec.Root, root)
		if !a && !b {
			continue
		}
		if live, _ := splitHolders(rec.Holders); len(live) > 0 && !slices.Contains(live, g.self) {
			return rec.Root, live[0].PID, true
		}
	}
	return "", 0, false
}

func recordKey(kind, root string) string {
	sum := sha256.Sum256([]byte(kind + "\n" + strings.ToUpper(root)))
	return hex.EncodeToString(sum[:16])
}

func (g *grants) read(key string) *journalRecord {
	b, err := os.ReadFile(filepath.Join(g.dir, key+".json"))
	if err != nil {
		return nil
	}
	var rec journalRecord
	if json.Unmarshal(b, &rec) != nil {
		return nil
	}
	return &rec
}

// write replaces a record atomically (write, flush, rename).
func (g *grants) write(key string, rec *journalRecord) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	final := filepath.Join(g.dir, key+".json")
	tmp := final + ".new"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("write the journal: %w", err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, final)
	}
	if err != nil {
		return fmt.Errorf("write the journal: %w", err)
	}
	return nil
}

func (g *grants) remove(key string) error {
	err := os.Remove(filepath.Join(g.dir, key+".json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// lock takes the record's lock file, waiting for another run that holds
// it. The lock is the file's byte range (LockFileEx): the system releases
// it when its holder dies. Lock files stay; removing one would let two
// runs lock two different files of one name.
func (g *grants) lock(ctx context.Context, key string) (func(), error) {
	deadline := time.Now().Add(lockWait)
	pause := time.Millisecond
	for {
		unlock, err := g.tryLock(key)
		if err == nil {
			return unlock, nil
		}
		if !errors.Is(err, windows.ERROR_LOCK_VIOLATION) || time.Now().After(deadline) {
			return nil, fmt.Errorf("lock the journal: %w", err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
}

func (g *grants) tryLock(key string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(g.dir, key+".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	ol := new(windows.Overlapped)
	h := windows.Handle(f.Fd())
	if err := windows.LockFileEx(h, windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		windows.UnlockFileEx(h, 0, 1, 0, ol)
		f.Close()
	}, nil
}

// splitHolders tells the runs still alive from the dead.
func splitHolders(hs []journalHolder) (live, dead []journalHolder) {
	for _, h := range hs {
		if processAlive(h) {
			live = append(live, h)
		} else {
			dead = append(dead, h)
		}
	}
	return live, dead
}

// processAlive reports whether the process of h still runs: the same pid
// with the same creation time (pids are reused).
func processAlive(h journalHolder) bool {
	p, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, h.PID)
	if err != nil {
		return false
	}
	defer windows.CloseHandle(p)
	var code uint32
	if windows.GetExitCodeProcess(p, &code) != nil || code != 259 { // STILL_ACTIVE
		return false
	}
	created, err := processCreated(p)
	return err == nil && created == h.Created
}

func processCreated(p windows.Handle) (int64, error) {
	var c, e, k, u windows.Filetime
	if err := windows.GetProcessTimes(p, &c, &e, &k, &u); err != nil {
		return 0, err
	}
	return c.Nanoseconds(), nil
}

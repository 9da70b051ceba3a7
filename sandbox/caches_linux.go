package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/forgebox/forgebox/caches"
	"github.com/forgebox/forgebox/pathtree"
	"golang.org/x/sys/unix"
)

// runCaches is what a run keeps of its private caches.
type runCaches struct {
	root string
	ws   caches.Workspace
	// overlays are the entries mounted as overlays, whose work
	// directories the run leaves marked (caches.Workspace.Release), and
	// work the name of those directories (caches.Workspace.WorkDir).
	overlays []string
	work     string
	lock     io.Closer // held for the run: no eviction or clear meanwhile
	// envBefore is the command's environment without the redirections,
	// for a run that goes on without namespaces (and so without caches).
	envBefore []string
	// skip are the host cache directories inside writable roots, by path,
	// with their inode: the post-run check does not walk them (the run
	// wrote the overlay, not them).
	skip map[string]uint64
}

func (r *runCaches) release() {
	if r != nil && r.lock != nil {
		r.lock.Close()
		r.lock = nil
	}
}

// planCaches decides the run's private caches (package caches has the
// table and the reasons) and makes their directories on the host, 0700,
// beneath the state directory. A host cache directory that exists becomes
// the lower layer of an overlay on its own path. One that does not cannot
// be a mount point without changing the host: the private cache is
// mounted in the run's /run instead, and the tool pointed at it through
// its environment, where it has a variable for that. A cache the plan
// cannot make stays read-only, as without caches: never the host's own
// is made writable.
func (p *prepared) planCaches(s Spec, l layout, homes []string) []cachePlan {
	if s.NoCache || s.StateDir == "" || l.Profile == ProfileReadOnly {
		return nil
	}
	env := p.child.Env
	get := func(k string) string { return lookupEnv(env, k) }
	home := get("HOME")
	if !path.IsAbs(home) {
		home = s.Home
	}
	root := caches.Root(s.StateDir)
	ws := caches.For(root, l.Workspace)
	runDir := "/run/forgebox-caches"
	if st, err := os.Lstat("/run"); err != nil || !st.IsDir() {
		runDir = "/tmp/.forgebox-caches"
	}
	var plans []cachePlan
	redirected := slices.Clone(env)
	skip := map[string]uint64{}
	for _, pl := range caches.Locate(get, home) {
		h, err := realPath(pl.Path)
		switch {
		case err == nil && h.Dir && !pl.OnlyRedirect:
			if !cacheAllowed(h.Path, homes, l, root) {
				continue
			}
			var st unix.Stat_t
			if unix.Stat(h.Path, &st) != nil {
				continue
			}
			// overlay's lowerdir is a list split at ':' and (before 6.5) an
			// option string split at ','.
			plans = append(plans, cachePlan{Name: pl.Name, Path: h.Path, Entry: ws.Entry(pl.Name), Overlay: !strings.ContainsAny(h.Path, ",:\\")})
			skip[h.Path] = st.Ino
		case errors.Is(err, fs.ErrNotExist):
			target := runDir + "/" + pl.Name
			name, value, ok := pl.Redirection(target, func(k string) string { return lookupEnv(redirected, k) })
			if !ok {
				continue
			}
			redirected = setEnv(redirected, name, value)
			plans = append(plans, cachePlan{Name: pl.Name, Path: target, Entry: ws.Entry(pl.Name), Env: name + "=" + value})
		}
	}
	plans = outermost(plans)
	if len(plans) == 0 {
		return nil
	}
	names := make([]string, len(plans))
	for i, c := range plans {
		names[i] = c.Name
	}
	if err := ws.Prepare(l.Workspace, names, time.Now()); err != nil {
		p.warnings = append(p.warnings, fmt.Sprintf("no private caches for this run (%v): the package caches are read-only", err))
		return nil
	}
	// The caches directory itself is not walked either, where a writable
	// root holds it: overlay makes its work directories there, mode 0.
	var st unix.Stat_t
	if unix.Stat(root, &st) == nil {
		skip[root] = st.Ino
	}
	lock, shared, err := ws.Hold()
	if err == nil {
		p.caches = &runCaches{root: root, ws: ws, lock: lock, envBefore: env, skip: skip}
		for i, c := range plans {
			if !c.Overlay {
				continue
			}
			p.caches.overlays = append(p.caches.overlays, c.Name)
			if plans[i].Work, err = ws.WorkDir(c.Name, shared, os.Getpid()); err != nil {
				break
			}
			p.caches.work = plans[i].Work
		}
	}
	if err != nil {
		p.caches.release()
		p.caches = nil
		p.warnings = append(p.warnings, fmt.Sprintf("no private caches for this run (%v): the package caches are read-only", err))
		return nil
	}
	p.child.Env = redirected
	return plans
}

// cacheAllowed refuses a cache directory that is /, or holds a home, a
// writable root or forgebox's own caches: an overlay there would stand in
// for far more than a cache.
func cacheAllowed(dir string, homes []string, l layout, root string) bool {
	if dir == "/" || pathtree.Within(root, dir) {
		return false
	}
	for _, h := range homes {
		if pathtree.Within(h, dir) {
			return false
		}
	}
	for _, w := range l.Writable {
		if pathtree.Within(w, dir) {
			return false
		}
	}
	return true
}

// outermost drops a cache that lies inside another one (GOCACHE set to a
// directory of ~/.cache): the outer overlay makes it private already, and
// overlays stacked on overlays are limited.
func outermost(plans []cachePlan) []cachePlan {
	slices.SortFunc(plans, func(a, b cachePlan) int { return strings.Compare(a.Path, b.Path) })
	var out []cachePlan
	for _, c := range plans {
		if !slices.ContainsFunc(out, func(o cachePlan) bool { return pathtree.Within(c.Path, o.Path) }) {
			out = append(out, c)
		}
	}
	return out
}

func setEnv(env []string, name, value string) []string {
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
	return append(out, name+"="+value)
}

// cacheFallbacks applies what the child reported: the overlays it could
// not mount (bit i: the i-th overlay op of the plan), bound as plain
// private directories instead, with a cold cache.
func (p *prepared) cacheFallbacks(mask uint32, errno unix.Errno) []string {
	if mask == 0 {
		return nil
	}
	var fell, out []string
	i := 0
	for _, m := range p.child.Mounts {
		if m.Op != opOverlay {
			continue
		}
		if i < 32 && mask&(1<<i) != 0 && m.Flags&opFlagKeep != 0 {
			out = append(out, p.undoRefused(m.A, errno))
		} else if i < 32 && mask&(1<<i) != 0 {
			fell = append(fell, m.A)
			for j := range p.enforced.Caches {
				if p.enforced.Caches[j].Path == m.A {
					p.enforced.Caches[j].Mode = CachePrivate
				}
			}
		}
		i++
	}
	if len(fell) == 0 {
		return out
	}
	return append(out, fmt.Sprintf("the kernel refused an overlay on %s (%v): the command wrote a private cache that starts empty there; the host's cache was not written", strings.Join(fell, ", "), errno))
}

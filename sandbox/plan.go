package sandbox

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/forgebox/forgebox/pathtree"
)

// itemKind says what the view places at a path.
type itemKind uint8

const (
	kindBase      itemKind = iota + 1 // placed by the child's base view: /proc, /dev, /tmp, /run ...
	kindTmpfs                         // a fresh tmpfs private to the run
	kindCover                         // an empty read-only stand-in hiding the path
	kindGrant                         // the host path itself, bound in place
	kindProtect                       // a path inside a writable root, made read-only
	kindPin                           // a directory bound onto itself: it can no longer be renamed
	kindSymlink                       // a symlink inside a tmpfs of ours
	kindRedirect                      // a host symlink (From) bound over a file: the path leads to a private copy
	kindCache                         // an overlay: the host path below, a private cache (Source) above
	kindCacheBind                     // a private cache (Source) bound writable, without the host's
)

// viewItem is one mount of the filesystem view, before ordering.
type viewItem struct {
	Kind itemKind
	Path string
	Dir  bool   // directory (or, for covers and grants, a file when false)
	Set  uint64 // mount attributes to set
	Clr  uint64 // and to clear
	Mode uint32 // tmpfs root mode
	// ReadOnlyAfter makes a tmpfs read-only once everything beneath it is
	// in place.
	ReadOnlyAfter bool
	// Target is a symlink's target, or a cache overlay's work directory
	// (relative to Source).
	Target string
	// Dev and Ino pin the host inode a protect, pin or redirect item must
	// find at Path.
	Dev, Ino uint64
	// From is the host symlink a redirect binds over Path, and FromDev
	// and FromIno its inode.
	From             string
	FromDev, FromIno uint64
	// Source is the host path a cache item is cloned from: the private
	// cache entry (overlay's upper and work) for kindCache, the directory
	// to bind for kindCacheBind.
	Source string
	// Undo, on the workspace's grant, is the run's undo record: an
	// overlay goes on top of the grant, with Undo/upper and Undo/work as
	// its upper and work directories.
	Undo string
	// UndoRequired: the run must not go on without the overlay.
	UndoRequired bool
}

// planMounts orders the items and turns them into mount operations for the
// child, which runs them on top of its base view (the host tree read-only,
// fresh /proc, minimal /dev). It only reasons about paths: every host path
// it refers to was checked by the caller, and the child re-checks each one
// without following symlinks when it gets there.
//
// The plan has two phases. Every host path to be bound is cloned first,
// before a cover of the plan hides it (the child reaches paths beneath its
// private /tmp and /run through the directories it opened before covering
// them). Then the items are placed, parents before children; a path
// beneath one of our tmpfs mounts gets its mount point made first.
func planMounts(items []viewItem) ([]mountOp, uint32, error) {
	kept, err := placedItems(items)
	if err != nil {
		return nil, 0, err
	}
	ops, slot, slots := cloneOps(kept)
	placed, err := placeOps(kept, slot)
	if err != nil {
		return nil, 0, err
	}
	ops = append(ops, placed...)
	for _, it := range kept {
		if it.Kind == kindTmpfs && it.ReadOnlyAfter {
			ops = append(ops, mountOp{Op: opSetattr, A: it.Path, Set: attrRdonly})
		}
	}
	return ops, slots, nil
}

// placedItems checks the items, orders them parents first, drops covers
// that would hide nothing and turns a cover with something re-exposed
// beneath it into a tmpfs, so that mount points can be made in it.
func placedItems(items []viewItem) ([]viewItem, error) {
	for _, it := range items {
		if !path.IsAbs(it.Path) || path.Clean(it.Path) != it.Path {
			return nil, fmt.Errorf("plan: path %q is not absolute and clean", it.Path)
		}
	}
	items = slices.Clone(items)
	slices.SortStableFunc(items, func(a, b viewItem) int { return depth(a.Path) - depth(b.Path) })
	if i, j, ok := duplicatePath(items); ok {
		return nil, fmt.Errorf("plan: %s placed twice (kinds %d and %d)", items[i].Path, items[i].Kind, items[j].Kind)
	}
	var kept []viewItem
	for _, it := range items {
		// A cover inside something that is not host content hides nothing.
		if it.Kind == kindCover {
			if p := enclosing(kept, it.Path); p >= 0 && !hostContent(kept[p].Kind) {
				continue
			}
		}
		kept = append(kept, it)
	}
	for i := range kept {
		if kept[i].Kind != kindCover || !kept[i].Dir {
			continue
		}
		for _, other := range kept[i+1:] {
			if pathtree.Beneath(other.Path, kept[i].Path) {
				kept[i] = viewItem{Kind: kindTmpfs, Path: kept[i].Path, Dir: true, Mode: 0o755,
					Set: attrNosuid | attrNodev | attrNoexec, ReadOnlyAfter: true}
				break
			}
		}
	}
	return kept, nil
}

// cloneOps is the first phase: every host path to be bound is cloned into
// a slot. slot[i] is the slot of kept[i].
func cloneOps(kept []viewItem) (ops []mountOp, slot []uint32, slots uint32) {
	slot = make([]uint32, len(kept))
	for i, it := range kept {
		switch {
		case it.Kind == kindRedirect:
			slot[i] = slots
			ops = append(ops, mountOp{Op: opClone, A: it.From, Slot: slots, Flags: opFlagLink, Dev: it.FromDev, Ino: it.FromIno})
			slots++
		case it.Source != "":
			slot[i] = slots
			ops = append(ops, mountOp{Op: opClone, A: it.Source, Slot: slots})
			slots++
		case hostContent(it.Kind):
			slot[i] = slots
			ops = append(ops, mountOp{Op: opClone, A: it.Path, Slot: slots, Flags: recursiveIf(it.Dir), Dev: it.Dev, Ino: it.Ino})
			slots++
			if it.Undo != "" {
				// The record's slot is the next one (placeOps).
				ops = append(ops, mountOp{Op: opClone, A: it.Undo, Slot: slots})
				slots++
			}
		}
	}
	return ops, slot, slots
}

// placeOps is the second phase: each item is placed, parents first, with
// its mount point made first when it lies beneath a tmpfs of the run.
func placeOps(kept []viewItem, slot []uint32) ([]mountOp, error) {
	var ops []mountOp
	made := map[string]bool{}
	for i, it := range kept {
		p := enclosing(kept[:i], it.Path)
		if it.Kind == kindBase {
			if p < 0 || hostContent(kept[p].Kind) || kept[p].Kind == kindBase {
				continue // the base view has it already
			}
			// A cover of this plan hides the base's mount: make it again.
			it = viewItem{Kind: kindTmpfs, Path: it.Path, Dir: true, Mode: 0o1777, Set: attrNosuid | attrNodev}
		}
		if p >= 0 && !hostContent(kept[p].Kind) {
			ops = append(ops, mountPoint(kept[p].Path, it, made)...)
		} else if it.Kind == kindSymlink {
			return nil, fmt.Errorf("plan: symlink %s is not inside a tmpfs of the run", it.Path)
		}
		switch it.Kind {
		case kindTmpfs:
			ops = append(ops, mountOp{Op: opTmpfs, A: it.Path, Mode: it.Mode, Set: it.Set})
		case kindSymlink:
			ops = append(ops, mountOp{Op: opSymlink, A: it.Path, B: it.Target})
		case kindCover:
			flags := uint32(0)
			if it.Dir {
				flags = opFlagDir
			}
			ops = append(ops, mountOp{Op: opHide, A: it.Path, Flags: flags})
		case kindGrant, kindProtect, kindPin:
			ops = append(ops, mountOp{Op: opAttach, A: it.Path, Slot: slot[i], Set: it.Set, Clr: it.Clr, Flags: recursiveIf(it.Dir)})
			if it.Undo != "" {
				// On top of the grant, before anything beneath it (the
				// protected paths stay above the overlay). opFlagKeep:
				// if the kernel refuses it the grant stays as it is.
				// opFlagRequired: the verdict counted on undo, so the run
				// fails instead.
				flags := uint32(opFlagKeep)
				if it.UndoRequired {
					flags |= opFlagRequired
				}
				ops = append(ops, mountOp{Op: opOverlay, A: it.Path, B: "work", Slot: slot[i] + 1, Set: it.Set, Flags: flags})
			}
		case kindRedirect:
			// The file must still be the one copied: the copy stands for it.
			// opFlagLink: where the kernel refuses to mount the link, the
			// file is bound read-only instead.
			// Beneath the workspace's overlay the file shows the overlay's
			// device, not the host's: its clone (From) stays pinned.
			dev, ino := it.Dev, it.Ino
			if underUndo(kept[:i], it.Path) {
				dev, ino = 0, 0
			}
			ops = append(ops, mountOp{Op: opAttach, A: it.Path, Slot: slot[i], Set: it.Set, Dev: dev, Ino: ino, Flags: opFlagLink})
		case kindCache:
			ops = append(ops, mountOp{Op: opOverlay, A: it.Path, B: it.Target, Slot: slot[i], Set: it.Set})
		case kindCacheBind:
			ops = append(ops, mountOp{Op: opAttach, A: it.Path, Slot: slot[i], Set: it.Set, Clr: attrRdonly})
		default:
			return nil, fmt.Errorf("plan: unknown item kind %d at %s", it.Kind, it.Path)
		}
	}
	return ops, nil
}

// mountPoint creates, inside the tmpfs at base, the directories leading to
// the item and the item's own mount point.
func mountPoint(base string, it viewItem, made map[string]bool) []mountOp {
	var ops []mountOp
	rel := strings.TrimPrefix(it.Path, base+"/")
	if base == "/" {
		rel = strings.TrimPrefix(it.Path, "/")
	}
	parts := strings.Split(rel, "/")
	cur := base
	for _, part := range parts[:len(parts)-1] {
		cur = path.Join(cur, part)
		if !made[cur] {
			made[cur] = true
			ops = append(ops, mountOp{Op: opMkdir, A: cur, Mode: 0o755})
		}
	}
	if made[it.Path] || it.Kind == kindSymlink {
		return ops
	}
	made[it.Path] = true
	if it.Dir {
		return append(ops, mountOp{Op: opMkdir, A: it.Path, Mode: 0o755})
	}
	return append(ops, mountOp{Op: opMkfile, A: it.Path, Mode: 0o644})
}

// hostContent reports whether what is visible beneath an item of this kind
// is the host's own tree (so mount points already exist, and a secret
// beneath needs its cover): an overlay cache shows the host's directory.
func hostContent(k itemKind) bool {
	return k == kindGrant || k == kindProtect || k == kindPin || k == kindRedirect || k == kindCache
}

// enclosing returns the index of the deepest item in items that is a strict
// ancestor of p, or -1 when only the host root encloses it.
func enclosing(items []viewItem, p string) int {
	best, bestDepth := -1, -1
	for i, it := range items {
		if pathtree.Beneath(p, it.Path) && depth(it.Path) > bestDepth {
			best, bestDepth = i, depth(it.Path)
		}
	}
	return best
}

// underUndo reports whether p lies beneath a workspace with undo's overlay.
func underUndo(items []viewItem, p string) bool {
	for _, it := range items {
		if it.Undo != "" && pathtree.Beneath(p, it.Path) {
			return true
		}
	}
	return false
}

func duplicatePath(items []viewItem) (int, int, bool) {
	seen := map[string]int{}
	for i, it := range items {
		if j, ok := seen[it.Path]; ok {
			return j, i, true
		}
		seen[it.Path] = i
	}
	return 0, 0, false
}

func depth(p string) int {
	if p == "/" {
		return 0
	}
	return strings.Count(p, "/")
}

func recursiveIf(b bool) uint32 {
	if b {
		return opFlagRecursive
	}
	return 0
}

package conpty

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// What a run adds to the security descriptors of a tree (the workspace, a
// --rw or --ro path), and how it takes it away again.
//
// Windows stores inherited ACEs in every object: making an existing tree
// writable to a Low-integrity token means editing every object in it. The
// walk (tree_windows.go) does that itself, object by object, instead of
// letting SetNamedSecurityInfo propagate: it never follows a junction or a
// symbolic link, it leaves hard-linked files alone, and the undo removes
// exactly what was added, identified by the run's own SID, rather than
// recomputing inheritance over a tree the command has had its hands on.
//
// Every ACE a run adds names its run SID (a SID of its own, one of the
// token's restricting SIDs), except two things shared by all the runs that
// use a root at once: the Low label and an OWNER RIGHTS entry. The last run
// to leave a root removes those.

// OwnerRightsMask is what the OWNER RIGHTS entry grants owners: modify,
// without WRITE_DAC or WRITE_OWNER. Its presence replaces the implied
// READ_CONTROL | WRITE_DAC an owner otherwise has, and the command runs as
// the owner of the user's files.
const OwnerRightsMask = FileGenericRead | FileGenericWrite | FileGenericExecute | Delete

// Masks of the ACEs a run adds.
const (
	// ModifyMask lets the run's SID read, write, run and delete (strict
	// profile, where the user's own SID does not count for the command).
	ModifyMask = FileGenericRead | FileGenericWrite | FileGenericExecute | Delete | FileDeleteChild
	// ReadMask lets the run's SID read and run (strict profile, --ro).
	ReadMask = FileGenericRead | FileGenericExecute
	// NoSecurityMask is denied to the run's SID across a writable tree: the
	// command may not change permissions, owners or labels there.
	NoSecurityMask = WriteDAC | WriteOwner
	// ProtectMask is denied to the run's SID on a protected path.
	ProtectMask = FileWriteData | FileAppendData | FileWriteEA | FileWriteAttributes | FileDeleteChild | Delete | WriteDAC | WriteOwner
	// PinMask is denied on the root and on each directory between it and a
	// protected path: none of them may be deleted or renamed away (nor the
	// protected entries in them through FILE_DELETE_CHILD).
	PinMask = Delete | FileDeleteChild
)

// Object is what the walk knows of one file system object.
type Object struct {
	Root    bool
	Dir     bool
	Reparse bool   // a junction, symbolic link or other reparse point
	Links   uint32 // hard links
}

// Plan is what one run adds under one root.
type Plan struct {
	RunSID string
	// Explicit holds the ACEs set on particular objects, by Key of their
	// path relative to the root ("" for the root).
	Explicit map[string][]ACE
	// Shared are ACEs for the root that every run using it at once shares
	// (OWNER RIGHTS); nil for a run that joins a root already set up.
	Shared []ACE
	// Label labels the root Low, inheritably: the tree becomes writable to
	// a Low-integrity token where its DACL allows.
	Label bool
}

// Passed is what an object hands down to its children: copies of its
// inheritable ACEs, and the label.
type Passed struct {
	Deny, Allow []ACE
	Label       bool
}

// Outcome is what Apply did to one object.
type Outcome struct {
	Changed bool
	// Skipped says why the object stays unwritable to the command (or is
	// not descended into), when it does.
	Skipped string
	// AlreadyLow: the root carries a Low label already; nothing to add or
	// to remove later.
	AlreadyLow bool
	// OwnLow: the object had a Low label of its own before the run; the
	// undo keeps it.
	OwnLow bool
	// OwnerRights: the OWNER RIGHTS entry was added to the root (the undo
	// removes it); false when the root had one of its own.
	OwnerRights bool
	Pass        Passed
}

// Key is the form relative paths take in Plan.Explicit: components joined
// with a backslash and upper-cased as NTFS compares them.
func Key(parts ...string) string {
	return strings.Map(unicode.ToUpper, strings.Join(parts, `\`))
}

// WritablePlan is the plan for a writable root: the root may not be deleted
// or renamed, and no object under it may have its permissions, owner or
// label changed by the command; in the strict profile the run's SID is
// granted modify. shared adds the OWNER RIGHTS entry and the Low label, for
// the first run to use the root.
func WritablePlan(runSID string, strict, shared bool) Plan {
	p := Plan{RunSID: runSID, Explicit: map[string][]ACE{}, Label: shared}
	root := []ACE{
		{Type: AceDenied, Mask: Delete, SID: runSID},
		{Type: AceDenied, Flags: ObjectInherit | ContainerInherit, Mask: NoSecurityMask, SID: runSID},
	}
	if strict {
		root = append(root, ACE{Type: AceAllowed, Flags: ObjectInherit | ContainerInherit, Mask: ModifyMask, SID: runSID})
	}
	p.Explicit[""] = root
	if shared {
		p.Shared = []ACE{{Type: AceAllowed, Flags: ObjectInherit | ContainerInherit, Mask: OwnerRightsMask, SID: OwnerRightsSID}}
	}
	return p
}

// ReadablePlan is the plan for a --ro root in the strict profile: the run's
// SID may read it.
func ReadablePlan(runSID string) Plan {
	return Plan{RunSID: runSID, Explicit: map[string][]ACE{
		"": {{Type: AceAllowed, Flags: ObjectInherit | ContainerInherit, Mask: ReadMask, SID: runSID}},
	}}
}

// Protect makes the object at rel (components below the root) read-only
// to the run and pins it: it and each directory between it and the root
// cannot be deleted or renamed, so it cannot be replaced.
func (p *Plan) Protect(rel []string, dir bool) {
	var flags byte
	if dir {
		flags = ObjectInherit | ContainerInherit
	}
	p.add(Key(rel...), ACE{Type: AceDenied, Flags: flags, Mask: ProtectMask, SID: p.RunSID})
	for i := 0; i < len(rel); i++ {
		p.add(Key(rel[:i]...), ACE{Type: AceDenied, Mask: PinMask, SID: p.RunSID})
	}
}

func (p *Plan) add(key string, a ACE) {
	if !slices.ContainsFunc(p.Explicit[key], a.Equal) {
		p.Explicit[key] = append(p.Explicit[key], a)
	}
}

// Apply edits the descriptor sd of one object: it adds the plan's explicit
// ACEs for it (key is its Key) and copies of what its parent passes down,
// and labels it when the tree is labelled. sd must hold the DACL and the
// label (DACL_SECURITY_INFORMATION | LABEL_SECURITY_INFORMATION).
func (p Plan) Apply(sd *SecurityDescriptor, obj Object, key string, from Passed) (Outcome, error) {
	var out Outcome
	if obj.Reparse {
		if obj.Root {
			return out, fmt.Errorf("the root is a junction or symbolic link")
		}
		// The link itself may be protected (a .git that is a junction):
		// it gets its explicit ACEs, nothing inherited, no label, and the
		// walk does not follow it.
		if x := p.Explicit[key]; len(x) > 0 && sd.DACL != nil {
			sd.DACL.ACEs = insertACEs(sd.DACL.ACEs, x, nil, nil)
			out.Changed = true
		}
		return out, nil
	}
	if !sd.DACLPresent || sd.DACL == nil {
		out.Skipped = "it has no DACL, or a NULL one"
		if obj.Root {
			return out, fmt.Errorf("it has no DACL, or a NULL one that grants everyone everything")
		}
		return out, nil
	}
	protected := sd.Control&SEDACLProtected != 0
	linked := obj.Links > 1 && !obj.Dir
	explicit := slices.Clone(p.Explicit[key])
	if obj.Root {
		explicit = append(explicit, p.Shared...)
		if slices.ContainsFunc(sd.DACL.ACEs, isOwnerRights) {
			// An OWNER RIGHTS entry of the user's own already replaces
			// the owner's implied rights: it stays, and ours is not added.
			explicit = slices.DeleteFunc(explicit, isOwnerRights)
		} else {
			out.OwnerRights = slices.ContainsFunc(explicit, isOwnerRights)
		}
	}
	var deny, allow []ACE
	if !protected && !linked {
		deny, allow = inheritAll(from.Deny, obj.Dir), inheritAll(from.Allow, obj.Dir)
	}
	if len(explicit)+len(deny)+len(allow) > 0 {
		sd.DACL.ACEs = insertACEs(sd.DACL.ACEs, explicit, deny, allow)
		out.Changed = true
	}
	// What the children inherit: the inheritable ACEs this object now has
	// of the run's.
	for _, a := range slices.Concat(explicit, deny, allow) {
		if !obj.Dir || a.Flags&(ObjectInherit|ContainerInherit) == 0 {
			continue
		}
		if a.Type == AceDenied {
			out.Pass.Deny = append(out.Pass.Deny, a)
		} else {
			out.Pass.Allow = append(out.Pass.Allow, a)
		}
	}
	err := p.label(sd, obj, from, protected, linked, &out)
	return out, err
}

// label labels the object Low when the tree is labelled and it may be
// written: its DACL is its parent's to shape (not protected), the run's
// deny of WRITE_DAC reaches it (no explicit ACE grants security changes),
// and it is not a hard-linked file, whose other names lie elsewhere.
func (p Plan) label(sd *SecurityDescriptor, obj Object, from Passed, protected, linked bool, out *Outcome) error {
	labels := labelACEs(sd)
	if obj.Root {
		if !p.Label {
			return nil
		}
		for _, l := range labels {
			if l.SID != LowLabelSID || l.Flags&InheritOnly != 0 {
				return fmt.Errorf("it carries an integrity label of its own (%s), which forgebox does not change", l.SID)
			}
		}
		if len(labels) > 0 {
			out.AlreadyLow = true
			return nil
		}
		addLabel(sd, ACE{Type: AceLabel, Flags: ObjectInherit | ContainerInherit, Mask: LabelNoWriteUp, SID: LowLabelSID})
		out.Changed, out.Pass.Label = true, obj.Dir
		return nil
	}
	if len(labels) > 0 {
		out.OwnLow = slices.ContainsFunc(labels, func(l ACE) bool { return l.SID == LowLabelSID && l.Flags&Inherited == 0 })
		if from.Label && !out.OwnLow {
			out.Skipped = "it has an integrity label of its own"
		}
		return nil
	}
	if !from.Label {
		return nil
	}
	switch {
	case protected:
		out.Skipped = "its permissions do not inherit from its directory"
	case linked:
		out.Skipped = "it is hard-linked: its other names may lie outside the tree"
	case grantsSecurity(sd.DACL):
		out.Skipped = "an explicit entry of its own lets the command change its permissions"
	default:
		flags := byte(Inherited)
		if obj.Dir {
			flags |= ObjectInherit | ContainerInherit
		}
		addLabel(sd, ACE{Type: AceLabel, Flags: flags, Mask: LabelNoWriteUp, SID: LowLabelSID})
		out.Changed, out.Pass.Label = true, obj.Dir
	}
	return nil
}

// Revoke is the undo of the plans of runs under one root.
type Revoke struct {
	// RunSIDs are the runs whose ACEs go.
	RunSIDs []string
	// OwnerRights and Labels remove what the runs of a root share, when
	// the last of them leaves: the OWNER RIGHTS entry (when it was added:
	// Outcome.OwnerRights) and the Low labels (when the root was labelled,
	// not AlreadyLow).
	OwnerRights, Labels bool
	// KeepExplicitLow removes only inherited Low labels (and the root's):
	// for an undo whose record of the objects' own labels (OwnLow) is
	// incomplete, because the walk that labelled the tree was cut short.
	KeepExplicitLow bool
}

// Apply removes the run's ACEs from one object's descriptor; keepLow keeps
// a Low label the object had before the run (Outcome.OwnLow). It reports
// whether anything changed.
func (r Revoke) Apply(sd *SecurityDescriptor, obj Object, keepLow bool) bool {
	changed := false
	if sd.DACL != nil {
		n := len(sd.DACL.ACEs)
		sd.DACL.ACEs = slices.DeleteFunc(sd.DACL.ACEs, func(a ACE) bool {
			switch {
			case a.raw != nil:
				return false
			case slices.Contains(r.RunSIDs, a.SID):
				return true
			case r.OwnerRights && isOwnerRights(a) && a.Mask == OwnerRightsMask:
				// Ours: explicit on the root, inherited below it.
				return obj.Root == (a.Flags&Inherited == 0)
			}
			return false
		})
		changed = len(sd.DACL.ACEs) != n
	}
	if r.Labels && !keepLow && sd.SACL != nil {
		n := len(sd.SACL.ACEs)
		sd.SACL.ACEs = slices.DeleteFunc(sd.SACL.ACEs, func(a ACE) bool {
			return a.Type == AceLabel && a.SID == LowLabelSID && (!r.KeepExplicitLow || obj.Root || a.Flags&Inherited != 0)
		})
		changed = changed || len(sd.SACL.ACEs) != n
	}
	return changed
}

func isOwnerRights(a ACE) bool {
	return a.raw == nil && a.Type == AceAllowed && a.SID == OwnerRightsSID
}

func labelACEs(sd *SecurityDescriptor) []ACE {
	if sd.SACL == nil {
		return nil
	}
	var out []ACE
	for _, a := range sd.SACL.ACEs {
		if a.Type == AceLabel {
			out = append(out, a)
		}
	}
	return out
}

func addLabel(sd *SecurityDescriptor, l ACE) {
	if sd.SACL == nil {
		sd.SACL = &ACL{Revision: 2}
	}
	sd.SACLPresent = true
	sd.SACL.ACEs = append([]ACE{l}, sd.SACL.ACEs...)
}

// grantsSecurity reports whether an explicit allow ACE grants a right to
// change security: it comes before the run's inherited deny.
func grantsSecurity(acl *ACL) bool {
	return slices.ContainsFunc(acl.ACEs, func(a ACE) bool {
		return a.raw == nil && a.Type == AceAllowed && a.Flags&(Inherited|InheritOnly) == 0 && a.Mask&(WriteDAC|WriteOwner|GenericAll) != 0
	})
}

// inheritAll makes the copies a child inherits of its parent's inheritable
// ACEs ([MS-DTYP] 2.5.3.4.2, for the flags forgebox uses).
func inheritAll(aces []ACE, dir bool) []ACE {
	var out []ACE
	for _, a := range aces {
		if c, ok := inherit(a, dir); ok {
			out = append(out, c)
		}
	}
	return out
}

func inherit(a ACE, dir bool) (ACE, bool) {
	c := a
	switch {
	case dir && a.Flags&ContainerInherit != 0:
		c.Flags = Inherited | a.Flags&(ObjectInherit|ContainerInherit)
		if a.Flags&NoPropagate != 0 {
			c.Flags = Inherited
		}
	case dir && a.Flags&ObjectInherit != 0 && a.Flags&NoPropagate == 0:
		c.Flags = Inherited | ObjectInherit | InheritOnly
	case !dir && a.Flags&ObjectInherit != 0:
		c.Flags = Inherited
	default:
		return ACE{}, false
	}
	return c, true
}

// insertACEs puts explicit ACEs where SetEntriesInAcl would (denies first,
// allows at the end of the explicit ones) and inherited ones where the
// nearest ancestor's go: denies before every other inherited ACE. The
// run's inherited allows go last, so that they never outweigh a deny the
// object inherits from elsewhere.
func insertACEs(aces, explicit, deny, allow []ACE) []ACE {
	var xdeny, xallow []ACE
	for _, a := range explicit {
		if a.Type == AceDenied {
			xdeny = append(xdeny, a)
		} else {
			xallow = append(xallow, a)
		}
	}
	firstInherited := slices.IndexFunc(aces, func(a ACE) bool { return a.Flags&Inherited != 0 })
	if firstInherited < 0 {
		firstInherited = len(aces)
	}
	out := make([]ACE, 0, len(aces)+len(explicit)+len(deny)+len(allow))
	out = append(out, xdeny...)
	out = append(out, aces[:firstInherited]...)
	out = append(out, xallow...)
	out = append(out, deny...)
	out = append(out, aces[firstInherited:]...)
	out = append(out, allow...)
	return out
}

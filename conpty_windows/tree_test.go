package conpty

import (
	"slices"
	"strings"
	"testing"
)

const (
	runA = "S-1-9-1717729329-1-2-3"
	runB = "S-1-9-1717729329-4-5-6"
	user = "S-1-5-21-1-2-3-1001"
)

// profileInherited is what a file in a user's profile typically carries:
// full control for SYSTEM, Administrators and the user, all inherited from
// C:\Users\<user>.
func profileInherited(dir bool) []ACE {
	var f byte = Inherited
	if dir {
		f |= ObjectInherit | ContainerInherit
	}
	return []ACE{
		{Type: AceAllowed, Flags: f, Mask: 0x1f01ff, SID: SystemSID},
		{Type: AceAllowed, Flags: f, Mask: 0x1f01ff, SID: "S-1-5-32-544"},
		{Type: AceAllowed, Flags: f, Mask: 0x1f01ff, SID: user},
	}
}

func descriptor(aces []ACE, control uint16, labels ...ACE) *SecurityDescriptor {
	sd := &SecurityDescriptor{Control: control | SEDACLAutoInherited, DACLPresent: true, DACL: &ACL{Revision: 2, ACEs: slices.Clone(aces)}}
	if labels != nil {
		sd.SACLPresent, sd.SACL = true, &ACL{Revision: 2, ACEs: labels}
	}
	return sd
}

func clone(sd *SecurityDescriptor) *SecurityDescriptor {
	b, err := sd.Bytes()
	if err != nil {
		panic(err)
	}
	c, err := ParseSecurityDescriptor(b)
	if err != nil {
		panic(err)
	}
	return c
}

func labels(sd *SecurityDescriptor) []ACE { return labelACEs(sd) }

func TestWritablePlanRoot(t *testing.T) {
	p := WritablePlan(runA, false, true)
	sd := descriptor(profileInherited(true), 0)
	out, err := p.Apply(sd, Object{Root: true, Dir: true}, "", Passed{})
	if err != nil || !out.Changed || !out.OwnerRights || out.AlreadyLow {
		t.Fatalf("Apply(root) = %+v, %v", out, err)
	}
	want := append([]ACE{
		{Type: AceDenied, Mask: Delete, SID: runA},
		{Type: AceDenied, Flags: ObjectInherit | ContainerInherit, Mask: NoSecurityMask, SID: runA},
		{Type: AceAllowed, Flags: ObjectInherit | ContainerInherit, Mask: OwnerRightsMask, SID: OwnerRightsSID},
	}, profileInherited(true)...)
	if !slices.EqualFunc(sd.DACL.ACEs, want, ACE.Equal) {
		t.Errorf("root DACL =\n %v\nwant\n %v", sd.DACL.ACEs, want)
	}
	if l := labels(sd); len(l) != 1 || !l[0].Equal(ACE{Type: AceLabel, Flags: ObjectInherit | ContainerInherit, Mask: LabelNoWriteUp, SID: LowLabelSID}) {
		t.Errorf("root labels = %v, want an inheritable Low label", l)
	}
	if !out.Pass.Label || len(out.Pass.Deny) != 1 || len(out.Pass.Allow) != 1 {
		t.Errorf("root passes %+v, want the label, the NoSecurity deny and OWNER RIGHTS (not the root's own Delete deny)", out.Pass)
	}
}

func TestWritablePlanChildren(t *testing.T) {
	p := WritablePlan(runA, true, true)
	root := descriptor(profileInherited(true), 0)
	rootOut, err := p.Apply(root, Object{Root: true, Dir: true}, "", Passed{})
	if err != nil {
		t.Fatal(err)
	}
	from := rootOut.Pass

	file := descriptor(profileInherited(false), 0)
	out, err := p.Apply(file, Object{Links: 1}, Key("main.go"), from)
	if err != nil || !out.Changed || out.Skipped != "" {
		t.Fatalf("Apply(file) = %+v, %v", out, err)
	}
	// The run's deny comes before every inherited ACE, its allows last.
	want := slices.Concat(
		[]ACE{{Type: AceDenied, Flags: Inherited, Mask: NoSecurityMask, SID: runA}},
		profileInherited(false),
		[]ACE{
			{Type: AceAllowed, Flags: Inherited, Mask: ModifyMask, SID: runA},
			{Type: AceAllowed, Flags: Inherited, Mask: OwnerRightsMask, SID: OwnerRightsSID},
		})
	if !slices.EqualFunc(file.DACL.ACEs, want, ACE.Equal) {
		t.Errorf("file DACL =\n %v\nwant\n %v", file.DACL.ACEs, want)
	}
	if l := labels(file); len(l) != 1 || l[0].Flags != Inherited || l[0].SID != LowLabelSID {
		t.Errorf("file labels = %v, want an inherited Low label", l)
	}
	if len(out.Pass.Deny)+len(out.Pass.Allow) != 0 || out.Pass.Label {
		t.Errorf("a file passes %+v", out.Pass)
	}

	dir := descriptor(profileInherited(true), 0)
	out, err = p.Apply(dir, Object{Dir: true, Links: 1}, Key("src"), from)
	if err != nil || !out.Changed {
		t.Fatalf("Apply(dir) = %+v, %v", out, err)
	}
	for _, a := range dir.DACL.ACEs {
		if a.SID == runA && a.Flags != Inherited|ObjectInherit|ContainerInherit {
			t.Errorf("dir ACE %v: want inherited and inheritable", a)
		}
	}
	if l := labels(dir); len(l) != 1 || l[0].Flags != Inherited|ObjectInherit|ContainerInherit {
		t.Errorf("dir labels = %v", l)
	}
	if !out.Pass.Label || len(out.Pass.Deny) != 1 || len(out.Pass.Allow) != 2 {
		t.Errorf("dir passes %+v", out.Pass)
	}
}

func TestWritablePlanSkips(t *testing.T) {
	p := WritablePlan(runA, false, true)
	root := descriptor(profileInherited(true), 0)
	rootOut, _ := p.Apply(root, Object{Root: true, Dir: true}, "", Passed{})
	from := rootOut.Pass
	explicitUser := append([]ACE{{Type: AceAllowed, Mask: 0x1f01ff, SID: user}}, profileInherited(false)...)
	for _, c := range []struct {
		name    string
		sd      *SecurityDescriptor
		obj     Object
		skipped string
		dacl    bool // the DACL gets the run's inherited ACEs
		ownLow  bool
	}{
		{"protected DACL", descriptor([]ACE{{Type: AceAllowed, Mask: 0x1f01ff, SID: user}}, SEDACLProtected), Object{Links: 1}, "do not inherit", false, false},
		{"hard link", descriptor(profileInherited(false), 0), Object{Links: 2}, "hard-linked", false, false},
		{"hard-linked directory entry count", descriptor(profileInherited(true), 0), Object{Dir: true, Links: 3}, "", true, false},
		{"explicit full control", descriptor(explicitUser, 0), Object{Links: 1}, "change its permissions", true, false},
		{"junction", descriptor(profileInherited(true), 0), Object{Dir: true, Reparse: true}, "", false, false},
		{"NULL DACL", &SecurityDescriptor{DACLPresent: true}, Object{Links: 1}, "NULL", false, false},
		{"own Medium label", descriptor(profileInherited(false), 0, ACE{Type: AceLabel, Mask: LabelNoWriteUp, SID: MediumLabelSID}), Object{Links: 1}, "label of its own", true, false},
		{"own Low label", descriptor(profileInherited(false), 0, ACE{Type: AceLabel, Mask: LabelNoWriteUp, SID: LowLabelSID}), Object{Links: 1}, "", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := clone(c.sd)
			out, err := p.Apply(c.sd, c.obj, Key("x"), from)
			if err != nil {
				t.Fatal(err)
			}
			if c.skipped == "" && out.Skipped != "" || !strings.Contains(out.Skipped, c.skipped) {
				t.Errorf("Skipped = %q, want %q", out.Skipped, c.skipped)
			}
			got := c.sd.DACL != nil && slices.ContainsFunc(c.sd.DACL.ACEs, func(a ACE) bool { return a.SID == runA })
			if got != c.dacl {
				t.Errorf("run ACEs added = %v, want %v", got, c.dacl)
			}
			if c.skipped != "" && len(labels(c.sd)) != len(labels(before)) {
				t.Errorf("skipped object labelled: %v", labels(c.sd))
			}
			if out.OwnLow != c.ownLow {
				t.Errorf("OwnLow = %v, want %v", out.OwnLow, c.ownLow)
			}
		})
	}
}

func TestWritablePlanRootRefusals(t *testing.T) {
	p := WritablePlan(runA, false, true)
	for name, c := range map[string]struct {
		sd  *SecurityDescriptor
		obj Object
	}{
		"medium label": {descriptor(profileInherited(true), 0, ACE{Type: AceLabel, Flags: ObjectInherit | ContainerInherit, Mask: LabelNoWriteUp, SID: MediumLabelSID}), Object{Root: true, Dir: true}},
		"NULL DACL":    {&SecurityDescriptor{DACLPresent: true}, Object{Root: true, Dir: true}},
		"junction":     {descriptor(profileInherited(true), 0), Object{Root: true, Dir: true, Reparse: true}},
	} {
		if _, err := p.Apply(c.sd, c.obj, "", Passed{}); err == nil {
			t.Errorf("Apply(root with %s) = nil error, want a refusal", name)
		}
	}
	// A root labelled Low already is left as it is, and not unlabelled later.
	sd := descriptor(profileInherited(true), 0, ACE{Type: AceLabel, Flags: ObjectInherit | ContainerInherit | Inherited, Mask: LabelNoWriteUp, SID: LowLabelSID})
	out, err := p.Apply(sd, Object{Root: true, Dir: true}, "", Passed{})
	if err != nil || !out.AlreadyLow || out.Pass.Label || len(labels(sd)) != 1 {
		t.Errorf("Apply(root labelled Low) = %+v, %v, labels %v", out, err, labels(sd))
	}
	// The user's own OWNER RIGHTS entry stays the only one.
	own := append([]ACE{{Type: AceAllowed, Flags: ObjectInherit | ContainerInherit, Mask: FileGenericRead, SID: OwnerRightsSID}}, profileInherited(true)...)
	sd = descriptor(own, 0)
	out, err = p.Apply(sd, Object{Root: true, Dir: true}, "", Passed{})
	n := 0
	for _, a := range sd.DACL.ACEs {
		if isOwnerRights(a) {
			n++
		}
	}
	if err != nil || out.OwnerRights || n != 1 {
		t.Errorf("Apply(root with OWNER RIGHTS) = %+v, %v, %d OWNER RIGHTS entries", out, err, n)
	}
}

func TestProtect(t *testing.T) {
	p := WritablePlan(runA, false, true)
	p.Protect([]string{".git", "hooks"}, true)
	p.Protect([]string{".git", "config"}, false)
	p.Protect([]string{".envrc"}, false)
	pin := ACE{Type: AceDenied, Mask: PinMask, SID: runA}
	for key, want := range map[string][]ACE{
		`.GIT\HOOKS`:  {{Type: AceDenied, Flags: ObjectInherit | ContainerInherit, Mask: ProtectMask, SID: runA}},
		`.GIT\CONFIG`: {{Type: AceDenied, Mask: ProtectMask, SID: runA}},
		`.ENVRC`:      {{Type: AceDenied, Mask: ProtectMask, SID: runA}},
		`.GIT`:        {pin},
	} {
		if got := p.Explicit[key]; !slices.EqualFunc(got, want, ACE.Equal) {
			t.Errorf("Explicit[%q] = %v, want %v", key, got, want)
		}
	}
	if root := p.Explicit[""]; !slices.ContainsFunc(root, pin.Equal) || len(root) != 3 {
		t.Errorf("root = %v, want the writable root's two ACEs and one pin", root)
	}

	// A file inside the protected hooks directory inherits the deny, ahead
	// of the root's.
	root := descriptor(profileInherited(true), 0)
	ro, _ := p.Apply(root, Object{Root: true, Dir: true}, "", Passed{})
	git := descriptor(profileInherited(true), 0)
	gitOut, _ := p.Apply(git, Object{Dir: true, Links: 1}, Key(".git"), ro.Pass)
	if git.DACL.ACEs[0].Mask != PinMask || git.DACL.ACEs[0].Flags != 0 {
		t.Errorf(".git DACL starts with %v, want its explicit pin", git.DACL.ACEs[0])
	}
	hooks := descriptor(profileInherited(true), 0)
	hooksOut, _ := p.Apply(hooks, Object{Dir: true, Links: 1}, Key(".git", "hooks"), gitOut.Pass)
	hook := descriptor(profileInherited(false), 0)
	p.Apply(hook, Object{Links: 1}, Key(".git", "hooks", "pre-commit"), hooksOut.Pass)
	first := hook.DACL.ACEs[0]
	if first.Type != AceDenied || first.Mask&ProtectMask != ProtectMask || first.Flags != Inherited {
		t.Errorf("hook DACL starts with %v, want the inherited protect deny", first)
	}
}

// TestRevokeUndoesApply applies the plans of two overlapping runs to a small
// tree and undoes them in turn: the first run to leave takes only its own
// ACEs; the last restores every descriptor as it was.
func TestRevokeUndoesApply(t *testing.T) {
	type node struct {
		key string
		obj Object
		sd  *SecurityDescriptor
		kid []int
	}
	explicitLow := ACE{Type: AceLabel, Mask: LabelNoWriteUp, SID: LowLabelSID}
	tree := []node{
		{"", Object{Root: true, Dir: true}, descriptor(profileInherited(true), 0), []int{1, 2, 3, 6}},
		{Key("src"), Object{Dir: true, Links: 1}, descriptor(profileInherited(true), 0), []int{4, 5}},
		{Key(".git"), Object{Dir: true, Links: 1}, descriptor(profileInherited(true), 0), []int{7}},
		{Key("linked"), Object{Links: 2}, descriptor(profileInherited(false), 0), nil},
		{Key("src", "a.go"), Object{Links: 1}, descriptor(profileInherited(false), 0), nil},
		{Key("src", "low.txt"), Object{Links: 1}, descriptor(profileInherited(false), 0, explicitLow), nil},
		{Key("private"), Object{Dir: true, Links: 1}, descriptor([]ACE{{Type: AceAllowed, Mask: 0x1f01ff, SID: user}}, SEDACLProtected), nil},
		{Key(".git", "config"), Object{Links: 1}, descriptor(profileInherited(false), 0), nil},
	}
	original := make([]*SecurityDescriptor, len(tree))
	for i, n := range tree {
		original[i] = clone(n.sd)
	}
	apply := func(p Plan) (Outcome, map[int]bool) {
		own := map[int]bool{}
		var rootOut Outcome
		var walk func(i int, from Passed)
		walk = func(i int, from Passed) {
			out, err := p.Apply(tree[i].sd, tree[i].obj, tree[i].key, from)
			if err != nil {
				t.Fatalf("Apply(%q) = %v", tree[i].key, err)
			}
			if i == 0 {
				rootOut = out
			}
			if out.OwnLow {
				own[i] = true
			}
			for _, k := range tree[i].kid {
				walk(k, out.Pass)
			}
		}
		walk(0, Passed{})
		return rootOut, own
	}
	revoke := func(r Revoke, keep map[int]bool) {
		for i, n := range tree {
			r.Apply(n.sd, n.obj, keep[i])
		}
	}
	mentions := func(sid string) bool {
		for _, n := range tree {
			if slices.ContainsFunc(n.sd.DACL.ACEs, func(a ACE) bool { return a.SID == sid }) {
				return true
			}
		}
		return false
	}

	pa := WritablePlan(runA, true, true)
	pa.Protect([]string{".git", "config"}, false)
	rootA, keep := apply(pa)
	if !keep[5] || len(keep) != 1 {
		t.Fatalf("own Low labels = %v, want src/low.txt only", keep)
	}
	pb := WritablePlan(runB, false, false) // joins: adds only its own
	pb.Protect([]string{".git", "config"}, false)
	apply(pb)
	if !mentions(runA) || !mentions(runB) {
		t.Fatal("both runs' ACEs should be in place")
	}

	// A leaves first: its ACEs go, B's and the shared ones stay.
	revoke(Revoke{RunSIDs: []string{runA}}, keep)
	if mentions(runA) || !mentions(runB) {
		t.Fatal("after A left: A's ACEs remain or B's are gone")
	}
	if len(labels(tree[4].sd)) != 1 {
		t.Fatal("the shared label went with the first run")
	}
	// B leaves last and takes the shared ones.
	revoke(Revoke{RunSIDs: []string{runB}, OwnerRights: rootA.OwnerRights, Labels: !rootA.AlreadyLow}, keep)
	for i, n := range tree {
		if !slices.EqualFunc(n.sd.DACL.ACEs, original[i].DACL.ACEs, ACE.Equal) {
			t.Errorf("%q DACL after undo =\n %v\nwant\n %v", n.key, n.sd.DACL.ACEs, original[i].DACL.ACEs)
		}
		if !slices.EqualFunc(labels(n.sd), labels(original[i]), ACE.Equal) {
			t.Errorf("%q labels after undo = %v, want %v", n.key, labels(n.sd), labels(original[i]))
		}
		if n.sd.Control != original[i].Control {
			t.Errorf("%q control after undo = %#x, want %#x", n.key, n.sd.Control, original[i].Control)
		}
	}
}

func TestRevokeLeavesOthersAlone(t *testing.T) {
	// An OWNER RIGHTS entry the user set explicitly below the root, and a
	// Low label the run did not add (not Labels), survive the undo.
	own := ACE{Type: AceAllowed, Mask: OwnerRightsMask, SID: OwnerRightsSID}
	sd := descriptor(append([]ACE{own}, profileInherited(false)...), 0, ACE{Type: AceLabel, Flags: Inherited, Mask: LabelNoWriteUp, SID: LowLabelSID})
	if (Revoke{RunSIDs: []string{runA}, OwnerRights: true}).Apply(sd, Object{Links: 1}, false) {
		t.Errorf("Revoke changed %v", sd.DACL.ACEs)
	}
	if len(labels(sd)) != 1 {
		t.Error("Revoke without Labels removed a label")
	}
}

func TestInherit(t *testing.T) {
	for _, c := range []struct {
		flags     byte
		dir       bool
		want      byte
		inherited bool
	}{
		{ObjectInherit | ContainerInherit, true, Inherited | ObjectInherit | ContainerInherit, true},
		{ObjectInherit | ContainerInherit, false, Inherited, true},
		{ContainerInherit, true, Inherited | ContainerInherit, true},
		{ContainerInherit, false, 0, false},
		{ObjectInherit, true, Inherited | ObjectInherit | InheritOnly, true},
		{ObjectInherit, false, Inherited, true},
		{ObjectInherit | ContainerInherit | NoPropagate, true, Inherited, true},
		{ObjectInherit | NoPropagate, true, 0, false},
		{0, true, 0, false},
	} {
		got, ok := inherit(ACE{Type: AceAllowed, Flags: c.flags, Mask: 1, SID: "S-1-1-0"}, c.dir)
		if ok != c.inherited || ok && got.Flags != c.want {
			t.Errorf("inherit(flags %#x, dir %v) = %#x, %v; want %#x, %v", c.flags, c.dir, got.Flags, ok, c.want, c.inherited)
		}
	}
}

func TestProtectedJunction(t *testing.T) {
	p := WritablePlan(runA, false, true)
	p.Protect([]string{".git"}, true)
	sd := descriptor(profileInherited(true), 0)
	out, err := p.Apply(sd, Object{Dir: true, Reparse: true}, Key(".git"), Passed{Label: true, Deny: p.Explicit[""][1:2]})
	if err != nil || !out.Changed || out.Pass.Label || len(out.Pass.Deny)+len(out.Pass.Allow) != 0 {
		t.Fatalf("Apply(protected junction) = %+v, %v", out, err)
	}
	if first := sd.DACL.ACEs[0]; first.Type != AceDenied || first.Mask != ProtectMask || first.Flags&Inherited != 0 {
		t.Errorf("junction DACL starts with %v, want its explicit protect deny", first)
	}
	if len(labels(sd)) != 0 {
		t.Error("a junction was labelled")
	}
	if n := len(sd.DACL.ACEs); n != 4 {
		t.Errorf("junction has %d ACEs, want its 3 and the deny: nothing inherited", n)
	}
}

func TestRevokeKeepExplicitLow(t *testing.T) {
	explicit := ACE{Type: AceLabel, Mask: LabelNoWriteUp, SID: LowLabelSID}
	inherited := ACE{Type: AceLabel, Flags: Inherited, Mask: LabelNoWriteUp, SID: LowLabelSID}
	r := Revoke{RunSIDs: []string{runA}, Labels: true, KeepExplicitLow: true}
	sd := descriptor(profileInherited(false), 0, explicit)
	if r.Apply(sd, Object{Links: 1}, false) || len(labels(sd)) != 1 {
		t.Errorf("KeepExplicitLow removed an explicit label: %v", labels(sd))
	}
	sd = descriptor(profileInherited(false), 0, inherited)
	if !r.Apply(sd, Object{Links: 1}, false) || len(labels(sd)) != 0 {
		t.Errorf("KeepExplicitLow kept an inherited label: %v", labels(sd))
	}
	sd = descriptor(profileInherited(true), 0, ACE{Type: AceLabel, Flags: ObjectInherit | ContainerInherit, Mask: LabelNoWriteUp, SID: LowLabelSID})
	if !r.Apply(sd, Object{Root: true, Dir: true}, false) || len(labels(sd)) != 0 {
		t.Errorf("KeepExplicitLow kept the root's label: %v", labels(sd))
	}
	// Without it, an explicit Low label goes unless the object is kept.
	r.KeepExplicitLow = false
	sd = descriptor(profileInherited(false), 0, explicit)
	if r.Apply(sd, Object{Links: 1}, true) || len(labels(sd)) != 1 {
		t.Error("keepLow did not keep the object's own label")
	}
	if !r.Apply(sd, Object{Links: 1}, false) || len(labels(sd)) != 0 {
		t.Error("an explicit Low label of the run's survived")
	}
}

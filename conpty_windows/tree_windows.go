package conpty

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"
)

// FileID names a file on a volume whatever its path (the volume serial
// number and the file index of BY_HANDLE_FILE_INFORMATION).
type FileID struct {
	Volume uint32 `json:"volume"`
	Index  uint64 `json:"index"`
}

// TreeResult is what a walk did.
type TreeResult struct {
	Objects, Changed int
	// Root is the root's outcome (AlreadyLow, OwnerRights).
	Root Outcome
	// OwnLow are the objects that had a Low label of their own before the
	// run: RevokeTree keeps it.
	OwnLow []FileID
	// Skipped counts the objects left as they were, by reason; Examples
	// holds a few of their paths.
	Skipped  map[string]int
	Examples []string
}

func (r *TreeResult) skip(path, why string) {
	if r.Skipped == nil {
		r.Skipped = map[string]int{}
	}
	r.Skipped[why]++
	if len(r.Examples) < 5 {
		r.Examples = append(r.Examples, path+": "+why)
	}
}

// The rights the walk opens each object with: the descriptor's DACL and
// label (WRITE_OWNER is what setting a label takes), the attributes, and
// listing for directories.
const (
	walkAccess     = windows.READ_CONTROL | windows.WRITE_DAC | windows.WRITE_OWNER | windows.FILE_READ_ATTRIBUTES | windows.SYNCHRONIZE
	walkReadAccess = windows.READ_CONTROL | windows.FILE_READ_ATTRIBUTES | windows.SYNCHRONIZE
	walkShare      = windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE
	walkSecurity   = windows.DACL_SECURITY_INFORMATION | windows.LABEL_SECURITY_INFORMATION
)

// ApplyTree applies p to the tree at root: every object in it, reached
// through handles (each entry is opened relative to its directory's
// handle, never through a path that could have been swapped), without
// following junctions or symbolic links. root must be a canonical local
// path (C:\...) of a directory that is not itself a reparse point.
//
// The caller records the run in its journal before calling, so that a
// crash half way is undone by RevokeTree later: the walk edits objects one
// at a time.
func ApplyTree(ctx context.Context, root string, p Plan) (TreeResult, error) {
	var res TreeResult
	visit := func(h windows.Handle, obj Object, id FileID, path, key string, from Passed, writable bool) (Passed, error) {
		res.Objects++
		sd, err := readSecurity(h)
		if err != nil {
			if obj.Root {
				return Passed{}, fmt.Errorf("read the security of %s: %w", path, err)
			}
			res.skip(path, "its security cannot be read: "+err.Error())
			return Passed{}, nil
		}
		before, _ := sd.Bytes()
		out, err := p.Apply(sd, obj, key, from)
		if obj.Root {
			res.Root = out
		}
		if err != nil {
			return Passed{}, fmt.Errorf("%s: %w", path, err)
		}
		if out.OwnLow {
			res.OwnLow = append(res.OwnLow, id)
		}
		if out.Skipped != "" {
			res.skip(path, out.Skipped)
		}
		if !out.Changed {
			return out.Pass, nil
		}
		if !writable {
			if obj.Root {
				return Passed{}, fmt.Errorf("%s: forgebox may not change its permissions", path)
			}
			res.skip(path, "forgebox may not change its permissions")
			return Passed{}, nil
		}
		if err := writeSecurity(h, before, sd); err != nil {
			if obj.Root {
				return Passed{}, fmt.Errorf("set the security of %s: %w", path, err)
			}
			res.skip(path, "setting its security failed: "+err.Error())
			return Passed{}, nil // nothing reached it: nothing to hand down
		}
		res.Changed++
		return out.Pass, nil
	}
	err := walk(ctx, root, visit)
	return res, err
}

// RevokeTree removes from the tree at root what the runs of r added: every
// ACE that names their SIDs and, when r says so, the shared OWNER RIGHTS
// entry and the Low labels (but on ownLow). It visits every object,
// junctions and symbolic links included (their own descriptors, which the
// command may have created under the run's labels) but never follows
// them. It goes on past objects it cannot fix and lists them in
// TreeResult.Skipped: a command can create a file whose descriptor shuts
// out even its owner, and no retry would help. The error is for a walk
// that could not be done.
func RevokeTree(ctx context.Context, root string, r Revoke, ownLow []FileID) (TreeResult, error) {
	keep := map[FileID]bool{}
	for _, id := range ownLow {
		keep[id] = true
	}
	var res TreeResult
	visit := func(h windows.Handle, obj Object, id FileID, path, key string, _ Passed, writable bool) (Passed, error) {
		res.Objects++
		sd, err := readSecurity(h)
		if err != nil {
			res.skip(path, "its security cannot be read: "+err.Error())
			return Passed{}, nil
		}
		before, _ := sd.Bytes()
		if !r.Apply(sd, obj, keep[id]) {
			return Passed{}, nil
		}
		if !writable {
			res.skip(path, "forgebox may not change its permissions to undo the run's")
			return Passed{}, nil
		}
		if err := writeSecurity(h, before, sd); err != nil {
			res.skip(path, "undoing the run's permissions failed: "+err.Error())
			return Passed{}, nil
		}
		res.Changed++
		return Passed{}, nil
	}
	err := walk(ctx, root, visit)
	return res, err
}

// SkippedCount is how many objects the walk left as they were.
func (r TreeResult) SkippedCount() int {
	n := 0
	for _, c := range r.Skipped {
		n += c
	}
	return n
}

type visitFunc func(h windows.Handle, obj Object, id FileID, path, key string, from Passed, writable bool) (Passed, error)

// walk visits root and everything under it, depth first, parents before
// children.
func walk(ctx context.Context, root string, visit visitFunc) error {
	name, err := windows.UTF16PtrFromString(longPath(root))
	if err != nil {
		return err
	}
	open := func(access uint32) (windows.Handle, error) {
		return windows.CreateFile(name, access|windows.FILE_LIST_DIRECTORY, walkShare, nil, windows.OPEN_EXISTING,
			windows.FILE_FLAG_BACKUP_SEMANTICS|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	}
	writable := true
	h, err := open(walkAccess)
	if err == windows.ERROR_ACCESS_DENIED {
		writable = false
		h, err = open(walkReadAccess)
	}
	if err != nil {
		return fmt.Errorf("open %s: %w", root, err)
	}
	defer windows.CloseHandle(h)
	return walkObject(ctx, h, true, writable, root, "", Passed{}, visit)
}

// walkObject visits the object open at h and, for a directory that is not
// a reparse point, its entries.
func walkObject(ctx context.Context, h windows.Handle, root, writable bool, path, key string, from Passed, visit visitFunc) error {
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		if root {
			return fmt.Errorf("inspect %s: %w", path, err)
		}
		return nil
	}
	obj := Object{
		Root:    root,
		Dir:     info.FileAttributes&FileAttributeDirectory != 0,
		Reparse: info.FileAttributes&FileAttributeReparsePoint != 0,
		Links:   info.NumberOfLinks,
	}
	id := FileID{Volume: info.VolumeSerialNumber, Index: uint64(info.FileIndexHigh)<<32 | uint64(info.FileIndexLow)}
	pass, err := visit(h, obj, id, path, key, from, writable)
	if err != nil || !obj.Dir || obj.Reparse {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := listDir(h)
	if err != nil {
		if root {
			return fmt.Errorf("list %s: %w", path, err)
		}
		return nil
	}
	for _, e := range entries {
		child := filepath.Join(path, e.Name)
		ckey := e.Name
		if key != "" {
			ckey = key + `\` + e.Name
		}
		ckey = Key(ckey)
		ch, cw, err := openAt(h, e.Name, e.Attributes&FileAttributeDirectory != 0)
		if err != nil {
			continue // gone meanwhile, or not ours to open: the visit reports nothing it did not see
		}
		err = walkObject(ctx, ch, false, cw, child, ckey, pass, visit)
		windows.CloseHandle(ch)
		if err != nil {
			return err
		}
	}
	return nil
}

// openAt opens the entry name of the directory open at dir, without
// following a reparse point (NtCreateFile with RootDirectory and
// FILE_OPEN_REPARSE_POINT). It falls back to read-only rights when the
// object's DACL refuses forgebox the right to change it.
func openAt(dir windows.Handle, name string, isDir bool) (windows.Handle, bool, error) {
	uname, err := windows.NewNTUnicodeString(name)
	if err != nil {
		return 0, false, err
	}
	oa := windows.OBJECT_ATTRIBUTES{RootDirectory: dir, ObjectName: uname}
	oa.Length = uint32(unsafe.Sizeof(oa))
	try := func(access uint32) (windows.Handle, error) {
		if isDir {
			access |= windows.FILE_LIST_DIRECTORY
		}
		var h windows.Handle
		var iosb windows.IO_STATUS_BLOCK
		err := windows.NtCreateFile(&h, access, &oa, &iosb, nil, 0, walkShare, windows.FILE_OPEN,
			windows.FILE_OPEN_REPARSE_POINT|windows.FILE_OPEN_FOR_BACKUP_INTENT|windows.FILE_SYNCHRONOUS_IO_NONALERT, 0, 0)
		return h, err
	}
	h, err := try(walkAccess)
	if err == nil {
		return h, true, nil
	}
	if err != windows.STATUS_ACCESS_DENIED {
		return 0, false, err
	}
	h, err = try(walkReadAccess)
	return h, false, err
}

// listDir lists the directory open at h (GetFileInformationByHandleEx with
// FileIdBothDirectoryInfo, until ERROR_NO_MORE_FILES).
func listDir(h windows.Handle) ([]DirEntry, error) {
	buf := make([]byte, 64<<10)
	var out []DirEntry
	for {
		err := windows.GetFileInformationByHandleEx(h, windows.FileIdBothDirectoryInfo, &buf[0], uint32(len(buf)))
		if err == windows.ERROR_NO_MORE_FILES {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		entries, err := parseDirInfo(buf)
		if err != nil {
			return nil, err
		}
		out = append(out, entries...)
	}
}

// readSecurity reads an object's DACL and label.
func readSecurity(h windows.Handle) (*SecurityDescriptor, error) {
	sd, err := windows.GetSecurityInfo(h, windows.SE_FILE_OBJECT, walkSecurity)
	if err != nil {
		return nil, err
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(sd)), sd.Length())
	return ParseSecurityDescriptor(b)
}

// writeSecurity writes the parts of sd that differ from before (the
// descriptor as read), with SetKernelObjectSecurity: the object alone, no
// propagation.
func writeSecurity(h windows.Handle, before []byte, sd *SecurityDescriptor) error {
	old, err := ParseSecurityDescriptor(before)
	if err != nil {
		return err
	}
	var info windows.SECURITY_INFORMATION
	if !sameACL(old.DACL, sd.DACL) {
		info |= windows.DACL_SECURITY_INFORMATION
	}
	if !sameACL(old.SACL, sd.SACL) {
		info |= windows.LABEL_SECURITY_INFORMATION
		if sd.SACL == nil {
			sd.SACL = &ACL{Revision: 2}
		}
		sd.SACLPresent = true
	}
	if info == 0 {
		return nil
	}
	b, err := sd.Bytes()
	if err != nil {
		return err
	}
	return setKernelObjectSecurity(h, info, b)
}

func sameACL(a, b *ACL) bool {
	if a == nil || b == nil {
		return (a == nil || len(a.ACEs) == 0) && (b == nil || len(b.ACEs) == 0)
	}
	ab, err1 := a.Bytes()
	bb, err2 := b.Bytes()
	return err1 == nil && err2 == nil && bytes.Equal(ab, bb)
}

// longPath puts \\?\ before a drive path, so that paths past MAX_PATH
// open.
func longPath(p string) string {
	if strings.HasPrefix(p, `\\`) {
		return p
	}
	return `\\?\` + p
}

// PreviewRoot is what ApplyTree would do to root itself, computed on a copy
// of its descriptor without writing anything: it tells, before a run is
// journalled, whether the root is labelled already and whether the OWNER
// RIGHTS entry will be added, and refuses what ApplyTree would refuse.
func PreviewRoot(root string, p Plan) (Outcome, error) {
	name, err := windows.UTF16PtrFromString(longPath(root))
	if err != nil {
		return Outcome{}, err
	}
	h, err := windows.CreateFile(name, walkReadAccess, walkShare, nil, windows.OPEN_EXISTING,
		windows.FILE_FLAG_BACKUP_SEMANTICS|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return Outcome{}, fmt.Errorf("open %s: %w", root, err)
	}
	defer windows.CloseHandle(h)
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		return Outcome{}, fmt.Errorf("inspect %s: %w", root, err)
	}
	sd, err := readSecurity(h)
	if err != nil {
		return Outcome{}, fmt.Errorf("read the security of %s: %w", root, err)
	}
	obj := Object{Root: true, Dir: info.FileAttributes&FileAttributeDirectory != 0,
		Reparse: info.FileAttributes&FileAttributeReparsePoint != 0, Links: info.NumberOfLinks}
	out, err := p.Apply(sd, obj, "", Passed{})
	if err != nil {
		return out, fmt.Errorf("%s: %w", root, err)
	}
	return out, nil
}

// CreatePrivateDir creates a directory only the user, SYSTEM and the run's
// SID may use, labelled Low so that the command can write in it: the run's
// temporary directory. Made with its descriptor, nothing is propagated.
func CreatePrivateDir(path, userSID, runSID string) error {
	full := uint32(0x1f01ff) // FILE_ALL_ACCESS
	sd := &SecurityDescriptor{
		Control:     SEDACLProtected,
		DACLPresent: true,
		DACL: &ACL{ACEs: []ACE{
			{Type: AceAllowed, Flags: ObjectInherit | ContainerInherit, Mask: full, SID: userSID},
			{Type: AceAllowed, Flags: ObjectInherit | ContainerInherit, Mask: full, SID: SystemSID},
			{Type: AceAllowed, Flags: ObjectInherit | ContainerInherit, Mask: ModifyMask, SID: runSID},
		}},
		SACLPresent: true,
		SACL:        &ACL{ACEs: []ACE{{Type: AceLabel, Flags: ObjectInherit | ContainerInherit, Mask: LabelNoWriteUp, SID: LowLabelSID}}},
	}
	b, err := sd.Bytes()
	if err != nil {
		return err
	}
	name, err := windows.UTF16PtrFromString(longPath(path))
	if err != nil {
		return err
	}
	sa := windows.SecurityAttributes{SecurityDescriptor: (*windows.SECURITY_DESCRIPTOR)(unsafe.Pointer(&b[0]))}
	sa.Length = uint32(unsafe.Sizeof(sa))
	err = windows.CreateDirectory(name, &sa)
	runtime.KeepAlive(b)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	return nil
}

// UserSID is the SID of the caller's user.
func UserSID() (string, error) {
	tu, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return "", err
	}
	return tu.User.Sid.String(), nil
}

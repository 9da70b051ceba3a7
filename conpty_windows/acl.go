package conpty

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The binary forms of SIDs, ACLs and self-relative security descriptors,
// as [MS-DTYP] 2.4 defines them. They are parsed and built here in plain Go,
// rather than through the Win32 ACL functions, so that the edits forgebox
// makes to the workspace's descriptors are tested on any OS and undo
// exactly what they did.

// ACE types ([MS-DTYP] 2.4.4.1) that forgebox reads and writes. Every other
// type is kept byte for byte.
const (
	AceAllowed = 0x00 // ACCESS_ALLOWED_ACE_TYPE
	AceDenied  = 0x01 // ACCESS_DENIED_ACE_TYPE
	AceLabel   = 0x11 // SYSTEM_MANDATORY_LABEL_ACE_TYPE
)

// ACE flags.
const (
	ObjectInherit    = 0x01 // OBJECT_INHERIT_ACE
	ContainerInherit = 0x02 // CONTAINER_INHERIT_ACE
	NoPropagate      = 0x04 // NO_PROPAGATE_INHERIT_ACE
	InheritOnly      = 0x08 // INHERIT_ONLY_ACE
	Inherited        = 0x10 // INHERITED_ACE
)

// Security descriptor control bits ([MS-DTYP] 2.4.6).
const (
	SEDACLPresent       = 0x0004
	SESACLPresent       = 0x0010
	SEDACLAutoInherited = 0x0400
	SESACLAutoInherited = 0x0800
	SEDACLProtected     = 0x1000
	SESACLProtected     = 0x2000
	SESelfRelative      = 0x8000
)

// Access rights on files and directories (winnt.h).
const (
	FileReadData        = 0x0001 // FILE_LIST_DIRECTORY on a directory
	FileWriteData       = 0x0002 // FILE_ADD_FILE
	FileAppendData      = 0x0004 // FILE_ADD_SUBDIRECTORY
	FileReadEA          = 0x0008
	FileWriteEA         = 0x0010
	FileExecute         = 0x0020 // FILE_TRAVERSE
	FileDeleteChild     = 0x0040
	FileReadAttributes  = 0x0080
	FileWriteAttributes = 0x0100
	Delete              = 0x00010000
	ReadControl         = 0x00020000
	WriteDAC            = 0x00040000
	WriteOwner          = 0x00080000
	Synchronize         = 0x00100000
	GenericAll          = 0x10000000
	GenericExecute      = 0x20000000
	GenericWrite        = 0x40000000
	GenericRead         = 0x80000000

	FileGenericRead    = ReadControl | FileReadData | FileReadAttributes | FileReadEA | Synchronize
	FileGenericWrite   = ReadControl | FileWriteData | FileWriteAttributes | FileWriteEA | FileAppendData | Synchronize
	FileGenericExecute = ReadControl | FileReadAttributes | FileExecute | Synchronize
)

// Mandatory label policy bits and levels.
const (
	LabelNoWriteUp = 0x1           // SYSTEM_MANDATORY_LABEL_NO_WRITE_UP
	LowLabelSID    = "S-1-16-4096" // Low Mandatory Level
	MediumLabelSID = "S-1-16-8192"
)

// Well-known SIDs used in descriptors.
const (
	OwnerRightsSID = "S-1-3-4" // OWNER RIGHTS: replaces the owner's implied rights
	SystemSID      = "S-1-5-18"
)

// ACE is one access control entry. Allowed, denied and label ACEs are
// parsed; any other type keeps its bytes in raw and is written back as it
// was.
type ACE struct {
	Type  byte
	Flags byte
	Mask  uint32
	SID   string // "S-1-..."
	raw   []byte
}

func (a ACE) String() string {
	if a.raw != nil {
		return fmt.Sprintf("(type %#x, %d bytes)", a.Type, len(a.raw))
	}
	return fmt.Sprintf("(%d;%#x;%#x;%s)", a.Type, a.Flags, a.Mask, a.SID)
}

// Opaque reports whether the ACE is of a type kept as bytes.
func (a ACE) Opaque() bool { return a.raw != nil }

// Equal compares two ACEs, opaque ones byte for byte.
func (a ACE) Equal(b ACE) bool {
	if a.raw != nil || b.raw != nil {
		return string(a.raw) == string(b.raw)
	}
	return a.Type == b.Type && a.Flags == b.Flags && a.Mask == b.Mask && a.SID == b.SID
}

// ACL is an access control list.
type ACL struct {
	Revision byte // 2 (ACL_REVISION) or 4 (ACL_REVISION_DS)
	ACEs     []ACE
}

// SecurityDescriptor is the part of a self-relative security descriptor
// forgebox reads and writes. Owner and Group are kept as bytes.
type SecurityDescriptor struct {
	// Control holds the control bits but SE_SELF_RELATIVE and the present
	// bits, which follow from the fields.
	Control      uint16
	Owner, Group []byte
	// DACL is nil when absent, or present and NULL (which grants everyone
	// everything): DACLPresent tells them apart.
	DACL        *ACL
	DACLPresent bool
	SACL        *ACL
	SACLPresent bool
}

// NullDACL reports a present but NULL DACL: every access is granted.
func (sd *SecurityDescriptor) NullDACL() bool { return sd.DACLPresent && sd.DACL == nil }

// ParseSID reads the string form "S-1-5-32-544".
func ParseSID(s string) ([]byte, error) {
	f := strings.Split(s, "-")
	if len(f) < 3 || f[0] != "S" || f[1] != "1" || len(f)-3 > 15 {
		return nil, fmt.Errorf("SID %q: not of the form S-1-AUTHORITY-SUB...", s)
	}
	auth, err := strconv.ParseUint(f[2], 10, 48)
	if err != nil {
		return nil, fmt.Errorf("SID %q: authority: %w", s, err)
	}
	b := make([]byte, 8, 8+4*(len(f)-3))
	b[0], b[1] = 1, byte(len(f)-3)
	for i := 0; i < 6; i++ {
		b[2+i] = byte(auth >> (8 * (5 - i)))
	}
	for _, x := range f[3:] {
		v, err := strconv.ParseUint(x, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("SID %q: sub-authority: %w", s, err)
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	return b, nil
}

// FormatSID writes a binary SID in its string form and returns its length.
func FormatSID(b []byte) (string, int, error) {
	if len(b) < 8 || b[0] != 1 {
		return "", 0, errors.New("malformed SID")
	}
	n := 8 + 4*int(b[1])
	if b[1] > 15 || len(b) < n {
		return "", 0, errors.New("malformed SID: truncated")
	}
	var auth uint64
	for i := 0; i < 6; i++ {
		auth = auth<<8 | uint64(b[2+i])
	}
	var sb strings.Builder
	sb.WriteString("S-1-")
	sb.WriteString(strconv.FormatUint(auth, 10))
	for i := 0; i < int(b[1]); i++ {
		sb.WriteByte('-')
		sb.WriteString(strconv.FormatUint(uint64(binary.LittleEndian.Uint32(b[8+4*i:])), 10))
	}
	return sb.String(), n, nil
}

// ParseACL reads a binary ACL.
func ParseACL(b []byte) (*ACL, error) {
	if len(b) < 8 {
		return nil, errors.New("malformed ACL: shorter than its header")
	}
	size, count := int(binary.LittleEndian.Uint16(b[2:])), int(binary.LittleEndian.Uint16(b[4:]))
	if size < 8 || size > len(b) {
		return nil, fmt.Errorf("malformed ACL: size %d of %d bytes", size, len(b))
	}
	acl := &ACL{Revision: b[0], ACEs: make([]ACE, 0, count)}
	off := 8
	for i := 0; i < count; i++ {
		if off+4 > size {
			return nil, errors.New("malformed ACL: truncated ACE header")
		}
		typ, flags, n := b[off], b[off+1], int(binary.LittleEndian.Uint16(b[off+2:]))
		if n < 4 || off+n > size {
			return nil, fmt.Errorf("malformed ACL: ACE %d of size %d", i, n)
		}
		ace := b[off : off+n]
		switch typ {
		case AceAllowed, AceDenied, AceLabel:
			if n < 8+8 {
				return nil, fmt.Errorf("malformed ACL: ACE %d too short for its SID", i)
			}
			sid, _, err := FormatSID(ace[8:])
			if err != nil {
				return nil, fmt.Errorf("malformed ACL: ACE %d: %w", i, err)
			}
			acl.ACEs = append(acl.ACEs, ACE{Type: typ, Flags: flags, Mask: binary.LittleEndian.Uint32(ace[4:]), SID: sid})
		default:
			acl.ACEs = append(acl.ACEs, ACE{Type: typ, Flags: flags, raw: append([]byte(nil), ace...)})
		}
		off += n
	}
	return acl, nil
}

// Bytes writes the ACL in binary form.
func (acl *ACL) Bytes() ([]byte, error) {
	rev := max(acl.Revision, 2)
	b := make([]byte, 8, 64)
	b[0] = rev
	for _, a := range acl.ACEs {
		if a.raw != nil {
			// The flags may have been edited; the rest is as read.
			raw := append([]byte(nil), a.raw...)
			raw[1] = a.Flags
			b = append(b, raw...)
			continue
		}
		sid, err := ParseSID(a.SID)
		if err != nil {
			return nil, err
		}
		n := 8 + len(sid)
		b = append(b, a.Type, a.Flags)
		b = binary.LittleEndian.AppendUint16(b, uint16(n))
		b = binary.LittleEndian.AppendUint32(b, a.Mask)
		b = append(b, sid...)
	}
	if len(b) > 0xffff || len(acl.ACEs) > 0xffff {
		return nil, errors.New("ACL too large")
	}
	binary.LittleEndian.PutUint16(b[2:], uint16(len(b)))
	binary.LittleEndian.PutUint16(b[4:], uint16(len(acl.ACEs)))
	return b, nil
}

// ParseSecurityDescriptor reads a self-relative security descriptor, the
// form GetSecurityInfo returns.
func ParseSecurityDescriptor(b []byte) (*SecurityDescriptor, error) {
	if len(b) < 20 || b[0] != 1 {
		return nil, errors.New("malformed security descriptor")
	}
	control := binary.LittleEndian.Uint16(b[2:])
	if control&SESelfRelative == 0 {
		return nil, errors.New("security descriptor is not self-relative")
	}
	// The present and self-relative bits describe the encoding: Bytes sets
	// them again from the fields.
	sd := &SecurityDescriptor{Control: control &^ (SESelfRelative | SEDACLPresent | SESACLPresent)}
	offset := func(at int) int { return int(binary.LittleEndian.Uint32(b[at:])) }
	sid := func(off int) ([]byte, error) {
		if off == 0 {
			return nil, nil
		}
		if off >= len(b) {
			return nil, errors.New("malformed security descriptor: SID offset out of range")
		}
		_, n, err := FormatSID(b[off:])
		if err != nil {
			return nil, err
		}
		return append([]byte(nil), b[off:off+n]...), nil
	}
	acl := func(off int) (*ACL, error) {
		if off == 0 {
			return nil, nil
		}
		if off >= len(b) {
			return nil, errors.New("malformed security descriptor: ACL offset out of range")
		}
		return ParseACL(b[off:])
	}
	var err error
	if sd.Owner, err = sid(offset(4)); err != nil {
		return nil, err
	}
	if sd.Group, err = sid(offset(8)); err != nil {
		return nil, err
	}
	if sd.SACLPresent = control&SESACLPresent != 0; sd.SACLPresent {
		if sd.SACL, err = acl(offset(12)); err != nil {
			return nil, err
		}
	}
	if sd.DACLPresent = control&SEDACLPresent != 0; sd.DACLPresent {
		if sd.DACL, err = acl(offset(16)); err != nil {
			return nil, err
		}
	}
	return sd, nil
}

// Bytes writes the descriptor in self-relative form.
func (sd *SecurityDescriptor) Bytes() ([]byte, error) {
	control := sd.Control | SESelfRelative
	control &^= SEDACLPresent | SESACLPresent
	if sd.DACLPresent {
		control |= SEDACLPresent
	}
	if sd.SACLPresent {
		control |= SESACLPresent
	}
	b := make([]byte, 20, 256)
	b[0] = 1
	binary.LittleEndian.PutUint16(b[2:], control)
	put := func(at int, part []byte) {
		if part == nil {
			return
		}
		binary.LittleEndian.PutUint32(b[at:], uint32(len(b)))
		b = append(b, part...)
	}
	for _, p := range []struct {
		at      int
		acl     *ACL
		present bool
	}{{12, sd.SACL, sd.SACLPresent}, {16, sd.DACL, sd.DACLPresent}} {
		if !p.present || p.acl == nil {
			continue
		}
		ab, err := p.acl.Bytes()
		if err != nil {
			return nil, err
		}
		put(p.at, ab)
	}
	put(4, sd.Owner)
	put(8, sd.Group)
	return b, nil
}

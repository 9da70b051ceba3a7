package conpty

import (
	"bytes"
	"encoding/hex"
	"slices"
	"testing"
)

func TestSIDRoundTrip(t *testing.T) {
	for _, c := range []struct {
		sid string
		hex string
	}{
		{"S-1-1-0", "010100000000000100000000"},              // Everyone
		{"S-1-5-32-544", "01020000000000052000000020020000"}, // BUILTIN\Administrators
		{"S-1-16-4096", "010100000000001000100000"},          // Low Mandatory Level
		{"S-1-3-4", "010100000000000304000000"},              // OWNER RIGHTS
		{"S-1-5-21-1-2-3-1001", "010500000000000515000000010000000200000003000000e9030000"},
		{"S-1-9-1717729329-4294967295-0-1", "010400000000000931786266ffffffff0000000001000000"},
	} {
		t.Run(c.sid, func(t *testing.T) {
			b, err := ParseSID(c.sid)
			if err != nil {
				t.Fatalf("ParseSID(%q) = %v", c.sid, err)
			}
			if got := hex.EncodeToString(b); got != c.hex {
				t.Errorf("ParseSID(%q) = %s, want %s", c.sid, got, c.hex)
			}
			s, n, err := FormatSID(append(b, 0xaa, 0xbb)) // trailing bytes are not the SID's
			if err != nil || s != c.sid || n != len(b) {
				t.Errorf("FormatSID(%x) = %q, %d, %v, want %q, %d", b, s, n, err, c.sid, len(b))
			}
		})
	}
	for _, bad := range []string{"", "S-1", "S-2-5-32", "X-1-5", "S-1-5-x", "S-1-5-4294967296", "S-1-281474976710656",
		"S-1-5-1-2-3-4-5-6-7-8-9-10-11-12-13-14-15-16"} {
		if _, err := ParseSID(bad); err == nil {
			t.Errorf("ParseSID(%q) = nil error, want one", bad)
		}
	}
	for _, bad := range [][]byte{nil, {1, 1, 0, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 0, 0, 0}, {1, 16, 0, 0, 0, 0, 0, 5}} {
		if _, _, err := FormatSID(bad); err == nil {
			t.Errorf("FormatSID(%x) = nil error, want one", bad)
		}
	}
}

// objectACE is an ACCESS_ALLOWED_OBJECT_ACE (type 5) as a directory
// service would write it: forgebox keeps it byte for byte.
var objectACE = func() []byte {
	sid, _ := ParseSID("S-1-5-11")
	b := []byte{5, 0x02, 0, 0, 0xff, 0x01, 0x0f, 0x00, 1, 0, 0, 0}
	b = append(b, bytes.Repeat([]byte{0x42}, 16)...) // ObjectType GUID
	b = append(b, sid...)
	b[2] = byte(len(b))
	return b
}()

func TestACLRoundTrip(t *testing.T) {
	acl := &ACL{Revision: 4, ACEs: []ACE{
		{Type: AceDenied, Mask: Delete, SID: "S-1-9-1-2"},
		{Type: AceAllowed, Flags: ObjectInherit | ContainerInherit | Inherited, Mask: 0x1f01ff, SID: "S-1-5-18"},
		{Type: 5, Flags: ContainerInherit, raw: objectACE},
	}}
	b, err := acl.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if b[0] != 4 || int(b[2])|int(b[3])<<8 != len(b) || b[4] != 3 {
		t.Fatalf("ACL header %x: want revision 4, size %d, 3 ACEs", b[:8], len(b))
	}
	got, err := ParseACL(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Revision != 4 || !slices.EqualFunc(got.ACEs, acl.ACEs, ACE.Equal) {
		t.Fatalf("ParseACL(Bytes()) = %v, want %v", got.ACEs, acl.ACEs)
	}
	if !got.ACEs[2].Opaque() || got.ACEs[2].Type != 5 || got.ACEs[2].Flags != ContainerInherit {
		t.Errorf("object ACE parsed as %v", got.ACEs[2])
	}
	again, _ := got.Bytes()
	if !bytes.Equal(again, b) {
		t.Errorf("Bytes(ParseACL(b)) = %x, want %x", again, b)
	}
	// An empty ACL is its header alone, revision 2.
	if e, _ := (&ACL{}).Bytes(); hex.EncodeToString(e) != "0200080000000000" {
		t.Errorf("empty ACL = %x", e)
	}
}

func TestACLMalformed(t *testing.T) {
	good, _ := (&ACL{ACEs: []ACE{{Type: AceAllowed, Mask: 1, SID: "S-1-1-0"}}}).Bytes()
	cases := map[string][]byte{
		"short":          good[:6],
		"size too large": append(append([]byte{}, good[:2]...), append([]byte{0xff, 0x00}, good[4:]...)...),
		"truncated ACE":  append(append([]byte{}, good[:8]...), good[8:11]...),
		"ACE size zero":  append(append([]byte{}, good[:10]...), append([]byte{0, 0}, good[12:]...)...),
	}
	twoACEs := append([]byte{}, good...)
	twoACEs[4] = 2 // claims two ACEs, holds one
	cases["count too large"] = twoACEs
	for name, b := range cases {
		if _, err := ParseACL(b); err == nil {
			t.Errorf("ParseACL(%s: %x) = nil error, want one", name, b)
		}
	}
}

func TestSecurityDescriptorRoundTrip(t *testing.T) {
	owner, _ := ParseSID("S-1-5-21-1-2-3-1001")
	sd := &SecurityDescriptor{
		Control:     SEDACLAutoInherited | SEDACLProtected,
		Owner:       owner,
		DACLPresent: true,
		DACL: &ACL{ACEs: []ACE{
			{Type: AceAllowed, Flags: ObjectInherit | ContainerInherit, Mask: 0x1f01ff, SID: "S-1-5-21-1-2-3-1001"},
		}},
		SACLPresent: true,
		SACL:        &ACL{ACEs: []ACE{{Type: AceLabel, Flags: ObjectInherit | ContainerInherit, Mask: LabelNoWriteUp, SID: LowLabelSID}}},
	}
	b, err := sd.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	control := uint16(b[2]) | uint16(b[3])<<8
	if b[0] != 1 || control != SEDACLAutoInherited|SEDACLProtected|SESelfRelative|SEDACLPresent|SESACLPresent {
		t.Fatalf("header %x: control %#x", b[:20], control)
	}
	got, err := ParseSecurityDescriptor(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Owner, owner) || got.Group != nil || !got.DACLPresent || !got.SACLPresent ||
		!slices.EqualFunc(got.DACL.ACEs, sd.DACL.ACEs, ACE.Equal) || !slices.EqualFunc(got.SACL.ACEs, sd.SACL.ACEs, ACE.Equal) {
		t.Fatalf("ParseSecurityDescriptor(Bytes()) = %+v", got)
	}
	again, _ := got.Bytes()
	if !bytes.Equal(again, b) {
		t.Errorf("Bytes(Parse(b)) = %x, want %x", again, b)
	}

	// A NULL DACL: present, no ACL.
	null := &SecurityDescriptor{DACLPresent: true}
	nb, _ := null.Bytes()
	if got, err := ParseSecurityDescriptor(nb); err != nil || !got.NullDACL() {
		t.Errorf("NULL DACL parsed as %+v, %v", got, err)
	}
	// No DACL at all.
	none, _ := (&SecurityDescriptor{}).Bytes()
	if got, err := ParseSecurityDescriptor(none); err != nil || got.DACLPresent || got.NullDACL() {
		t.Errorf("absent DACL parsed as %+v, %v", got, err)
	}
	// Absolute descriptors hold pointers: refused.
	abs := append([]byte{}, nb...)
	abs[3] &^= SESelfRelative >> 8
	if _, err := ParseSecurityDescriptor(abs); err == nil {
		t.Error("an absolute descriptor parsed")
	}
	// An offset past the end.
	bad := append([]byte{}, b...)
	bad[16] = 0xff
	if _, err := ParseSecurityDescriptor(bad); err == nil {
		t.Error("a DACL offset past the end parsed")
	}
}

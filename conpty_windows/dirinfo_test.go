package conpty

import (
	"encoding/binary"
	"slices"
	"testing"
	"unicode/utf16"
)

// dirRecord builds one FILE_ID_BOTH_DIR_INFO record, padded to 8 bytes.
func dirRecord(name string, attrs uint32, last bool) []byte {
	u := utf16.Encode([]rune(name))
	n := dirInfoName + 2*len(u)
	n = (n + 7) &^ 7
	b := make([]byte, n)
	if !last {
		binary.LittleEndian.PutUint32(b[dirInfoNextEntry:], uint32(n))
	}
	binary.LittleEndian.PutUint32(b[dirInfoAttributes:], attrs)
	binary.LittleEndian.PutUint32(b[dirInfoNameLength:], uint32(2*len(u)))
	for i, c := range u {
		binary.LittleEndian.PutUint16(b[dirInfoName+2*i:], c)
	}
	return b
}

func TestParseDirInfo(t *testing.T) {
	var buf []byte
	buf = append(buf, dirRecord(".", FileAttributeDirectory, false)...)
	buf = append(buf, dirRecord("..", FileAttributeDirectory, false)...)
	buf = append(buf, dirRecord("src", FileAttributeDirectory, false)...)
	buf = append(buf, dirRecord("node_modules", FileAttributeDirectory|FileAttributeReparsePoint, false)...)
	buf = append(buf, dirRecord("ファイル 😀.txt", 0x20, true)...)
	got, err := parseDirInfo(buf)
	want := []DirEntry{
		{"src", FileAttributeDirectory},
		{"node_modules", FileAttributeDirectory | FileAttributeReparsePoint},
		{"ファイル 😀.txt", 0x20},
	}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("parseDirInfo = %v, %v, want %v", got, err, want)
	}
	for name, bad := range map[string][]byte{
		"short": buf[:50],
		"name long": func() []byte {
			b := dirRecord("x", 0, true)
			binary.LittleEndian.PutUint32(b[dirInfoNameLength:], 4000)
			return b
		}(),
		"odd name": func() []byte {
			b := dirRecord("x", 0, true)
			binary.LittleEndian.PutUint32(b[dirInfoNameLength:], 1)
			return b
		}(),
		"next tiny": func() []byte {
			b := dirRecord("x", 0, true)
			binary.LittleEndian.PutUint32(b[dirInfoNextEntry:], 8)
			return b
		}(),
		"next past": func() []byte {
			b := dirRecord("x", 0, true)
			binary.LittleEndian.PutUint32(b[dirInfoNextEntry:], 4096)
			return b
		}(),
	} {
		if _, err := parseDirInfo(bad); err == nil {
			t.Errorf("parseDirInfo(%s) = nil error, want one", name)
		}
	}
}

package conpty

import (
	"encoding/binary"
	"errors"
	"unicode/utf16"
)

// FILE_ID_BOTH_DIR_INFO, as GetFileInformationByHandleEx fills a buffer
// with it for FileIdBothDirectoryInfo (winbase.h): the walk lists a
// directory through the handle it holds, so that nothing can swap the
// directory between the listing and the opening of its entries.
const (
	dirInfoNextEntry  = 0   // DWORD NextEntryOffset
	dirInfoAttributes = 56  // DWORD FileAttributes
	dirInfoNameLength = 60  // DWORD FileNameLength, in bytes
	dirInfoName       = 104 // WCHAR FileName[]
)

// File attributes the walk looks at.
const (
	FileAttributeDirectory    = 0x10
	FileAttributeReparsePoint = 0x400
)

// DirEntry is one entry of a directory listing.
type DirEntry struct {
	Name       string
	Attributes uint32
}

// parseDirInfo reads a buffer of FILE_ID_BOTH_DIR_INFO records, skipping
// "." and "..".
func parseDirInfo(b []byte) ([]DirEntry, error) {
	var out []DirEntry
	for off := 0; ; {
		if off+dirInfoName > len(b) {
			return nil, errors.New("directory listing: truncated record")
		}
		rec := b[off:]
		next := int(binary.LittleEndian.Uint32(rec[dirInfoNextEntry:]))
		n := int(binary.LittleEndian.Uint32(rec[dirInfoNameLength:]))
		if n%2 != 0 || dirInfoName+n > len(rec) {
			return nil, errors.New("directory listing: name out of range")
		}
		u := make([]uint16, n/2)
		for i := range u {
			u[i] = binary.LittleEndian.Uint16(rec[dirInfoName+2*i:])
		}
		if name := string(utf16.Decode(u)); name != "." && name != ".." {
			out = append(out, DirEntry{Name: name, Attributes: binary.LittleEndian.Uint32(rec[dirInfoAttributes:])})
		}
		if next == 0 {
			return out, nil
		}
		if next < dirInfoName || off+next <= off {
			return nil, errors.New("directory listing: bad record offset")
		}
		off += next
	}
}

package sandbox

import (
	"fmt"
	"strings"
	"unicode"
)

// Windows path containment, decided on the text alone so that Linux CI tests
// it. The Windows backend asks it whether the start directory lies in the
// workspace, whether a grant lies in a system directory or a secret
// location, and whether a --hide path lies in the caller's profile.
//
// A path is compared the way Win32 normalizes it (GetFullPathName): either
// slash separates, runs of separators collapse, "." goes, ".." removes the
// previous component but never the root (C:\ or \\server\share), trailing
// separators do not count, and names compare case-insensitively. The \\?\
// and \\?\UNC\ prefixes name the same files as the plain forms; after them
// Win32 normalizes nothing, so a verbatim path holding "/", "." or ".." is
// refused rather than guessed at.
//
// Forms whose meaning depends on the file system or the OS are refused:
//   - 8.3 short names (PROGRA~1): which long name one stands for is known
//     only to the volume; canonicalize an existing path with
//     GetFinalPathNameByHandle (or GetLongPathName) first;
//   - alternate data streams (file:stream, file::$DATA): a colon after the
//     drive names a stream of a file, not a directory entry;
//   - names ending in a dot or a space, which Win32 strips (so "ws." and
//     "ws" are one directory to it, two to NTFS through \\?\);
//   - DOS device names (CON, NUL, COM1, LPT1, ..., also with an
//     extension): they name devices, not files;
//   - the device namespace (\\.\, \??\), drive-relative (C:x) and rooted
//     but driveless (\x) paths, relative paths, and wildcards or control
//     characters.
//
// What no text comparison can see: junctions, symbolic links, subst and
// mapped drives, hard links, admin shares (\\localhost\C$) and directories
// with per-directory case sensitivity. Callers resolve existing paths with
// the OS first; containment here is lexical.

// winPath is an absolute Windows path split into its root and components.
type winPath struct {
	unc   bool     // \\server\share rather than a drive
	root  string   // "C:" or `\\server\share`, as given (drive letter upper-cased)
	parts []string // components after the root, as given
}

// winPathError says why a path was refused.
type winPathError struct {
	Path   string
	Reason string
}

func (e *winPathError) Error() string { return fmt.Sprintf("path %q: %s", e.Path, e.Reason) }

// Is makes a refused path an invalid run: errors.Is(err, ErrInvalid).
func (e *winPathError) Is(target error) bool { return target == ErrInvalid }

// parseWinPath parses an absolute Windows path.
func parseWinPath(p string) (winPath, error) {
	bad := func(why string) (winPath, error) { return winPath{}, &winPathError{Path: p, Reason: why} }
	if p == "" {
		return bad("empty")
	}
	rest, verbatim := p, false
	switch {
	case hasPrefixFold(p, `\\?\UNC\`):
		rest, verbatim = `\\`+p[len(`\\?\UNC\`):], true
	case strings.HasPrefix(p, `\\?\`):
		rest, verbatim = p[len(`\\?\`):], true
		if !isDriveRoot(rest) {
			return bad(`a \\?\ path that names neither a drive nor UNC`)
		}
	case strings.HasPrefix(p, `\\.\`), strings.HasPrefix(p, `//./`), strings.HasPrefix(p, `//?/`), strings.HasPrefix(p, `\??\`):
		return bad("a device namespace path")
	}
	if verbatim && strings.ContainsRune(rest[2:], '/') {
		return bad(`a \\?\ path with a forward slash, which Win32 does not treat as a separator there`)
	}
	if verbatim && strings.Contains(rest[2:], `\\`) {
		return bad(`a \\?\ path with an empty name`)
	}
	var w winPath
	switch {
	case len(rest) >= 2 && isSep(rest[0]) && isSep(rest[1]):
		if len(rest) > 2 && isSep(rest[2]) {
			return bad("three separators at the start")
		}
		fields := splitSeps(rest[2:])
		if len(fields) < 2 || fields[0] == "" || fields[1] == "" {
			return bad("a UNC path without both a server and a share")
		}
		if fields[0] == "." || fields[0] == "?" {
			return bad("a device namespace path")
		}
		for _, f := range fields[:2] {
			if err := checkWinName(f); err != "" {
				return bad(err)
			}
		}
		w.unc, w.root = true, `\\`+fields[0]+`\`+fields[1]
		rest = strings.Join(fields[2:], `\`)
	case len(rest) >= 2 && rest[1] == ':' && isLetter(rest[0]):
		if len(rest) > 2 && !isSep(rest[2]) {
			return bad("a drive-relative path (no separator after the drive)")
		}
		if len(rest) == 2 {
			return bad("a drive-relative path (no separator after the drive)")
		}
		w.root = strings.ToUpper(rest[:1]) + ":"
		rest = rest[3:]
	case len(rest) >= 1 && isSep(rest[0]):
		return bad("a path rooted on the current drive (no drive letter)")
	default:
		return bad("a relative path")
	}
	for _, c := range splitSeps(rest) {
		switch c {
		case "":
			continue
		case ".", "..":
			if verbatim {
				return bad(`a \\?\ path with "." or "..", which Win32 passes through unresolved`)
			}
			if c == ".." && len(w.parts) > 0 {
				w.parts = w.parts[:len(w.parts)-1]
			}
			continue
		}
		if err := checkWinName(c); err != "" {
			return bad(err)
		}
		w.parts = append(w.parts, c)
	}
	return w, nil
}

// checkWinName returns why one component is ambiguous, or "".
func checkWinName(c string) string {
	for _, r := range c {
		switch {
		case r < 0x20:
			return "a control character in a name"
		case strings.ContainsRune(`<>"|?*`, r):
			return fmt.Sprintf("the character %q, which Windows does not allow in names", r)
		case r == ':':
			return "a colon in a name: it names an alternate data stream"
		}
	}
	// Even verbatim: a name with a trailing dot or space is one that only
	// \\?\ paths reach, and that Win32 tools confuse with its stripped twin.
	if last := c[len(c)-1]; last == '.' || last == ' ' {
		return "a name ending in a dot or a space, which Win32 strips"
	}
	if isDOSDevice(c) {
		return fmt.Sprintf("the DOS device name %q", c)
	}
	if isShortName(c) {
		return fmt.Sprintf("%q looks like an 8.3 short name, which only the volume can resolve", c)
	}
	return ""
}

// isDOSDevice reports whether Win32 would take name for a device: CON,
// PRN, AUX, NUL, COM0-9, LPT0-9 (and the superscript digits), CONIN$ and
// CONOUT$, also with an extension or trailing spaces before it.
func isDOSDevice(name string) bool {
	base, _, _ := strings.Cut(name, ".")
	base = strings.ToUpper(strings.TrimRight(base, " "))
	switch base {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$":
		return true
	}
	if r := []rune(base); len(r) == 4 && (string(r[:3]) == "COM" || string(r[:3]) == "LPT") {
		return (r[3] >= '0' && r[3] <= '9') || r[3] == '¹' || r[3] == '²' || r[3] == '³'
	}
	return false
}

// isShortName reports whether c has the shape of a generated 8.3 name: a
// base of at most 8 characters holding "~" and a digit, and an extension
// of at most 3.
func isShortName(c string) bool {
	base, ext, _ := strings.Cut(c, ".")
	if len(base) == 0 || len(base) > 8 || len(ext) > 3 || strings.Contains(ext, ".") {
		return false
	}
	i := strings.IndexByte(base, '~')
	return i > 0 && i+1 < len(base) && base[i+1] >= '0' && base[i+1] <= '9'
}

// String is the canonical form: C:\a\b or \\server\share\a.
func (w winPath) String() string {
	if len(w.parts) == 0 {
		if w.unc {
			return w.root
		}
		return w.root + `\`
	}
	return w.root + `\` + strings.Join(w.parts, `\`)
}

// key is the form paths compare by: case folded the way NTFS's upcase table
// does for all but a few characters (simple upper-casing, rune by rune).
func (w winPath) key() []string {
	out := make([]string, 0, len(w.parts)+1)
	out = append(out, foldWin(w.root))
	for _, p := range w.parts {
		out = append(out, foldWin(p))
	}
	return out
}

func foldWin(s string) string {
	return strings.Map(unicode.ToUpper, s)
}

// cleanWinPath returns the canonical form of an absolute Windows path.
func cleanWinPath(p string) (string, error) {
	w, err := parseWinPath(p)
	if err != nil {
		return "", err
	}
	return w.String(), nil
}

// winWithin reports whether p is dir or lies inside it.
func winWithin(p, dir string) (bool, error) {
	pk, dk, err := winKeys(p, dir)
	if err != nil {
		return false, err
	}
	if len(pk) < len(dk) {
		return false, nil
	}
	for i := range dk {
		if pk[i] != dk[i] {
			return false, nil
		}
	}
	return true, nil
}

// winBeneath reports whether p lies strictly inside dir.
func winBeneath(p, dir string) (bool, error) {
	pk, dk, err := winKeys(p, dir)
	if err != nil {
		return false, err
	}
	if len(pk) <= len(dk) {
		return false, nil
	}
	for i := range dk {
		if pk[i] != dk[i] {
			return false, nil
		}
	}
	return true, nil
}

// winRel returns the components of p below dir, which must contain it.
func winRel(p, dir string) ([]string, error) {
	pw, err := parseWinPath(p)
	if err != nil {
		return nil, err
	}
	in, err := winWithin(p, dir)
	if err != nil {
		return nil, err
	}
	if !in {
		return nil, &winPathError{Path: p, Reason: fmt.Sprintf("not inside %s", dir)}
	}
	dw, _ := parseWinPath(dir)
	return pw.parts[len(dw.parts):], nil
}

func winKeys(p, dir string) (pk, dk []string, err error) {
	pw, err := parseWinPath(p)
	if err != nil {
		return nil, nil, err
	}
	dw, err := parseWinPath(dir)
	if err != nil {
		return nil, nil, err
	}
	if pw.unc != dw.unc {
		return []string{"\x00"}, []string{"\x01"}, nil // never within each other
	}
	return pw.key(), dw.key(), nil
}

func isSep(c byte) bool    { return c == '\\' || c == '/' }
func isLetter(c byte) bool { return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }

// isDriveRoot reports whether s starts with "X:" followed by a separator
// or nothing else.
func isDriveRoot(s string) bool {
	return len(s) >= 2 && isLetter(s[0]) && s[1] == ':' && (len(s) == 2 || isSep(s[2]))
}

func splitSeps(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == '\\' || r == '/' })
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

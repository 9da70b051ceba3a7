package sandbox

import (
	"io"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/forgebox/forgebox/gitkeys"
	"github.com/forgebox/forgebox/pathtree"
)

// configTextRisk reads a new repository's Git config and says why it must
// go, or returns "" when a repository made during the run may keep every
// key in it (gitConfigKey).
func configTextRisk(f io.Reader) string {
	for e := range gitConfigEntries(f) {
		if e.Odd != "" {
			return "its config " + e.Odd
		}
		if gitkeys.Classify(e.Section, e.Sub, e.Key, e.Value) == gitkeys.Refused {
			return "its config sets " + e.pattern()
		}
	}
	return ""
}

// gitConfigEntry is one key of a Git config file as forgebox reads it:
// enough to vet a config, to find the paths Git follows, and to edit a
// config key by key without touching the rest of its text. It is the only
// reader of Git configuration in the sandbox, on every OS.
type gitConfigEntry struct {
	// Section is the header's name, lower-case, without its subsection:
	// "core" for [core] and [core "x"], "a" for [a.b]. Sub says the
	// header named a subsection, Subsection is it: as written in quotes,
	// lower-case in the old [a.b] form.
	Section    string
	Sub        bool
	Subsection string
	// Key is lower-case; Value is trimmed, outer quotes removed, and empty
	// for a key without "=". RawValue is the text after the key's name,
	// trimmed ("= x", or "" without "="): what two versions of a file are
	// compared on.
	Key, Value, RawValue string
	// Line is the entry's line (from 0), Text that line as written and
	// KeyAt where in it the key's name starts (after a section header on
	// the same line). Header is the section's header as written.
	Line   int
	Text   string
	KeyAt  int
	Header string
	// Odd says why a line was not read ("continues lines", "is
	// malformed"): the entry has no key, and the file cannot be vetted.
	Odd string
}

// name is the entry's full key: section[.subsection].key.
func (e gitConfigEntry) name() string {
	if e.Sub {
		return e.Section + "." + e.Subsection + "." + e.Key
	}
	return e.Section + "." + e.Key
}

// pattern is the entry's key with any subsection written as "*".
func (e gitConfigEntry) pattern() string {
	if e.Sub {
		return e.Section + ".*." + e.Key
	}
	return e.Section + "." + e.Key
}

// gitConfigMax bounds the Git config forgebox reads: a larger one is not
// vetted.
const gitConfigMax = 1 << 20

// gitConfigEntries yields the keys of the Git config r. A key on a section
// header's line counts, as it does for Git. What Git would read otherwise
// than forgebox (continued lines, malformed headers or keys, a file over
// gitConfigMax) is yielded as an entry with Odd set, so that a caller
// vetting the file refuses it.
func gitConfigEntries(r io.Reader) iter.Seq[gitConfigEntry] {
	return func(yield func(gitConfigEntry) bool) {
		data, err := io.ReadAll(io.LimitReader(r, gitConfigMax+1))
		switch {
		case err != nil:
			yield(gitConfigEntry{Odd: "cannot be read: " + err.Error()})
			return
		case len(data) > gitConfigMax:
			yield(gitConfigEntry{Odd: "is larger than 1 MiB, which forgebox does not vet"})
			return
		}
		var section, subsection, header string
		var sub bool
		for i, text := range configLines(string(data)) {
			line := strings.TrimSpace(text)
			odd := func(why string) bool {
				return yield(gitConfigEntry{Section: section, Sub: sub, Subsection: subsection, Line: i, Text: text, Odd: why})
			}
			switch {
			case line == "" || line[0] == '#' || line[0] == ';':
				continue
			case strings.HasSuffix(line, "\\"):
				if !odd("continues lines, which forgebox does not vet") {
					return
				}
				continue
			}
			keyAt := len(text) - len(strings.TrimLeftFunc(text, unicode.IsSpace))
			if line[0] == '[' {
				s, ss, hasSub, end, ok := parseConfigHeader(line)
				if !ok {
					section, subsection, sub, header = "", "", false, ""
					if !odd("is malformed") {
						return
					}
					continue
				}
				section, subsection, sub, header = s, ss, hasSub, line[:end]
				rest := strings.TrimSpace(line[end:])
				if rest == "" || rest[0] == '#' || rest[0] == ';' {
					continue
				}
				// Past the header, not the first match of the key's text:
				// that may be inside a quoted subsection.
				keyAt += end + len(line[end:]) - len(strings.TrimLeftFunc(line[end:], unicode.IsSpace))
				line = rest
			}
			k, v, eq := strings.Cut(line, "=")
			k = strings.TrimSpace(k)
			if section == "" || !configKeyName(k) {
				if !odd("is malformed") {
					return
				}
				continue
			}
			raw := ""
			if eq {
				raw = "= " + strings.TrimSpace(v)
			}
			e := gitConfigEntry{Section: section, Sub: sub, Subsection: subsection, Key: strings.ToLower(k),
				Value: strings.Trim(strings.TrimSpace(v), `"`), RawValue: raw,
				Line: i, Text: text, KeyAt: keyAt, Header: header}
			if !yield(e) {
				return
			}
		}
	}
}

// configLines splits a config's text into lines without their line
// endings; a last line without one counts.
func configLines(text string) []string {
	lines := strings.Split(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// parseConfigHeader reads the section header at the start of line:
// [section], [section "subsection"] (with \" and \\ escapes) or the old
// [section.subsection]. end is just past its "]".
func parseConfigHeader(line string) (section, subsection string, sub bool, end int, ok bool) {
	i := 1
	for i < len(line) && (configNameByte(line[i]) || line[i] == '.') {
		i++
	}
	section = strings.ToLower(line[1:i])
	if section == "" {
		return "", "", false, 0, false
	}
	switch {
	case i < len(line) && line[i] == ']':
		if s, ss, found := strings.Cut(section, "."); found {
			if s == "" || ss == "" {
				return "", "", false, 0, false
			}
			return s, ss, true, i + 1, true
		}
		return section, "", false, i + 1, true
	case i < len(line) && line[i] == ' ' && !strings.Contains(section, "."):
	default:
		return "", "", false, 0, false
	}
	for i < len(line) && line[i] == ' ' {
		i++
	}
	if i >= len(line) || line[i] != '"' {
		return "", "", false, 0, false
	}
	var b strings.Builder
	for i++; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\\' && i+1 < len(line):
			i++
			b.WriteByte(line[i])
		case c == '"':
			if i+1 < len(line) && line[i+1] == ']' {
				return section, b.String(), true, i + 2, true
			}
			return "", "", false, 0, false
		default:
			b.WriteByte(c)
		}
	}
	return "", "", false, 0, false
}

// configKeyName reports whether k is a key name Git accepts: a letter,
// then letters, digits and '-'.
func configKeyName(k string) bool {
	if k == "" || !('a' <= k[0]|0x20 && k[0]|0x20 <= 'z') {
		return false
	}
	for i := 0; i < len(k); i++ {
		if !configNameByte(k[i]) {
			return false
		}
	}
	return true
}

func configNameByte(c byte) bool {
	return 'a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9' || c == '-'
}

// gitConfigValues are the values of key in the sections called section
// (any subsection; "" for any section) of the Git config file, in order.
func gitConfigValues(file, section, key string) []string {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	for e := range gitConfigEntries(f) {
		if (section == "" || e.Section == section) && e.Key == key && e.Odd == "" {
			out = append(out, e.Value)
		}
	}
	return out
}

// gitHooksPath is core.hooksPath of a Git config file, resolved against
// the worktree; "" when unset, or relative without a worktree.
func gitHooksPath(config, worktree string) string {
	v := gitConfigValues(config, "core", "hookspath")
	switch {
	case len(v) == 0 || v[len(v)-1] == "":
		return ""
	case filepath.IsAbs(v[len(v)-1]):
		return filepath.Clean(v[len(v)-1])
	case worktree == "":
		return ""
	}
	return filepath.Join(worktree, v[len(v)-1])
}

// submodulePaths lists the directories below root that root's .gitmodules
// names as a path: Git reads submodule.*.path, and any section's path is
// taken, which can only protect more.
func submodulePaths(root string) []string {
	var out []string
	for _, v := range gitConfigValues(filepath.Join(root, ".gitmodules"), "", "path") {
		if p := filepath.Join(root, v); pathtree.Beneath(p, root) {
			out = append(out, p)
		}
	}
	return out
}

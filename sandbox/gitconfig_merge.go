package sandbox

import (
	"slices"
	"strconv"
	"strings"

	"github.com/forgebox/forgebox/gitkeys"
)

// configChange is a key whose values differ between two versions of a Git
// config: the snapshot taken at launch and the run's private copy.
type configChange struct {
	Entry gitConfigEntry // the key's last entry in either version: its section, name and class
	// Old and New are the key's raw values in order (RawValue), in the
	// snapshot and in the copy. Lines are the copy's lines for New, each
	// without a section header in front, and Values their decoded values.
	Old, New, Lines, Values []string
	// Header is the copy's header of the key's section, to start one.
	Header string
}

// Key is the change's full key name.
func (c configChange) Key() string { return c.Entry.name() }

// Class is what the one rule (gitConfigKey) lets a run do with the change:
// every new value must pass.
func (c configChange) Class() gitkeys.Class {
	class := gitkeys.Classify(c.Entry.Section, c.Entry.Sub, c.Entry.Key, "")
	for _, v := range c.Values {
		class = min(class, gitkeys.Classify(c.Entry.Section, c.Entry.Sub, c.Entry.Key, v))
	}
	return class
}

// parsedConfig is a config's entries by full key, in order, and why it
// cannot be vetted when it cannot.
type parsedConfig struct {
	keys  []string
	byKey map[string][]gitConfigEntry
	odd   string
}

func parseConfig(text string) parsedConfig {
	p := parsedConfig{byKey: map[string][]gitConfigEntry{}}
	for e := range gitConfigEntries(strings.NewReader(text)) {
		if e.Odd != "" {
			if p.odd == "" {
				p.odd = e.Odd
				if e.Text != "" {
					p.odd += " (line " + strconv.Itoa(e.Line+1) + ")"
				}
			}
			continue
		}
		k := e.name()
		if _, ok := p.byKey[k]; !ok {
			p.keys = append(p.keys, k)
		}
		p.byKey[k] = append(p.byKey[k], e)
	}
	return p
}

func (p parsedConfig) values(key string) []string {
	var out []string
	for _, e := range p.byKey[key] {
		out = append(out, e.RawValue)
	}
	return out
}

// diffConfig lists the keys whose values differ between before and after,
// in after's order, then the keys after no longer has. odd says why after
// (or before) cannot be read key by key, and then nothing is listed.
func diffConfig(before, after string) ([]configChange, string) {
	b, a := parseConfig(before), parseConfig(after)
	if a.odd != "" {
		return nil, "the changed config " + a.odd
	}
	if b.odd != "" {
		return nil, "the config " + b.odd
	}
	var out []configChange
	for _, k := range append(slices.Clone(a.keys), b.keys...) {
		if slices.ContainsFunc(out, func(c configChange) bool { return c.Key() == k }) {
			continue
		}
		old, cur := b.values(k), a.values(k)
		if slices.Equal(old, cur) {
			continue
		}
		c := configChange{Old: old, New: cur}
		if es := a.byKey[k]; len(es) > 0 {
			c.Entry, c.Header = es[len(es)-1], es[len(es)-1].Header
			for _, e := range es {
				c.Lines = append(c.Lines, entryBody(e))
				c.Values = append(c.Values, e.Value)
			}
		} else {
			c.Entry = b.byKey[k][len(b.byKey[k])-1]
		}
		out = append(out, c)
	}
	return out, ""
}

// entryBody is an entry's line without a section header in front of the
// key: as written when the key starts the line, else indented by a tab.
func entryBody(e gitConfigEntry) string {
	if strings.TrimSpace(e.Text[:e.KeyAt]) == "" {
		return e.Text
	}
	return "\t" + e.Text[e.KeyAt:]
}

// entryHead is what stays of an entry's line when the entry goes: the
// section header in front of it, or nothing.
func entryHead(e gitConfigEntry) string {
	return strings.TrimRight(e.Text[:e.KeyAt], " \t")
}

// mergeConfig applies changes, made from before, to current (the file as
// it is now), key by key: the rest of the text stays as it is. A key the
// file's owner changed meanwhile keeps their values and is returned in
// kept. odd says why current cannot be edited key by key; then it is
// returned unchanged.
func mergeConfig(current, before string, changes []configChange) (out string, kept []string, odd string) {
	b := parseConfig(before)
	out = current
	for _, c := range changes {
		cur := parseConfig(out)
		if cur.odd != "" {
			return current, nil, "the config " + cur.odd
		}
		if !slices.Equal(cur.values(c.Key()), b.values(c.Key())) {
			kept = append(kept, c.Key())
			continue
		}
		out = applyChange(out, cur.byKey[c.Key()], c)
	}
	// The text written must say what was meant and no more: every key it
	// changes from current is ordinary.
	check, odd := diffConfig(current, out)
	if odd != "" {
		return current, nil, "merging the changes would leave a config that " + odd
	}
	for _, c := range check {
		if c.Class() != gitkeys.Ordinary {
			return current, nil, "merging the changes would also change " + c.Key()
		}
	}
	return out, kept, ""
}

// applyChange rewrites the lines of one key: its entries in text (es) take
// the change's new lines in order, spare entries go, and spare new lines
// follow the last entry, or end the key's section, or a new section at the
// end of the file.
func applyChange(text string, es []gitConfigEntry, c configChange) string {
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	eol := "\n"
	if len(lines) > 0 && strings.HasSuffix(lines[0], "\r\n") {
		eol = "\r\n"
	}
	ending := func(l string) string { return l[len(strings.TrimRight(l, "\r\n")):] }
	drop := map[int]bool{}
	insert := map[int][]string{} // lines to add after line i (-1: at the end)
	for i, e := range es {
		head := entryHead(e)
		switch {
		case i < len(c.Lines) && head == "":
			lines[e.Line] = c.Lines[i] + ending(lines[e.Line])
		case i < len(c.Lines):
			lines[e.Line] = head + eol + c.Lines[i] + ending(lines[e.Line])
		case head == "":
			drop[e.Line] = true
		default:
			lines[e.Line] = head + ending(lines[e.Line])
		}
	}
	if len(c.Lines) > len(es) {
		spare := c.Lines[len(es):]
		switch at := sectionEnd(lines, es, c.Entry); {
		case at >= 0:
			insert[at] = spare
		default:
			header := c.Header
			if header == "" {
				header = "[" + c.Entry.Section + "]"
			}
			insert[-1] = append([]string{header}, spare...)
		}
	}
	var b strings.Builder
	for i, l := range lines {
		if !drop[i] {
			b.WriteString(l)
		}
		if add, ok := insert[i]; ok {
			if ending(l) == "" {
				b.WriteString(eol)
			}
			for _, a := range add {
				b.WriteString(a + eol)
			}
		}
	}
	if add, ok := insert[-1]; ok {
		if s := b.String(); s != "" && !strings.HasSuffix(s, "\n") {
			b.WriteString(eol)
		}
		for _, a := range add {
			b.WriteString(a + eol)
		}
	}
	return b.String()
}

// sectionEnd is the line after which new values of e's key go: the key's
// last entry, else the last line with content of the last section with
// e's header (section and subsection), or -1 when there is none.
func sectionEnd(lines []string, es []gitConfigEntry, e gitConfigEntry) int {
	if len(es) > 0 {
		return es[len(es)-1].Line
	}
	at, in := -1, false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "[") {
			s, ss, sub, _, ok := parseConfigHeader(t)
			in = ok && s == e.Section && sub == e.Sub && ss == e.Subsection
			if in {
				at = i
			}
			continue
		}
		if in && t != "" && t[0] != '#' && t[0] != ';' {
			at = i
		}
	}
	return at
}

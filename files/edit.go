package files

import (
	"fmt"
	"strings"
)

// Edit is one exact replacement of text in a file: Old, which must occur
// exactly once unless All, becomes New.
type Edit struct {
	Old string
	New string
	// All replaces every occurrence of Old (at least one).
	All bool
}

// EditResult says what Edit did.
type EditResult struct {
	Path string `json:"path" jsonschema:"the file edited, relative to the workspace, links resolved"`
	// Replacements counts the occurrences replaced, over all edits.
	Replacements int   `json:"replacements" jsonschema:"how many occurrences were replaced, over all edits"`
	Size         int64 `json:"size" jsonschema:"the file's size in bytes after the edit"`
	// Lines are the 1-based lines of the new content where each edit's
	// first replacement begins.
	Lines []int `json:"lines" jsonschema:"for each edit, the line (from 1) of the new content where its first replacement begins"`
}

// maxLinesShown bounds the line numbers a message about an ambiguous match
// lists.
const maxLinesShown = 10

// applyEdits applies edits in order, each to the text the previous one
// left, all or nothing. Text is valid UTF-8 without NUL bytes, and so is
// every edit's: an edit never turns text into binary.
func applyEdits(op, p, text string, edits []Edit) (string, EditResult, error) {
	var res EditResult
	if len(edits) == 0 {
		return "", res, refusal(op, p, KindInvalid, "no edits were given")
	}
	for i, e := range edits {
		which := editName(i, len(edits))
		switch {
		case e.Old == "":
			return "", res, refusal(op, p, KindInvalid, "%sthe old text is empty; give the exact text to replace (to write a whole file, use write)", which)
		case e.Old == e.New:
			return "", res, refusal(op, p, KindInvalid, "%sthe old and new text are the same: nothing would change", which)
		case !isText([]byte(e.Old)) || !isText([]byte(e.New)):
			return "", res, refusal(op, p, KindInvalid, "%sthe old and new text must be valid UTF-8 without NUL bytes", which)
		}
		n := strings.Count(text, e.Old)
		switch {
		case n == 0:
			hint := "%sthe old text does not occur in the file; read the file again and copy the text exactly, whitespace and line breaks included"
			if strings.Contains(text, "\r\n") && !strings.Contains(e.Old, "\r\n") && strings.Contains(e.Old, "\n") {
				hint += " (the file's lines end in CR LF)"
			}
			return "", res, refusal(op, p, KindNoMatch, hint, which)
		case n > 1 && !e.All:
			return "", res, refusal(op, p, KindAmbiguous, "%sthe old text occurs %d times (at lines %s); include more of the text around it to make it unique, or replace every occurrence",
				which, n, lineList(text, e.Old))
		}
		at := strings.Index(text, e.Old)
		if e.All {
			text = strings.ReplaceAll(text, e.Old, e.New)
		} else {
			text = text[:at] + e.New + text[at+len(e.Old):]
		}
		res.Replacements += n
		res.Lines = append(res.Lines, 1+strings.Count(text[:at], "\n"))
	}
	res.Size = int64(len(text))
	return text, res, nil
}

// editName prefixes a message about one of several edits.
func editName(i, n int) string {
	if n == 1 {
		return ""
	}
	return fmt.Sprintf("edit %d of %d: ", i+1, n)
}

// lineList lists the lines (from 1) where old begins in text, the first
// maxLinesShown of them.
func lineList(text, old string) string {
	var lines []string
	line, from := 1, 0
	for len(lines) < maxLinesShown {
		i := strings.Index(text[from:], old)
		if i < 0 {
			return strings.Join(lines, ", ")
		}
		line += strings.Count(text[from:from+i], "\n")
		lines = append(lines, fmt.Sprint(line))
		line += strings.Count(old, "\n")
		from += i + len(old)
	}
	return strings.Join(lines, ", ") + ", ..."
}

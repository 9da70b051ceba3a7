//go:build ignore

// checklinks fails when a relative link or an anchor in README.md or
// docs/**/*.md leads nowhere: a file that does not exist, a path outside
// the repository, or a #fragment that no heading (GitHub's anchor for it)
// or <a id/name> of the target file defines. Links with a scheme
// (https:, mailto:) are not fetched. Run it from anywhere in the
// repository: go run scripts/checklinks.go [FILE.md ...]
package main

import (
	"bufio"
	"fmt"
	"io/fs"
	"iter"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

var (
	inlineLink = regexp.MustCompile(`!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
	refDef     = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$`)
	heading    = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	htmlAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	codeSpan   = regexp.MustCompile("(`+)(.+?)(`+)")
	mdLink     = regexp.MustCompile(`!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\([^)]*\)`)
	scheme     = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
)

func main() {
	root, err := repoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "checklinks:", err)
		os.Exit(2)
	}
	files := os.Args[1:]
	if len(files) == 0 {
		files, err = markdownFiles(root)
		if err != nil {
			fmt.Fprintln(os.Stderr, "checklinks:", err)
			os.Exit(2)
		}
	}
	anchors := map[string]map[string]bool{}
	broken := 0
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, "checklinks:", err)
			os.Exit(2)
		}
		lines, err := readLines(abs)
		if err != nil {
			fmt.Fprintln(os.Stderr, "checklinks:", err)
			os.Exit(2)
		}
		for _, l := range links(lines) {
			if msg := check(root, abs, l.target, anchors); msg != "" {
				rel, _ := filepath.Rel(root, abs)
				fmt.Fprintf(os.Stderr, "%s:%d: link %q: %s\n", rel, l.line, l.target, msg)
				broken++
			}
		}
	}
	if broken > 0 {
		fmt.Fprintf(os.Stderr, "checklinks: %d broken link(s)\n", broken)
		os.Exit(1)
	}
	fmt.Printf("checklinks: %d file(s), every relative link and anchor resolves\n", len(files))
}

// repoRoot is the directory above this one that holds go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no go.mod above the current directory: run it inside the repository")
		}
		dir = up
	}
}

// markdownFiles is README.md and every .md file below docs/.
func markdownFiles(root string) ([]string, error) {
	files := []string{filepath.Join(root, "README.md")}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return nil
	})
	return files, err
}

func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []string
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		lines = append(lines, s.Text())
	}
	return lines, s.Err()
}

type link struct {
	line   int
	target string
}

// prose yields the lines outside fenced code blocks, with their indexes.
func prose(lines []string) iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		fence := ""
		for i, l := range lines {
			if f, ok := fenceMarker(l); ok {
				switch {
				case fence == "":
					fence = f
				case strings.HasPrefix(strings.TrimSpace(l), fence):
					fence = ""
				}
				continue
			}
			if fence == "" && !yield(i, l) {
				return
			}
		}
	}
}

// links are the link targets outside code blocks and code spans.
func links(lines []string) []link {
	var out []link
	for i, l := range prose(lines) {
		text := codeSpan.ReplaceAllString(l, "")
		for _, m := range inlineLink.FindAllStringSubmatch(text, -1) {
			out = append(out, link{i + 1, m[1]})
		}
		if m := refDef.FindStringSubmatch(text); m != nil {
			out = append(out, link{i + 1, m[1]})
		}
	}
	return out
}

func fenceMarker(l string) (string, bool) {
	t := strings.TrimLeft(l, " ")
	if len(l)-len(t) > 3 {
		return "", false
	}
	for _, c := range []string{"```", "~~~"} {
		if strings.HasPrefix(t, c) {
			n := len(t) - len(strings.TrimLeft(t, c[:1]))
			return strings.Repeat(c[:1], n), true
		}
	}
	return "", false
}

// check returns why target, linked from file, leads nowhere ("" when it resolves).
func check(root, file, target string, anchors map[string]map[string]bool) string {
	if target == "" {
		return "empty target"
	}
	if scheme.MatchString(target) || strings.HasPrefix(target, "//") {
		return ""
	}
	path, frag, _ := strings.Cut(target, "#")
	dest := file
	if path != "" {
		p, err := url.PathUnescape(path)
		if err != nil {
			return "bad escape: " + err.Error()
		}
		if strings.HasPrefix(p, "/") {
			dest = filepath.Join(root, p)
		} else {
			dest = filepath.Join(filepath.Dir(file), p)
		}
		if rel, err := filepath.Rel(root, dest); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return "points outside the repository"
		}
		if _, err := os.Stat(dest); err != nil {
			return "no such file or directory"
		}
	}
	if frag == "" {
		return ""
	}
	if !strings.HasSuffix(dest, ".md") {
		return "an anchor into a file that is not Markdown"
	}
	set, ok := anchors[dest]
	if !ok {
		lines, err := readLines(dest)
		if err != nil {
			return err.Error()
		}
		set = anchorSet(lines)
		anchors[dest] = set
	}
	f, err := url.PathUnescape(frag)
	if err != nil {
		return "bad escape: " + err.Error()
	}
	if !set[f] {
		rel, _ := filepath.Rel(root, dest)
		return "no heading or <a id> makes the anchor #" + f + " in " + rel
	}
	return ""
}

// anchorSet is every anchor GitHub makes for a Markdown file: one per
// heading (a repeated one gets -1, -2, ...) and each <a id> or <a name>.
func anchorSet(lines []string) map[string]bool {
	set := map[string]bool{}
	seen := map[string]int{}
	for _, l := range prose(lines) {
		for _, m := range htmlAnchor.FindAllStringSubmatch(l, -1) {
			set[m[1]] = true
		}
		m := heading.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		s := slug(m[2])
		if n, dup := seen[s]; dup {
			seen[s] = n + 1
			set[s+"-"+strconv.Itoa(n+1)] = true
			continue
		}
		seen[s] = 0
		set[s] = true
	}
	return set
}

// slug is GitHub's anchor for a heading's text: the rendered text (code
// spans and links reduced to their text), lower-cased, with everything but
// letters, digits, spaces, hyphens and underscores removed and each space
// made a hyphen.
func slug(text string) string {
	text = mdLink.ReplaceAllString(text, "$1")
	text = codeSpan.ReplaceAllString(text, "$2")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

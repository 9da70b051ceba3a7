package shellquote

import "strings"

// Quote renders s as one shell word: bare when every byte is safe, else in
// single quotes, where the shell treats every byte literally but the quote
// itself: that closes the quotes, adds an escaped quote and reopens them.
func Quote(s string) string {
	if s != "" && bare(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Join renders args as a line of shell words separated by spaces. The first
// word, which a shell reads in command position, is also quoted when it has
// the shape NAME=value (an assignment) or is a reserved word such as if or
// time: quoted, both name the program to run.
func Join(args []string) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		} else if assignment(a) || reserved(a) {
			// bare, so there is no quote inside to escape
			b.WriteString("'" + a + "'")
			continue
		}
		b.WriteString(Quote(a))
	}
	return b.String()
}

// bare reports whether every byte of s means itself to the shell wherever
// the word stands. ~ (tilde expansion) and # (a comment at the start of a
// word) are not among them.
func bare(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("@%+=:,./_-", c) >= 0) {
			return false
		}
	}
	return true
}

// assignment reports whether s is a bare word the shell would read as an
// assignment in command position: a name, then =.
func assignment(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	if !ok || name == "" || !bare(s) {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// reserved reports whether s is a bare word that bash or sh reads as a
// reserved word in command position.
func reserved(s string) bool {
	switch s {
	case "if", "then", "else", "elif", "fi", "do", "done", "case", "esac",
		"while", "until", "for", "in", "function", "select", "time", "coproc":
		return true
	}
	return false
}

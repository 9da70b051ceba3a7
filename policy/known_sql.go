package policy

import (
	"fmt"
	"strings"
)

// maxSQL bounds the statements judged; what is beyond is asked about.
const (
	maxSQLBytes      = 64 << 10
	maxSQLStatements = 256
)

// sql judges SQL text for a client: its meta-commands (psql's \!,
// sqlite's .shell) first, then each statement; it records the worst.
// inWorkspace: the database is a file of the workspace (sqlite3's).
func (j *judge) sql(tool, text string, static bool, dialect string, inWorkspace bool) {
	if !static {
		j.add(Caution, 5, "%s runs SQL computed at run time", tool)
	}
	if len(text) > maxSQLBytes {
		j.add(Caution, 5, "%s runs more SQL than forgebox judges (%d bytes)", tool, len(text))
		text = text[:maxSQLBytes]
	}
	worst := finding{cat: ReadOnly, risk: 1, reason: tool + " runs a query that only reads"}
	statement := true // worst comes from a statement, not a meta command
	consider := func(f finding) {
		if worst.worse(f) {
			worst, statement = f, false
		}
	}
	var body strings.Builder
	for line := range strings.Lines(text) {
		t := strings.TrimSpace(line)
		meta := dialect != "sqlite" && strings.HasPrefix(t, `\`) || dialect == "sqlite" && strings.HasPrefix(t, ".") ||
			dialect == "mysql" && (hasPrefixFold(t, "system ") || hasPrefixFold(t, "source ") || hasPrefixFold(t, "tee ") || hasPrefixFold(t, "pager "))
		if !meta {
			body.WriteString(line)
			continue
		}
		j.sqlMeta(tool, t, static, consider)
	}
	upper := strings.ToUpper(cleanSQL(body.String(), dialect == "mysql"))
	n := 0
	for stmt := range strings.SplitSeq(upper, ";") {
		if strings.TrimSpace(stmt) == "" {
			continue
		}
		if n++; n > maxSQLStatements {
			consider(finding{cat: Caution, risk: 5, reason: fmt.Sprintf("%s runs more than %d statements", tool, maxSQLStatements)})
			break
		}
		if f := classifySQL(tool, stmt); worst.worse(f) {
			worst, statement = f, true
		}
	}
	j.record(worst)
	switch {
	case !statement:
	case dialect == "sqlite":
		// A database file: in the workspace, its content is the
		// workspace's (undo keeps it).
		j.findings[len(j.findings)-1].Undoable = inWorkspace
	default:
		// A server: over the network or a socket, both outside the
		// default sandbox.
		j.reachLast()
	}
}

func hasPrefixFold(s, p string) bool {
	return len(s) >= len(p) && strings.EqualFold(s[:len(p)], p)
}

// sqlMeta judges one meta-command of psql, mysql or sqlite3.
func (j *judge) sqlMeta(tool, t string, static bool, consider func(finding)) {
	cmd, arg, _ := strings.Cut(t, " ")
	arg = strings.TrimSpace(arg)
	switch strings.ToLower(strings.TrimLeft(cmd, `\.`)) {
	case "!", "shell", "system":
		if arg != "" {
			consider(finding{cat: Caution, risk: 4, reason: fmt.Sprintf("%s runs a shell command", tool)})
			j.shell(arg, static, tool+" "+cmd)
		}
	case "o", "out", "output", "once", "save", "backup", "t", "tee", "w", "write", "excel":
		if arg != "" && !strings.HasPrefix(arg, "|") {
			consider(finding{cat: Caution, risk: 3, reason: fmt.Sprintf("%s writes query results to %s", tool, arg)})
			j.write(homeArg(j, strings.Fields(arg)[0]), tool+" "+cmd)
		} else if arg != "" {
			consider(finding{cat: Caution, risk: 5, reason: fmt.Sprintf("%s pipes query results to a command", tool)})
			j.shell(strings.TrimPrefix(arg, "|"), static, tool+" "+cmd)
		}
	case "i", "ir", "include", "include_relative", "read", "source", "import", "restore", "copy":
		consider(finding{cat: Caution, risk: 3, reason: fmt.Sprintf("%s %s runs or loads statements from a file", tool, cmd)})
	case "load":
		consider(finding{cat: Caution, risk: 5, reason: fmt.Sprintf("%s .load loads code into the database engine", tool)})
	case "gexec":
		consider(finding{cat: Caution, risk: 5, reason: fmt.Sprintf("%s \\gexec runs query results as statements", tool)})
	case "pager", "p":
		consider(finding{cat: Caution, risk: 5, reason: fmt.Sprintf("%s pager runs %s", tool, arg)})
	case "e", "edit", "ef", "ev":
		j.add(Interactive, 2, "interactive: %s %s opens an editor", tool, cmd)
	}
}

// cleanSQL blanks comments and the insides of quoted strings and
// identifiers, so that neither is read as a statement. MySQL's /*! ... */
// comments are code and are kept; so are the bodies of $$-quoted blocks,
// which a DO statement runs.
func cleanSQL(s string, mysql bool) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '-' && i+1 < len(s) && s[i+1] == '-', mysql && c == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			b = append(b, ' ')
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				end = len(s) - i - 2
			}
			if mysql && i+2 < len(s) && s[i+2] == '!' {
				body := strings.TrimLeft(s[i+3:i+2+end], "0123456789")
				b = append(b, body...)
			}
			b = append(b, ' ')
			i += end + 3
		case c == '\'' || c == '"' || c == '`':
			b = append(b, c, c)
			for i++; i < len(s); i++ {
				if mysql && s[i] == '\\' {
					i++
					continue
				}
				if s[i] == c {
					if i+1 < len(s) && s[i+1] == c {
						i++
						continue
					}
					break
				}
			}
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

// everyRow finds a WHERE that holds for every row.
var everyRow = lazyRE(`\b(?:WHERE|OR)\s+(?:TRUE|1|NOT\s+FALSE|(\d+|'')\s*=\s*(\d+|''))\s*(?:$|\)|ORDER|LIMIT|RETURNING|OR|AND)`)

// classifySQL judges one statement, upper-cased and cleaned.
func classifySQL(tool, stmt string) finding {
	w := sqlWords(stmt, 4)
	if len(w) == 0 {
		return finding{cat: ReadOnly, risk: 1, reason: tool + " runs an empty statement"}
	}
	switch w[0] {
	case "SELECT", "SHOW", "DESCRIBE", "DESC", "VALUES", "TABLE", "USE", "BEGIN", "COMMIT", "ROLLBACK", "START", "SAVEPOINT",
		"RELEASE", "END", "FETCH", "DECLARE", "CLOSE", "CHECKPOINT", "HELP", "STATUS", "LISTEN", "UNLISTEN", "EXPLAIN", "WITH", "PRAGMA", "SET":
		switch {
		case hasWord(stmt, "OUTFILE") || hasWord(stmt, "DUMPFILE") || hasWord(stmt, "LO_EXPORT") || hasWord(stmt, "PG_WRITE_FILE"):
			return finding{cat: Caution, risk: 5, reason: tool + " writes a file on the database server"}
		case hasWord(stmt, "LOAD_FILE") || hasWord(stmt, "PG_READ_FILE") || hasWord(stmt, "PG_READ_BINARY_FILE") || hasWord(stmt, "LO_IMPORT") || hasWord(stmt, "PG_TERMINATE_BACKEND"):
			return finding{cat: Caution, risk: 4, reason: tool + " calls a server function that reads files or ends sessions"}
		case w[0] == "WITH" || w[0] == "EXPLAIN" && hasWord(stmt, "ANALYZE"):
			worst := finding{cat: ReadOnly, risk: 1, reason: tool + " runs a query that only reads"}
			for _, kw := range [...]string{"DELETE", "UPDATE", "INSERT", "MERGE"} {
				if i := wordIndex(stmt, kw); i >= 0 {
					if f := classifySQL(tool, enclosed(stmt[i:])); worst.worse(f) {
						worst = f
					}
				}
			}
			return worst
		case w[0] == "SELECT" && hasWord(stmt, "INTO"):
			return finding{cat: Caution, risk: 3, reason: tool + " SELECT INTO creates a table"}
		case w[0] == "SET" && (hasWord(stmt, "GLOBAL") || hasWord(stmt, "PASSWORD")):
			return finding{cat: Caution, risk: 5, reason: tool + " SET changes a server-wide setting or a password"}
		case w[0] == "PRAGMA" && strings.Contains(stmt, "="):
			return finding{cat: Caution, risk: 3, reason: tool + " PRAGMA changes a database setting"}
		}
		return finding{cat: ReadOnly, risk: 1, reason: tool + " runs a query that only reads"}
	case "DROP":
		obj := nextWord(w, 1, "TEMPORARY", "TEMP")
		switch obj {
		case "TABLE", "DATABASE", "SCHEMA", "KEYSPACE", "COLLECTION", "OWNED":
			return finding{cat: Dangerous, risk: 7, reason: fmt.Sprintf("%s DROP %s deletes it with all its data", tool, obj)}
		case "USER", "ROLE":
			return finding{cat: Dangerous, risk: 6, reason: fmt.Sprintf("%s DROP %s removes an account", tool, obj)}
		}
		return finding{cat: Caution, risk: 5, reason: fmt.Sprintf("%s DROP %s removes a database object", tool, obj)}
	case "TRUNCATE":
		return finding{cat: Dangerous, risk: 7, reason: tool + " TRUNCATE deletes every row of the table"}
	case "DELETE":
		if !hasWord(stmt, "WHERE") || everyRow.MatchString(strings.TrimSpace(stmt)) {
			return finding{cat: Dangerous, risk: 7, reason: tool + " DELETE without a WHERE clause deletes every row"}
		}
		return finding{cat: Caution, risk: 3, reason: tool + " DELETE removes the matching rows"}
	case "UPDATE":
		if !hasWord(stmt, "WHERE") || everyRow.MatchString(strings.TrimSpace(stmt)) {
			return finding{cat: Dangerous, risk: 6, reason: tool + " UPDATE without a WHERE clause changes every row"}
		}
		return finding{cat: Caution, risk: 3, reason: tool + " UPDATE changes the matching rows"}
	case "ALTER":
		switch {
		case hasWord(stmt, "DROP"):
			return finding{cat: Dangerous, risk: 6, reason: tool + " ALTER ... DROP removes a column or constraint with its data"}
		case len(w) > 1 && (w[1] == "USER" || w[1] == "ROLE" || w[1] == "SYSTEM"):
			return finding{cat: Caution, risk: 5, reason: fmt.Sprintf("%s ALTER %s changes an account or the server", tool, w[1])}
		}
		return finding{cat: Caution, risk: 3, reason: tool + " ALTER changes the schema"}
	case "GRANT", "REVOKE":
		return finding{cat: Caution, risk: 5, reason: fmt.Sprintf("%s %s changes who may do what in the database", tool, w[0])}
	case "CREATE":
		if obj := nextWord(w, 1, "OR", "REPLACE"); obj == "USER" || obj == "ROLE" {
			return finding{cat: Caution, risk: 5, reason: fmt.Sprintf("%s CREATE %s adds an account", tool, obj)}
		}
		return finding{cat: Caution, risk: 3, reason: tool + " CREATE adds a database object"}
	case "COPY":
		switch {
		case hasWord(stmt, "PROGRAM"):
			return finding{cat: Caution, risk: 5, reason: tool + " COPY ... PROGRAM runs a shell command on the database server"}
		case hasWord(stmt, "TO") && !hasWord(stmt, "STDOUT"):
			return finding{cat: Caution, risk: 4, reason: tool + " COPY ... TO writes a file on the database server"}
		case hasWord(stmt, "TO"):
			return finding{cat: ReadOnly, risk: 1, reason: tool + " COPY ... TO STDOUT only reads"}
		}
		return finding{cat: Caution, risk: 3, reason: tool + " COPY loads rows"}
	case "INSERT", "REPLACE", "UPSERT", "MERGE", "LOAD", "IMPORT", "COMMENT", "REINDEX", "CLUSTER", "LOCK", "PREPARE",
		"DEALLOCATE", "REFRESH", "ATTACH", "DETACH", "RENAME", "RESET", "DISCARD":
		return finding{cat: Caution, risk: 3, reason: fmt.Sprintf("%s %s changes data or the schema", tool, w[0])}
	case "CALL", "EXEC", "EXECUTE", "DO":
		return finding{cat: Caution, risk: 4, reason: fmt.Sprintf("%s %s runs a stored procedure or block", tool, w[0])}
	case "VACUUM", "ANALYZE", "OPTIMIZE", "CHECK", "REPAIR", "FLUSH":
		return finding{cat: SafeWrite, risk: 2, reason: fmt.Sprintf("%s %s maintains the database", tool, w[0])}
	case "SHUTDOWN":
		return finding{cat: Dangerous, risk: 7, reason: tool + " SHUTDOWN stops the database server"}
	case "KILL", "PURGE":
		return finding{cat: Caution, risk: 5, reason: fmt.Sprintf("%s %s ends sessions or deletes logs", tool, w[0])}
	}
	return finding{cat: Caution, risk: 3, reason: fmt.Sprintf("%s runs a statement forgebox does not recognize (%s)", tool, w[0])}
}

// sqlWords returns the first n words of a statement.
func sqlWords(stmt string, n int) []string {
	out := make([]string, 0, n)
	i := 0
	for len(out) < n && i < len(stmt) {
		for i < len(stmt) && !isWordByte(stmt[i]) {
			i++
		}
		start := i
		for i < len(stmt) && isWordByte(stmt[i]) {
			i++
		}
		if i > start {
			out = append(out, stmt[start:i])
		}
	}
	return out
}

// nextWord is the first of w from i on that is not one of skip.
func nextWord(w []string, i int, skip ...string) string {
	for ; i < len(w); i++ {
		keep := true
		for _, s := range skip {
			keep = keep && w[i] != s
		}
		if keep {
			return w[i]
		}
	}
	return ""
}

func isWordByte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_'
}

// wordIndex finds word in s as a whole word, or -1.
func wordIndex(s, word string) int {
	for off := 0; off < len(s); {
		i := strings.Index(s[off:], word)
		if i < 0 {
			return -1
		}
		i += off
		end := i + len(word)
		if (i == 0 || !isWordByte(s[i-1])) && (end == len(s) || !isWordByte(s[end])) {
			return i
		}
		off = end
	}
	return -1
}

func hasWord(s, word string) bool { return wordIndex(s, word) >= 0 }

// enclosed cuts a statement at the parenthesis that closes the one it
// starts in: the DELETE of WITH d AS (DELETE ...) SELECT ...
func enclosed(s string) string {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			if depth--; depth < 0 {
				return s[:i]
			}
		}
	}
	return s
}

package policy

import "strings"

// maxEnvSplit bounds env -S inside env -S.
const maxEnvSplit = 4

// peelEnv: env [OPTION]... [NAME=VALUE]... [COMMAND [ARG]...]. -S splits
// its string into words that env reads as its own arguments (options,
// assignments and the command); -C runs the command in another directory.
func peelEnv(j *judge, args []Arg) ([]Arg, bool) {
	for round := 0; ; round++ {
		var split []Arg
		splitting, help := false, false
		rest, bad := envOpts.skip(args, func(opt string, val Arg) {
			switch opt {
			case "-C", "--chdir":
				j.ctx = j.ctx.chdirTo(val)
			case "-S", "--split-string":
				words, ok := splitEnvString(val)
				if !ok {
					j.add(Caution, 5, "env -S is given a string forgebox cannot split (%s)", quote(val))
				}
				splitting = true
				split = append(split, words...)
			case "-P":
				if p := j.place(val); p != PlaceSystem && p != PlaceSystemRoot {
					j.add(Caution, 4, "env -P looks the program up in %s (%s)", val.Value, p)
				}
			case "--help", "--version", "--list-signal-handling":
				help = true
			}
		})
		j.unreadable("env", bad, after(rest, 1))
		if help && len(rest) == 0 {
			j.add(ReadOnly, 0, "env prints its usage, version or signal handling")
			return nil, true
		}
		if splitting {
			if round >= maxEnvSplit {
				j.add(Caution, 5, "env -S nests more than %d levels deep", maxEnvSplit)
				return nil, true
			}
			// The split words take the place of the -S option, before the
			// operands that followed it.
			args = append(append([]Arg{args[0]}, split...), rest...)
			continue
		}
		for len(rest) > 0 && rest[0].Static && isAssignment(rest[0].Value) {
			j.assign(rest[0].Value)
			rest = rest[1:]
		}
		if len(rest) == 0 {
			j.add(ReadOnly, 0, "env prints the environment")
			return nil, true
		}
		return rest, false
	}
}

// isAssignment reports whether env takes a word for NAME=VALUE.
func isAssignment(v string) bool {
	name, _, ok := strings.Cut(v, "=")
	return ok && name != "" && !strings.HasPrefix(name, "-")
}

// splitEnvString splits the string of env -S as env does: blanks separate
// words, single quotes keep everything but \\ and \', double quotes keep
// blanks and read escapes, \_ is a blank that separates (a space inside
// double quotes), \c ends the string, # at the start of a word starts a
// comment, and ${NAME} is the value of a variable (unknown here: the word
// becomes dynamic). ok is false when env would refuse the string (an
// unclosed quote, an unknown escape) or its value is computed at run time.
func splitEnvString(s Arg) (words []Arg, ok bool) {
	ok = s.Static
	var b strings.Builder
	open, dynamic := false, !s.Static
	flush := func() {
		if open {
			w := b.String()
			if dynamic {
				words = append(words, Arg{Value: w, IfEmpty: ""})
			} else {
				words = append(words, staticArg(w))
			}
		}
		b.Reset()
		open, dynamic = false, !s.Static
	}
	v := s.Value
	quote := byte(0)
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
				continue
			}
			if c == '\\' && i+1 < len(v) && (v[i+1] == '\\' || v[i+1] == '\'') {
				i++
				c = v[i]
			}
			b.WriteByte(c)
		case c == '\\':
			if i+1 >= len(v) {
				return append(words, staticArg(v)), false
			}
			i++
			switch v[i] {
			case 'c':
				if quote == 0 {
					flush()
					return words, ok
				}
				ok = false
				continue
			case '_':
				if quote == 0 {
					flush()
					continue
				}
				b.WriteByte(' ')
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'f':
				b.WriteByte('\f')
			case 'v':
				b.WriteByte('\v')
			case '\\', '"', '\'', '#', '$', ' ':
				b.WriteByte(v[i])
			default:
				ok = false
				b.WriteByte(v[i])
			}
			open = true
		case c == '$':
			open, dynamic = true, true
			b.WriteByte(c)
		case quote == '"':
			if c == '"' {
				quote = 0
				continue
			}
			b.WriteByte(c)
		case c == '\'' || c == '"':
			quote, open = c, true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			flush()
		case c == '#' && !open:
			flush()
			return words, ok
		default:
			open = true
			b.WriteByte(c)
		}
	}
	if quote != 0 {
		ok = false
	}
	flush()
	return words, ok
}

package policy

import (
	"strings"
)

// knowledge returns what forgebox knows of a program, or nil. Each entry
// adds at least one finding: a command the knowledge names is never left
// without a verdict.
func knowledge(name string) func(*judge, *Command) {
	if k := nestedKnowledge(name); k != nil {
		return k
	}
	if name == "git" {
		return judgeGit
	}
	if k := fsKnowledge(name); k != nil {
		return k
	}
	if k := systemKnowledge(name); k != nil {
		return k
	}
	if k := packageKnowledge(name); k != nil {
		return k
	}
	if k := dbKnowledge(name); k != nil {
		return k
	}
	if k := networkKnowledge(name); k != nil {
		return k
	}
	return toolKnowledge(name)
}

// flags describes a program's options well enough to tell them from its
// operands: the short options that take a value, the long options that
// take one (space separated, with a space on each side), and whether the
// options end at the first operand (POSIX, programs with subcommands)
// rather than following GNU's permutation (rm file -rf).
type flags struct {
	short string
	long  string
	stop  bool
}

// option is one option as given: short is the letter of -f, long the
// name of --force; val is its value, if it takes one.
type option struct {
	short byte
	long  string
	val   string
	// dynamic is true when the value is computed at run time.
	dynamic bool
}

// scanned is a command's arguments split into options and operands.
type scanned struct {
	opts []option
	ops  []Arg
	// dd is the index in ops of the first operand after "--", or -1.
	dd int
}

// scan splits args into options and operands. A word computed at run time
// is an operand: forgebox cannot tell what it holds.
func scan(args []Arg, f flags) scanned {
	s := scanned{dd: -1}
	for i := 0; i < len(args); i++ {
		a := args[i]
		v := a.Value
		if s.dd >= 0 || !a.Static || len(v) < 2 || v[0] != '-' || f.stop && len(s.ops) > 0 {
			s.ops = append(s.ops, a)
			continue
		}
		if v == "--" {
			s.dd = len(s.ops)
			continue
		}
		if v[1] == '-' {
			name, val, has := strings.Cut(v[2:], "=")
			dyn := false
			if !has && strings.Contains(f.long, " "+name+" ") && i+1 < len(args) {
				i++
				val, dyn = args[i].Value, !args[i].Static
			}
			s.opts = append(s.opts, option{long: name, val: val, dynamic: dyn})
			continue
		}
		for k := 1; k < len(v); k++ {
			ch := v[k]
			if strings.IndexByte(f.short, ch) >= 0 {
				val, dyn := v[k+1:], false
				if val == "" && i+1 < len(args) {
					i++
					val, dyn = args[i].Value, !args[i].Static
				}
				s.opts = append(s.opts, option{short: ch, val: val, dynamic: dyn})
				break
			}
			s.opts = append(s.opts, option{short: ch})
		}
	}
	return s
}

// is reports whether o is one of names ("-f", "--force").
func (o option) is(name string) bool {
	if len(name) == 2 && name[0] == '-' && name[1] != '-' {
		return o.short == name[1]
	}
	return o.short == 0 && len(name) > 2 && name[2:] == o.long
}

// has reports whether any of the options was given.
func (s *scanned) has(names ...string) bool {
	for _, o := range s.opts {
		for _, n := range names {
			if o.is(n) {
				return true
			}
		}
	}
	return false
}

// val returns the value of the last of the options given.
func (s *scanned) val(names ...string) (string, bool) {
	for i := len(s.opts) - 1; i >= 0; i-- {
		for _, n := range names {
			if s.opts[i].is(n) {
				return s.opts[i].val, true
			}
		}
	}
	return "", false
}

// asRoot reports whether a wrapper runs the command as another user.
func asRoot(c *Command) bool {
	for _, w := range c.Wrappers {
		switch w {
		case "sudo", "doas", "pkexec", "su", "runuser":
			return true
		}
	}
	return false
}

// homeArg makes an Arg of a path a program names, with ~ expanded as the
// shell would have.
func homeArg(j *judge, p string) Arg {
	if h := j.ctx.Home; h != "" {
		if p == "~" {
			p = h
		} else if rest, ok := strings.CutPrefix(p, "~/"); ok {
			p = h + "/" + rest
		}
	}
	return staticArg(p)
}

// abbrev reports whether the long option full was given whole or as a
// prefix at least min letters long: getopt_long takes any unambiguous
// prefix, so rm --rec is rm --recursive.
func (s *scanned) abbrev(full string, min int) bool {
	for _, o := range s.opts {
		if o.short == 0 && len(o.long) >= min && strings.HasPrefix(full, o.long) {
			return true
		}
	}
	return false
}

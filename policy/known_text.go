package policy

import (
	"strings"
)

var (
	awkSystem  = lazyRE(`\bsystem\s*\(\s*("(?:[^"\\]|\\.)*"\s*\))?`)
	awkPipe    = lazyRE(`\|\s*(?:getline|")|"\s*\|\s*getline|\|&`)
	awkPrintTo = lazyRE(`\bprintf?\b[^;{}]*?>>?\s*"((?:[^"\\]|\\.)*)"`)
)

// judgeAwk reads the program for the three ways awk reaches outside:
// system(), pipes to and from commands, and print > "file".
func judgeAwk(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "fvFilE", long: " file assign field-separator include load exec source "})
	if f, ok := s.val("-f", "--file", "-E", "--exec"); ok {
		if p := j.place(staticArg(f)); p == PlaceWorkspace || p == PlaceTemp {
			j.add(SafeWrite, 2, "%s runs the program in %s", c.Name, f)
		} else {
			j.add(Caution, 3, "%s runs the program in %s (%s)", c.Name, f, phrase(p))
		}
		return
	}
	if len(s.ops) == 0 {
		j.add(ReadOnly, 0, "%s without a program does nothing", c.Name)
		return
	}
	prog := s.ops[0]
	j.add(ReadOnly, 0, "%s only reads and prints", c.Name)
	if !prog.Static {
		j.add(Caution, 4, "%s runs a program computed at run time", c.Name)
	}
	code := prog.Value
	for _, m := range awkSystem.FindAllStringSubmatchIndex(code, 16) {
		if m[2] < 0 {
			j.add(Caution, 5, "%s runs shell commands it builds at run time (system)", c.Name)
			continue
		}
		lit := strings.TrimRight(code[m[2]:m[3]], " \t)")
		j.shell(unescapeDouble(lit[1:len(lit)-1]), prog.Static, c.Name+" system()")
	}
	if awkPipe.MatchString(code) {
		j.add(Caution, 5, "%s pipes to or from a shell command", c.Name)
	}
	for _, m := range awkPrintTo.FindAllStringSubmatch(code, 16) {
		j.write(homeArg(j, m[1]), c.Name+" print >")
	}
	if v, ok := s.val("-i", "--include"); ok && v == "inplace" {
		for _, f := range s.ops[1:] {
			j.write(f, c.Name+" -i inplace")
		}
	}
}

var (
	// sedExec finds the e command and the e flag of s///, which run the
	// pattern space as a shell command.
	sedExec = lazyRE(`(?:^|[;\n{}])\s*(?:\d+|\$|/[^/]*/)?\s*e(?:\s|;|$)|s([/|#,:])(?:[^/|#,:\\]|\\.)*[/|#,:](?:[^/|#,:\\]|\\.)*[/|#,:][gpiImM0-9]*e`)
	// sedWrite finds the w command and the w flag of s///.
	sedWrite = lazyRE(`(?:(?:^|[;\n{}])\s*(?:\d+|\$|/[^/]*/)?\s*|s/[^/]*/[^/]*/[gpiImMe0-9]*)w\s+([^;\n]+)`)
)

// judgeSed: sed -i edits its files in place; the script's e command runs
// shell commands and its w command writes files.
func judgeSed(j *judge, c *Command) {
	var scripts []Arg
	var ops []Arg
	inPlace, fromFile := false, false
	args := c.Rest()
	for i := 0; i < len(args); i++ {
		a := args[i]
		v := a.Value
		if !a.Static || len(v) < 2 || v[0] != '-' {
			ops = append(ops, a)
			continue
		}
		if strings.HasPrefix(v, "--") {
			name, val, has := strings.Cut(v[2:], "=")
			switch {
			case strings.HasPrefix("in-place", name) && len(name) >= 2:
				inPlace = true
			case name == "expression" || name == "file":
				if !has && i+1 < len(args) {
					i++
					val = args[i].Value
				}
				if name == "file" {
					fromFile = true
				} else {
					scripts = append(scripts, Arg{Value: val, Static: a.Static})
				}
			case name == "line-length":
				if !has {
					i++
				}
			}
			continue
		}
	cluster:
		for k := 1; k < len(v); k++ {
			switch v[k] {
			case 'i':
				// -i takes the rest of the cluster as a suffix: -ie is not -i -e.
				inPlace = true
				if k == len(v)-1 && i+1 < len(args) && args[i+1].Static && args[i+1].Value == "" {
					i++ // BSD sed -i ''
				}
				break cluster
			case 'e', 'f', 'l':
				val := v[k+1:]
				if val == "" && i+1 < len(args) {
					i++
					val = args[i].Value
				}
				switch v[k] {
				case 'e':
					scripts = append(scripts, Arg{Value: val, Static: args[i].Static})
				case 'f':
					fromFile = true
				}
				break cluster
			}
		}
	}
	if len(scripts) == 0 && !fromFile && len(ops) > 0 {
		scripts, ops = ops[:1], ops[1:]
	}
	if inPlace {
		j.add(SafeWrite, 1, "sed -i edits files in place")
		for _, a := range ops {
			j.write(a, "sed -i")
		}
	} else {
		j.add(ReadOnly, 0, "sed prints its edits")
	}
	for _, s := range scripts {
		if !s.Static {
			j.add(Caution, 4, "sed runs a script computed at run time")
		}
		if sedExec.MatchString(s.Value) {
			j.add(Caution, 5, "the sed script runs shell commands (e)")
		}
		for _, m := range sedWrite.FindAllStringSubmatch(s.Value, 8) {
			if f := strings.TrimSpace(m[1]); f != "" && f != "/dev/stdout" && f != "/dev/stderr" {
				j.write(homeArg(j, f), "sed w")
			}
		}
	}
}

package policy

import (
	"strings"
)

// nestedKnowledge covers the programs that run code given as text: shells,
// eval and source, and interpreters with inline code.
func nestedKnowledge(name string) func(*judge, *Command) {
	if shells[name] || name == "busybox" {
		return judgeShell
	}
	switch name {
	case "eval":
		return judgeEval
	case "source", ".":
		return judgeSource
	case "alias":
		return judgeAlias
	case "trap":
		return judgeTrap
	}
	if lang := interpreter(name); lang != "" {
		return judgeInterpreter
	}
	return nil
}

var versioned = lazyRE(`^(python|pypy|ruby|perl|php|lua|node)[0-9.]*$`)

// interpreter names the language a program interprets, or "".
func interpreter(name string) string {
	switch name {
	case "nodejs", "deno", "bun":
		return "node"
	case "Rscript":
		return "R"
	case "osascript":
		return "applescript"
	}
	if !hasAnyPrefix(name, "python", "pypy", "ruby", "perl", "php", "lua", "node") {
		return "" // most names: spare them the regular expression
	}
	if m := versioned.FindStringSubmatch(name); m != nil {
		if m[1] == "pypy" {
			return "python"
		}
		return m[1]
	}
	return ""
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// downloaders fetch from the network; piped into a shell they run remote
// code.
var downloaders = map[string]bool{"curl": true, "wget": true, "fetch": true, "aria2c": true, "http": true,
	"https": true, "xh": true, "lwp-request": true, "GET": true, "lynx": true, "nc": true, "ncat": true, "socat": true}

// fetched names the downloader whose output a word holds ($(curl ...),
// <(wget -O- ...)), or "".
func fetched(a Arg) string {
	for _, r := range a.Runs {
		if downloaders[r] {
			return r
		}
	}
	return ""
}

// fetchedAny is fetched over several words.
func fetchedAny(args []Arg) string {
	for _, a := range args {
		if d := fetched(a); d != "" {
			return d
		}
	}
	return ""
}

// judgeShell: sh -c CODE, sh SCRIPT, sh reading code from stdin, or an
// interactive shell.
func judgeShell(j *judge, c *Command) {
	name := c.Name
	args := c.Rest()
	if name == "busybox" {
		if len(args) > 0 && (args[0].Value == "--list" || args[0].Value == "--list-full" || args[0].Value == "--help") {
			j.add(ReadOnly, 0, "busybox %s lists its applets", args[0].Value)
			return
		}
		if len(args) == 0 || args[0].Value != "sh" && args[0].Value != "ash" {
			j.add(Caution, 3, "busybox runs one of its applets")
			if len(args) > 0 {
				j.argv(args, "busybox")
			}
			return
		}
		args = args[1:]
	}
	code, hasCode, readsStdin := Arg{}, false, false
	i := 0
	for i < len(args) {
		a := args[i]
		v := a.Value
		if !a.Static || !strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "+") || v == "-" || v == "--" {
			if v == "-" || v == "--" {
				readsStdin = v == "-"
				i++
			}
			break
		}
		i++
		if strings.HasPrefix(v, "--") {
			if v == "--rcfile" || v == "--init-file" {
				i++
			}
			if v == "--command" && name == "fish" && i < len(args) {
				code, hasCode = args[i], true
				i++
			}
			continue
		}
		for _, ch := range v[1:] {
			switch ch {
			case 'c':
				hasCode = true
			case 's':
				readsStdin = true
			case 'o', 'O':
				i++ // -o pipefail
			}
		}
		if hasCode && code.Value == "" && i < len(args) {
			code = args[i]
			i++
		}
	}
	how := name + " -c"
	switch {
	case hasCode:
		if d := fetched(code); d != "" {
			j.add(Dangerous, 8, "%s runs code downloaded by %s: remote code execution", name, d)
		}
		j.shell(code.Value, code.Static, how)
		return
	case i < len(args) && !readsStdin:
		j.script(name, args[i])
		return
	}
	j.stdinCode(c, "shell", name)
}

// script judges a shell or interpreter running a script file: one from
// the workspace is the project's own, one fetched by $(curl ...) or
// <(wget ...) is remote code.
func (j *judge) script(name string, s Arg) {
	if d := fetched(s); d != "" {
		j.add(Dangerous, 8, "%s runs a script downloaded by %s: remote code execution", name, d)
		return
	}
	switch p := j.place(s); {
	case p == PlaceWorkspace || p == PlaceTemp:
		j.projectCode("%s runs the script %s", name, s.Value)
	case !s.Static:
		j.add(Caution, 5, "%s runs a script whose name is computed at run time", name)
	default:
		j.projectCode("%s runs the script %s (%s)", name, s.Value, p)
	}
}

// stdinCode judges a shell or interpreter that reads its program from
// stdin: a here-document, the output of the previous pipeline stage, or a
// person at the terminal.
func (j *judge) stdinCode(c *Command, lang, name string) {
	in := c.Stdin
	switch {
	case in.HasDoc:
		if lang == "shell" {
			j.shell(in.Doc, in.DocStatic, name+" reading a here-document")
		} else {
			inlineCode(j, lang, in.Doc, in.DocStatic)
		}
	case in.From != nil && downloaders[in.From.Name]:
		j.add(Dangerous, 8, "%s runs code downloaded by %s: remote code execution", name, in.From.Name)
	case in.From != nil && (in.From.Name == "echo" || in.From.Name == "printf") && allStatic(in.From.Args):
		text := joinArgs(in.From.Rest())
		if lang == "shell" {
			j.shell(text, true, name+" reading "+in.From.Name)
		} else {
			inlineCode(j, lang, text, true)
		}
	case in.From != nil:
		j.add(Caution, 5, "%s runs code it reads from %s", name, in.From.Name)
	case hasInputRedir(c):
		j.add(Caution, 4, "%s runs code from a file", name)
	default:
		j.add(Interactive, 2, "interactive: %s without a program waits for input at the terminal", name)
	}
}

func hasInputRedir(c *Command) bool {
	for _, r := range c.Redirs {
		if r.Op == "<" {
			return true
		}
	}
	return false
}

// judgeEval: eval joins its arguments and runs them as shell code.
func judgeEval(j *judge, c *Command) {
	args := c.Rest()
	if len(args) == 0 {
		j.add(ReadOnly, 0, "eval without arguments does nothing")
		return
	}
	if d := fetchedAny(args); d != "" {
		j.add(Dangerous, 8, "eval runs code downloaded by %s: remote code execution", d)
	}
	j.shell(joinArgs(args), allStatic(args), "eval")
}

// judgeAlias: an alias's value is code that runs where the alias is used.
func judgeAlias(j *judge, c *Command) {
	j.add(ReadOnly, 0, "alias defines or lists aliases")
	for _, a := range c.Rest() {
		if name, code, ok := strings.Cut(a.Value, "="); ok && !strings.HasPrefix(name, "-") {
			j.shell(code, a.Static, "alias "+name)
		}
	}
}

// judgeTrap: trap CODE SIGNALS runs CODE when a signal (or EXIT) arrives.
func judgeTrap(j *judge, c *Command) {
	args := c.Rest()
	if len(args) > 0 && (args[0].Value == "--" || args[0].Value == "-p" || args[0].Value == "-l") {
		args = args[1:]
	}
	j.add(ReadOnly, 0, "trap sets or lists signal handlers")
	if len(args) >= 2 && args[0].Value != "-" && args[0].Value != "" {
		j.shell(args[0].Value, args[0].Static, "trap")
	}
}

// judgeSource: source FILE runs a file in the current shell.
func judgeSource(j *judge, c *Command) {
	args := c.Rest()
	if len(args) == 0 {
		j.add(Caution, 3, "%s without a file", c.Name)
		return
	}
	f := args[0]
	if d := fetched(f); d != "" {
		j.add(Dangerous, 8, "%s runs code downloaded by %s: remote code execution", c.Name, d)
		return
	}
	if strings.HasPrefix(f.Value, "<(") || strings.HasPrefix(f.Value, "/dev/fd/") || strings.HasPrefix(f.Value, "/dev/stdin") {
		j.add(Caution, 5, "%s runs code produced by another command", c.Name)
		return
	}
	switch p := j.place(f); p {
	case PlaceWorkspace, PlaceTemp:
		j.projectCode("%s runs %s in the shell", c.Name, f.Value)
	case PlaceUnknown:
		j.add(Caution, 5, "%s runs a file whose name is computed at run time", c.Name)
	default:
		j.projectCode("%s runs %s (%s) in the shell", c.Name, f.Value, p)
	}
}

// inlineFlags are the options that give an interpreter its program.
var inlineFlags = map[string][]string{
	"python": {"-c"}, "node": {"-e", "--eval", "-p", "--print"}, "perl": {"-e", "-E"}, "ruby": {"-e"},
	"php": {"-r"}, "lua": {"-e"}, "R": {"-e"}, "applescript": {"-e"},
}

// judgeInterpreter: python -c CODE, node -e CODE, a script, a REPL.
func judgeInterpreter(j *judge, c *Command) {
	name := c.Name
	lang := interpreter(name)
	args := c.Rest()
	if name == "deno" || name == "bun" {
		if len(args) > 0 && args[0].Value == "eval" {
			args = append([]Arg{staticArg("-e")}, args[1:]...)
		} else if len(args) > 0 && (args[0].Value == "run" || args[0].Value == "x") {
			args = args[1:]
		}
	}
	var code []Arg
	script := -1
	for i := 0; i < len(args); i++ {
		a := args[i]
		v := a.Value
		if isInlineFlag(lang, v) {
			if i+1 < len(args) {
				code = append(code, args[i+1])
				i++
			}
			continue
		}
		// -c'code' and -e'code' glued to the flag.
		if f := gluedInline(lang, v); f != "" {
			code = append(code, Arg{Value: v[len(f):], Static: a.Static, IfEmpty: a.IfEmpty})
			continue
		}
		if lang == "python" && v == "-m" {
			if i+1 < len(args) {
				j.pythonModule(args[i+1:])
			}
			return
		}
		if v == "-" {
			break
		}
		if strings.HasPrefix(v, "-") && a.Static {
			continue
		}
		script = i
		break
	}
	switch {
	case len(code) > 0:
		for _, a := range code {
			if d := fetched(a); d != "" {
				j.add(Dangerous, 8, "%s runs code downloaded by %s: remote code execution", name, d)
			}
			inlineCode(j, lang, a.Value, a.Static)
		}
	case script >= 0:
		j.script(name, args[script])
	default:
		j.stdinCode(c, lang, name)
	}
}

func isInlineFlag(lang, v string) bool {
	for _, f := range inlineFlags[lang] {
		if v == f {
			return true
		}
	}
	return false
}

func gluedInline(lang, v string) string {
	for _, f := range inlineFlags[lang] {
		if len(f) == 2 && strings.HasPrefix(v, f) && len(v) > 2 {
			return f
		}
	}
	return ""
}

// pythonModule judges python -m MODULE ARGS.
func (j *judge) pythonModule(args []Arg) {
	switch args[0].Value {
	case "pip":
		j.argv(append([]Arg{staticArg("pip")}, args[1:]...), "python -m pip")
	case "http.server":
		j.add(Caution, 4, "python -m http.server serves the current directory over HTTP")
	case "venv", "pytest", "unittest", "json.tool", "compileall", "py_compile", "mypy", "black", "ruff", "pyflakes", "doctest", "pydoc", "timeit", "cProfile", "pdb":
		j.add(SafeWrite, 2, "python -m %s", args[0].Value)
	default:
		j.add(Caution, 3, "python -m %s runs a module forgebox does not know", args[0].Value)
	}
}

package policy

import (
	"strings"
)

// Limits of the inline-code judge: past them the code is asked about.
const (
	maxInlineBytes = 64 << 10
	// maxCalls bounds the calls whose arguments are read, so that code
	// full of call sites stays cheap to judge.
	maxCalls = 64
	maxArgs  = 8
)

// inlineCode judges code given to an interpreter on its command line or
// stdin (python -c, node -e, perl -e, a here-document fed to python3).
// It reads the calls the code names: commands it spawns are judged as
// shell code or argv, deletions as the rm they amount to, writes as
// writes. Code that hides what it calls is asked about. It reads the code
// in one pass, without regular expressions over the whole of it, so that
// judging stays linear and fast.
func inlineCode(j *judge, lang, code string, static bool) {
	j.reach(Caution, 3, "runs inline %s code: forgebox reads the calls it names, not what the libraries it calls do", lang)
	if !static {
		j.add(Caution, 5, "runs %s code computed at run time", lang)
	}
	if len(code) > maxInlineBytes {
		j.add(Caution, 5, "the inline %s code is longer than %d bytes; only its start is judged", lang, maxInlineBytes)
		code = code[:maxInlineBytes]
	}
	if lang == "applescript" {
		inlineAppleScript(j, code)
		return
	}
	l := languageOf(lang)
	if l == nil {
		return
	}
	var aliases map[string]string
	network, dynamic := "", ""
	if lang == "python" {
		aliases, network = pythonImports(code)
	}
	spawner := strings.Contains(code, "child_process")
	forks, chars, n := false, 0, 0
	eachCall(code, l.bare, func(name string, at int, paren bool) bool {
		name = resolve(name, aliases)
		a := l.action(name, code[at:], spawner)
		switch a {
		case actNone:
			return true
		case actNetwork:
			network = name
			return true
		case actDynamic:
			dynamic = name
			return true
		case actChar:
			if chars++; chars > 2 {
				dynamic = name + " chains"
			}
			return true
		case actFork:
			forks = true
			return true
		case actShell, actArgv, actExec, actRun:
			forks = true
		}
		if n++; n > maxCalls {
			j.add(Caution, 5, "the %s code makes more than %d calls forgebox reads", lang, maxCalls)
			return false
		}
		args, end := callArgs(code, at, lang, paren)
		j.inlineCall(lang, name, a, args, code[end:])
		return true
	})
	if strings.Count(code, `\x`) >= 8 {
		dynamic = `\x escapes`
	}
	if network != "" {
		j.reach(Caution, 3, "the %s code uses the network (%s)", lang, network)
	}
	if dynamic != "" {
		j.add(Caution, 5, "obfuscated or dynamic %s code (%s)", lang, dynamic)
	}
	if forks && anyMatch(l.loops, code) || anyMatch(l.bombs, code) {
		j.add(Forbidden, 10, "a fork bomb: the %s code forks in an endless loop", lang)
	}
	if l.backticks {
		for _, cmd := range shellLiterals(code, lang) {
			if n++; n > maxCalls {
				break
			}
			j.inlineCall(lang, "`...`", actShell, []litArg{cmd}, "")
		}
	}
}

// act is what a call does.
type act int

const (
	actNone     act = iota
	actShell        // a string is shell code, a list an argv
	actArgv         // a program and, in a list, its arguments
	actExec         // exec family: a path, then the full argv as a list or as strings
	actRun          // perl and ruby system: one string is shell code, several an argv
	actRmTree       // removes a tree: rm -rf
	actRmFile       // removes a file: rm -f
	actRmDir        // removes an empty directory
	actWrite        // writes the file it names
	actOpen         // opens the file it names, writing when the mode says
	actPath         // Path("..."), judged by the method called on it
	actPerlOpen     // perl's open: a file or a pipe to a command
	actNetwork      // talks to the network
	actDynamic      // runs code it builds or decodes
	actChar         // builds a character from its code: chr(114)
	actFork         // forks the interpreter
)

// language is what the judge knows of one interpreter's code.
type language struct {
	bare      bool // calls need no parentheses (perl, ruby)
	backticks bool // `cmd` runs a command
	// action says what a call does; rest is the code where its arguments
	// start, spawner whether the code loads child_process.
	action func(name, rest string, spawner bool) act
	// loops find an endless loop: with a fork in the code, a fork bomb.
	// bombs find fork bombs on their own. Each starts with a literal, so
	// that the search skips to it.
	loops, bombs []*lazyRegexp
}

func anyMatch(res []*lazyRegexp, code string) bool {
	for _, re := range res {
		if re.MatchString(code) {
			return true
		}
	}
	return false
}

// eachCall finds the call sites of code in one pass: a name, dotted
// (os.system) or with :: (File::Path::rmtree), followed by an opening
// parenthesis or, where the language calls without one, by a blank. fn
// gets the name, where the arguments start and whether a parenthesis
// opens them; it returns false to stop.
func eachCall(code string, bare bool, fn func(name string, at int, paren bool) bool) {
	for i := 0; i < len(code); {
		if !identStart(code[i]) || i > 0 && identByte(code[i-1]) {
			i++
			continue
		}
		start, end := i, i
		for {
			for end < len(code) && identByte(code[end]) {
				end++
			}
			k, sep := skipBlank(code, end), 0
			switch {
			case k < len(code) && code[k] == '.':
				sep = 1
			case bare && strings.HasPrefix(code[k:], "::"):
				sep = 2
			}
			m := skipBlank(code, k+sep)
			if sep == 0 || m >= len(code) || !identStart(code[m]) {
				break
			}
			end = m
		}
		name := code[start:end]
		if strings.ContainsAny(name, " \t") {
			name = strings.Join(strings.FieldsFunc(name, func(r rune) bool { return r == ' ' || r == '\t' }), "")
		}
		k := skipBlank(code, end)
		switch {
		case k < len(code) && code[k] == '(':
			if !fn(name, k+1, true) {
				return
			}
		case bare && k > end && k < len(code) && code[k] != '=':
			if !fn(name, k, false) {
				return
			}
		}
		i = end
	}
}

func identStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$'
}

func identByte(c byte) bool { return identStart(c) || c >= '0' && c <= '9' }

func skipBlank(code string, i int) int {
	for i < len(code) && (code[i] == ' ' || code[i] == '\t') {
		i++
	}
	return i
}

// inlineCall judges one call by what it does with its arguments. after
// is the code that follows the call, for Path("x").unlink().
func (j *judge) inlineCall(lang, name string, a act, args []litArg, after string) {
	how := lang + " " + name
	switch a {
	case actShell, actRun:
		switch {
		case len(args) == 0 || args[0].kind == litOther:
			j.add(Caution, 5, "%s runs a command computed at run time", how)
		case args[0].kind == litList:
			j.argv(homeArgs(j, args[0].list), how)
		case a == actRun && len(args) > 1 && allStrings(args):
			j.argv(homeArgs(j, stringsOf(args)), how)
		default:
			j.shell(args[0].s, true, how)
		}
	case actArgv:
		switch {
		case len(args) == 0 || args[0].kind == litOther:
			j.add(Caution, 5, "%s runs a program computed at run time", how)
		case args[0].kind == litList:
			j.argv(homeArgs(j, args[0].list), how)
		case len(args) > 1 && args[1].kind == litList:
			j.argv(homeArgs(j, append([]string{args[0].s}, args[1].list...)), how)
		case len(args) > 1 && args[1].kind == litOther && args[1].name != "shell":
			j.add(Caution, 5, "%s runs %s with arguments computed at run time", how, args[0].s)
			j.argv(homeArgs(j, []string{args[0].s}), how)
		default:
			j.argv(homeArgs(j, []string{args[0].s}), how)
		}
	case actExec:
		var strs []string
		for _, x := range args {
			switch x.kind {
			case litList:
				j.argv(homeArgs(j, x.list), how)
				return
			case litString:
				strs = append(strs, x.s)
			}
		}
		switch {
		case len(strs) > 1:
			j.argv(homeArgs(j, strs[1:]), how)
		case len(strs) == 1:
			j.argv(homeArgs(j, strs), how)
		default:
			j.add(Caution, 5, "%s runs a program computed at run time", how)
		}
	case actRmTree, actRmFile, actRmDir:
		j.inlineRemove(how, a, args)
	case actWrite:
		j.inlineWrite(how, args)
	case actOpen:
		mode := ""
		for i, x := range args {
			if x.name == "mode" || x.name == "" && i == 1 {
				mode = x.s
			}
		}
		if strings.ContainsAny(mode, "wax+") {
			j.inlineWrite(how, args)
		}
	case actPath:
		after = strings.TrimLeft(after, " \t)")
		method := ""
		if strings.HasPrefix(after, ".") {
			method = strings.TrimLeft(after[1:], " \t")
			if i := strings.IndexAny(method, "( \t"); i >= 0 {
				method = method[:i]
			}
		}
		switch method {
		case "unlink":
			j.inlineRemove(how+".unlink", actRmFile, args)
		case "rmdir":
			j.inlineRemove(how+".rmdir", actRmDir, args)
		case "write_text", "write_bytes", "touch", "mkdir", "symlink_to", "hardlink_to":
			j.inlineWrite(how+"."+method, args)
		}
	case actPerlOpen:
		j.perlOpen(how, args)
	}
}

func (j *judge) inlineRemove(how string, a act, args []litArg) {
	flags := "-rf"
	switch a {
	case actRmFile:
		flags = "-f"
	case actRmDir:
		flags = ""
	}
	judged := false
	for _, x := range args {
		var paths []string
		switch x.kind {
		case litString:
			if strings.HasPrefix(x.s, "-") {
				continue // shelljs: rm('-rf', path)
			}
			paths = []string{x.s}
		case litList:
			paths = x.list
		default:
			if !judged && x.name == "" {
				j.add(Caution, 5, "%s deletes a path computed at run time", how)
				judged = true
			}
			continue
		}
		for _, p := range paths {
			argv := []Arg{staticArg("rm"), staticArg(flags), homeArg(j, p)}
			if a == actRmDir {
				argv = []Arg{staticArg("rmdir"), homeArg(j, p)}
			}
			j.argv(argv, how)
		}
		judged = true
		if x.kind == litString {
			break
		}
	}
	if !judged {
		j.add(Caution, 5, "%s deletes a path computed at run time", how)
	}
}

func (j *judge) inlineWrite(how string, args []litArg) {
	if len(args) == 0 || args[0].kind != litString {
		j.write(Arg{Value: "(a path computed at run time)"}, how)
		return
	}
	j.write(homeArg(j, args[0].s), how)
}

// perlOpen: open(FH, "cmd |"), open(FH, "-|", "cmd", ...) and
// open(FH, ">file") in their two- and three-argument forms.
func (j *judge) perlOpen(how string, args []litArg) {
	if len(args) < 2 || args[1].kind != litString {
		return
	}
	mode := strings.TrimSpace(args[1].s)
	rest := args[2:]
	switch {
	case mode == "-|" || mode == "|-":
		if len(rest) == 0 || rest[0].kind != litString {
			j.add(Caution, 5, "%s runs a command computed at run time", how)
			return
		}
		if len(rest) > 1 && allStrings(rest) {
			j.argv(homeArgs(j, stringsOf(rest)), how)
			return
		}
		j.shell(rest[0].s, true, how)
	case len(rest) == 0 && (strings.HasPrefix(mode, "|") || strings.HasSuffix(mode, "|")):
		j.shell(strings.Trim(mode, "| \t"), true, how)
	case len(rest) == 0 && (strings.HasPrefix(mode, ">") || strings.HasPrefix(mode, "+<") || strings.HasPrefix(mode, "+>")):
		j.write(homeArg(j, strings.TrimSpace(strings.TrimLeft(mode, "+<>"))), how)
	case strings.Contains(mode, ">") || strings.HasPrefix(mode, "+"):
		if len(rest) > 0 && rest[0].kind == litString {
			j.write(homeArg(j, rest[0].s), how)
		}
	}
}

func inlineAppleScript(j *judge, code string) {
	j.add(Caution, 4, "runs AppleScript, which can control other applications")
	for off, n := 0, 0; ; n++ {
		i := strings.Index(code[off:], "shell script")
		if i < 0 {
			return
		}
		i += off
		off = i + len("shell script")
		if !strings.HasSuffix(strings.TrimRight(code[:i], " \t"), "do") {
			continue
		}
		if n == maxCalls {
			j.add(Caution, 5, "the AppleScript runs more shell scripts than forgebox reads")
			return
		}
		args, _ := callArgs(code, off, "applescript", false)
		if len(args) == 0 || args[0].kind != litString {
			j.add(Caution, 5, "the AppleScript runs a shell script computed at run time")
			continue
		}
		j.shell(args[0].s, true, "osascript do shell script")
	}
}

func homeArgs(j *judge, vs []string) []Arg {
	out := make([]Arg, len(vs))
	for i, v := range vs {
		out[i] = homeArg(j, v)
	}
	return out
}

func allStrings(args []litArg) bool {
	for _, a := range args {
		if a.kind != litString {
			return false
		}
	}
	return true
}

func stringsOf(args []litArg) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a.s
	}
	return out
}

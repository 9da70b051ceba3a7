package policy

import (
	"regexp"
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
	j.add(SafeWrite, 2, "runs inline %s code", lang)
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
		j.add(Caution, 3, "the %s code uses the network (%s)", lang, network)
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
	loops, bombs []*regexp.Regexp
}

func anyMatch(res []*regexp.Regexp, code string) bool {
	for _, re := range res {
		if re.MatchString(code) {
			return true
		}
	}
	return false
}

var (
	cLoops = []*regexp.Regexp{regexp.MustCompile(`while\s*\(\s*(?:true|1)\s*\)`), regexp.MustCompile(`for\s*\(\s*;\s*;\s*\)`)}

	pyLang   = language{action: pythonAction, loops: []*regexp.Regexp{regexp.MustCompile(`while\s*\(?\s*(?:True|1)\s*\)?\s*:`)}}
	nodeLang = language{action: nodeAction, loops: cLoops}
	perlLang = language{bare: true, backticks: true, action: perlAction, bombs: []*regexp.Regexp{
		regexp.MustCompile(`fork\s*(?:\(\s*\))?\s*(?:while|until)\b`), regexp.MustCompile(`while\s*\(\s*1\s*\)\s*\{\s*fork\b`),
		regexp.MustCompile(`1\s+while\s+fork\b`)}}
	rubyLang = language{bare: true, backticks: true, action: rubyAction, loops: []*regexp.Regexp{
		regexp.MustCompile(`loop\s*(?:\{|do\b)`), regexp.MustCompile(`while\s+true\b`)},
		bombs: []*regexp.Regexp{regexp.MustCompile(`fork\s+(?:while|until)\b`)}}
	phpLang = language{backticks: true, action: phpAction, loops: cLoops}
	luaLang = language{action: luaAction, loops: []*regexp.Regexp{regexp.MustCompile(`while\s+true\s+do`)}}
	rLang   = language{action: rAction, loops: []*regexp.Regexp{regexp.MustCompile(`repeat\s*\{`), regexp.MustCompile(`while\s*\(\s*TRUE\s*\)`)}}
)

func languageOf(lang string) *language {
	switch lang {
	case "python":
		return &pyLang
	case "node":
		return &nodeLang
	case "perl":
		return &perlLang
	case "ruby":
		return &rubyLang
	case "php":
		return &phpLang
	case "lua":
		return &luaLang
	case "R":
		return &rLang
	}
	return nil
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

// literalPrefix is the string literal rest starts with, for the few
// actions that look at an argument: require('http').
func literalPrefix(rest, lang string) string {
	rest = rest[:min(len(rest), 4<<10)] // a module name is short; a long scan is a waste
	s, _, ok := stringLit(rest, skipSpace(rest, 0, true), lang)
	if !ok {
		return ""
	}
	return s
}

func pythonAction(name, _ string, _ bool) act {
	switch name {
	case "os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput", "commands.getoutput", "commands.getstatusoutput",
		"subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output", "subprocess.Popen", "pty.spawn",
		"asyncio.create_subprocess_shell":
		return actShell
	case "os.execv", "os.execve", "os.execvp", "os.execvpe", "os.execl", "os.execle", "os.execlp", "os.execlpe", "os.spawnv",
		"os.spawnve", "os.spawnvp", "os.spawnvpe", "os.spawnl", "os.spawnle", "os.spawnlp", "os.spawnlpe", "os.posix_spawn",
		"os.posix_spawnp", "asyncio.create_subprocess_exec":
		return actExec
	case "shutil.rmtree":
		return actRmTree
	case "os.remove", "os.unlink":
		return actRmFile
	case "os.rmdir", "os.removedirs":
		return actRmDir
	case "open", "io.open", "codecs.open":
		return actOpen
	case "Path", "pathlib.Path", "PosixPath", "pathlib.PosixPath":
		return actPath
	case "exec", "eval", "compile", "__import__", "importlib.import_module", "base64.b64decode", "base64.b32decode",
		"base64.a85decode", "codecs.decode", "marshal.loads", "pickle.loads", "bytes.fromhex", "zlib.decompress":
		return actDynamic
	case "chr":
		return actChar
	case "os.fork", "os.forkpty", "pty.fork":
		return actFork
	}
	return actNone
}

// pythonNetwork are the modules that reach the network.
const pythonNetwork = " urllib urllib2 urllib3 requests socket http httpx aiohttp ftplib smtplib paramiko telnetlib websocket websockets xmlrpc poplib imaplib "

// pythonImports reads python's import statements: the names they give
// modules and functions (import subprocess as sp, from os import system),
// and the first module that reaches the network.
func pythonImports(code string) (map[string]string, string) {
	var aliases map[string]string
	network := ""
	for off, n := 0, 0; n < maxCalls; n++ {
		i := strings.Index(code[off:], "import")
		if i < 0 {
			break
		}
		i += off
		start := strings.LastIndexAny(code[:i], "\n;") + 1
		end := strings.IndexAny(code[i:], "\n;")
		if end < 0 {
			end = len(code)
		} else {
			end += i
		}
		off = max(end, i+len("import"))
		f := strings.FieldsFunc(code[start:end], func(r rune) bool { return r == ' ' || r == '\t' || r == ',' || r == '(' || r == ')' })
		if len(f) < 2 {
			continue
		}
		from := ""
		if f[0] == "from" && len(f) > 3 && f[2] == "import" {
			from, f = f[1], f[3:]
		} else if f[0] == "import" {
			f = f[1:]
		} else {
			continue
		}
		for k := 0; k < len(f); k++ {
			mod, local := f[k], f[k]
			if k+2 < len(f) && f[k+1] == "as" {
				local = f[k+2]
				k += 2
			}
			top, _, _ := strings.Cut(from+mod, ".")
			if from != "" {
				top, _, _ = strings.Cut(from, ".")
			}
			if network == "" && strings.Contains(pythonNetwork, " "+top+" ") {
				network = top
			}
			if aliases == nil {
				aliases = map[string]string{}
			}
			switch {
			case from != "":
				aliases["."+local] = from + "." + mod
			case local != mod:
				aliases[local] = mod
			}
		}
	}
	return aliases, network
}

// resolve turns an aliased name into the full one.
func resolve(name string, aliases map[string]string) string {
	if aliases == nil {
		return name
	}
	if full, ok := aliases["."+name]; ok {
		return full
	}
	if mod, rest, ok := strings.Cut(name, "."); ok {
		if full, ok := aliases[mod]; ok {
			return full + "." + rest
		}
	}
	return name
}

// nodeNetwork are the modules that reach the network.
const nodeNetwork = " http https net dgram tls http2 axios node-fetch ws got request undici "

func nodeAction(name, rest string, spawner bool) act {
	last := name[strings.LastIndexByte(name, '.')+1:]
	qualified := strings.Contains(name, ".")
	switch {
	case name == "require" || name == "import":
		mod := strings.TrimPrefix(literalPrefix(rest, "node"), "node:")
		switch {
		case mod == "vm":
			return actDynamic
		case strings.Contains(nodeNetwork, " "+mod+" "):
			return actNetwork
		}
	case name == "Bun.spawn" || name == "Bun.spawnSync":
		return actShell
	case name == "Deno.run" || name == "Deno.Command":
		return actArgv
	case spawner && (last == "exec" || last == "execSync"):
		return actShell
	case spawner && (last == "spawn" || last == "spawnSync" || last == "execFile" || last == "execFileSync" || last == "fork"):
		return actArgv
	case last == "rimraf" || name == "rimraf.sync" || last == "rmSync" || qualified && (last == "rm" || last == "remove" || last == "removeSync" || last == "emptyDir" || last == "emptyDirSync"):
		return actRmTree
	case last == "unlinkSync" || qualified && last == "unlink":
		return actRmFile
	case last == "rmdirSync" || qualified && last == "rmdir":
		return actRmDir
	case last == "writeFileSync" || last == "writeFile" || last == "appendFileSync" || last == "appendFile" || last == "createWriteStream":
		return actWrite
	case name == "eval" || name == "Function" || name == "atob" || name == "String.fromCharCode" || strings.HasPrefix(name, "vm."),
		name == "Buffer.from" && strings.Contains(rest[:min(len(rest), 256)], "base64"):
		return actDynamic
	case name == "fetch" || name == "XMLHttpRequest" || name == "WebSocket" || name == "EventSource":
		return actNetwork
	case name == "cluster.fork":
		return actFork
	}
	return actNone
}

func perlAction(name, rest string, _ bool) act {
	switch name {
	case "system", "exec", "CORE::system", "CORE::exec":
		return actRun
	case "open":
		return actPerlOpen
	case "unlink":
		return actRmFile
	case "rmtree", "remove_tree", "File::Path::rmtree", "File::Path::remove_tree":
		return actRmTree
	case "rmdir":
		return actRmDir
	case "eval":
		if !strings.HasPrefix(rest, "{") {
			return actDynamic // eval BLOCK catches errors; eval EXPR runs code
		}
	case "decode_base64", "MIME::Base64::decode", "MIME::Base64::decode_base64":
		return actDynamic
	case "chr":
		return actChar
	case "fork":
		return actFork
	case "use", "require":
		for _, m := range [...]string{"LWP", "IO::Socket", "Net::", "HTTP::Tiny", "HTTP::Request", "Socket", "Mojo::UserAgent"} {
			if strings.HasPrefix(rest, m) {
				return actNetwork
			}
		}
	}
	return actNone
}

func rubyAction(name, rest string, _ bool) act {
	switch name {
	case "system", "exec", "spawn", "Kernel.system", "Kernel.exec", "Kernel.spawn", "Process.spawn", "IO.popen", "Open3.capture2",
		"Open3.capture2e", "Open3.capture3", "Open3.popen2", "Open3.popen2e", "Open3.popen3", "Open3.pipeline", "Open3.pipeline_r":
		return actRun
	case "FileUtils.rm_rf", "FileUtils.rm_r", "FileUtils.remove_dir", "FileUtils.remove_entry", "FileUtils.remove_entry_secure", "FileUtils.rmtree":
		return actRmTree
	case "FileUtils.rm", "FileUtils.rm_f", "FileUtils.remove", "File.delete", "File.unlink":
		return actRmFile
	case "FileUtils.rmdir", "Dir.rmdir", "Dir.delete", "Dir.unlink":
		return actRmDir
	case "File.write", "IO.write", "File.binwrite":
		return actWrite
	case "File.open":
		return actOpen
	case "eval", "instance_eval", "class_eval", "module_eval", "Base64.decode64", "Base64.strict_decode64", "Base64.urlsafe_decode64":
		return actDynamic
	case "send", "public_send", "__send__":
		if r := strings.TrimLeft(rest, "( "); strings.HasPrefix(r, ":system") || strings.HasPrefix(r, ":exec") ||
			strings.HasPrefix(r, ":eval") || strings.HasPrefix(r, ":spawn") || strings.HasPrefix(r, ":`") {
			return actDynamic
		}
	case "fork", "Process.fork":
		return actFork
	case "require":
		switch literalPrefix(rest, "ruby") {
		case "net/http", "open-uri", "socket", "httparty", "faraday", "rest-client", "net/ftp", "net/smtp":
			return actNetwork
		}
	}
	if strings.HasPrefix(name, "Net::") || strings.HasPrefix(name, "TCPSocket") || strings.HasPrefix(name, "UDPSocket") || name == "URI.open" {
		return actNetwork
	}
	return actNone
}

func phpAction(name, rest string, _ bool) act {
	switch name {
	case "shell_exec", "system", "exec", "passthru", "popen", "proc_open":
		return actShell
	case "pcntl_exec":
		return actArgv
	case "unlink":
		return actRmFile
	case "rmdir":
		return actRmDir
	case "file_put_contents":
		return actWrite
	case "fopen", "file_get_contents":
		if u := literalPrefix(rest, "php"); strings.HasPrefix(u, "http:") || strings.HasPrefix(u, "https:") || strings.HasPrefix(u, "ftp:") {
			return actNetwork
		}
		if name == "fopen" {
			return actOpen
		}
	case "eval", "assert", "create_function", "base64_decode", "gzinflate", "gzuncompress", "str_rot13", "call_user_func", "call_user_func_array":
		return actDynamic
	case "chr":
		return actChar
	case "pcntl_fork":
		return actFork
	case "curl_init", "curl_exec", "fsockopen", "stream_socket_client", "socket_create":
		return actNetwork
	}
	if strings.HasPrefix(name, "$") {
		return actDynamic // $f(): a function named at run time
	}
	return actNone
}

func luaAction(name, rest string, _ bool) act {
	switch name {
	case "os.execute", "io.popen":
		return actShell
	case "os.remove":
		return actRmFile
	case "io.open":
		return actOpen
	case "load", "loadstring", "dofile":
		return actDynamic
	case "require":
		if strings.HasPrefix(literalPrefix(rest, "lua"), "socket") {
			return actNetwork
		}
	}
	return actNone
}

func rAction(name, rest string, _ bool) act {
	switch name {
	case "system", "shell":
		return actShell
	case "system2":
		return actArgv
	case "unlink":
		return actRmTree
	case "file.remove":
		return actRmFile
	case "eval":
		if strings.HasPrefix(strings.TrimSpace(rest), "parse(") {
			return actDynamic
		}
	case "download.file", "url", "httr::GET", "httr::POST", "GET", "POST", "curl::curl", "curl::curl_download":
		return actNetwork
	}
	return actNone
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

// litKind says what an argument of a call is, as far as reading tells.
type litKind uint8

const (
	litOther  litKind = iota // a variable, an expression: computed at run time
	litString                // a string literal without interpolation
	litList                  // a list of string literals
)

// litArg is one argument of a call.
type litArg struct {
	kind litKind
	name string // the keyword of a keyword argument: mode in mode='w'
	s    string
	list []string
}

// callArgs reads the arguments of a call from code[i:]: just after the
// opening parenthesis, or after the name for a call without one (perl,
// ruby). It returns them and where they end.
func callArgs(code string, i int, lang string, paren bool) ([]litArg, int) {
	var out []litArg
	for len(out) < maxArgs {
		i = skipSpace(code, i, paren)
		if i >= len(code) || strings.IndexByte(");]}", code[i]) >= 0 || !paren && code[i] == '\n' {
			break
		}
		var a litArg
		if name, k := keyword(code, i, lang); name != "" {
			a.name, i = name, skipSpace(code, k, paren)
		}
		i = literal(code, i, lang, paren, &a)
		k := skipSpace(code, i, paren)
		// "rm -rf " + path is not the literal: what follows decides.
		if k < len(code) && strings.IndexByte(",);]}\n", code[k]) < 0 && !((lang == "perl" || lang == "ruby") && isWordByte(code[k])) {
			a = litArg{kind: litOther, name: a.name}
			k = skipExpr(code, k, paren)
		}
		out = append(out, a)
		i = k
		if i >= len(code) || code[i] != ',' {
			break
		}
		i++
	}
	return out, i
}

func skipSpace(code string, i int, paren bool) int {
	for i < len(code) {
		switch c := code[i]; {
		case c == ' ' || c == '\t' || c == '\r' || paren && c == '\n':
			i++
		case c == '\\' && i+1 < len(code) && code[i+1] == '\n':
			i += 2
		default:
			return i
		}
	}
	return i
}

// keyword reads name= at the start of a python or R argument.
func keyword(code string, i int, lang string) (string, int) {
	if lang != "python" && lang != "R" {
		return "", i
	}
	k := i
	for k < len(code) && isWordByte(code[k]) {
		k++
	}
	if k == i || code[i] >= '0' && code[i] <= '9' {
		return "", i
	}
	e := skipSpace(code, k, true)
	if e < len(code) && code[e] == '=' && (e+1 >= len(code) || code[e+1] != '=') {
		return code[i:k], e + 1
	}
	return "", i
}

// literal reads one argument into a: a string, a list of strings, or
// anything else, which it skips.
func literal(code string, i int, lang string, paren bool, a *litArg) int {
	if i >= len(code) {
		return i
	}
	switch c := code[i]; {
	case c == '[' || lang == "php" && strings.HasPrefix(code[i:], "array(") || lang == "R" && strings.HasPrefix(code[i:], "c("):
		open := strings.IndexByte(code[i:], c)
		if c != '[' {
			open = strings.IndexByte(code[i:], '(')
		}
		return list(code, i+open+1, lang, a)
	case (lang == "perl" && strings.HasPrefix(code[i:], "qw") || lang == "ruby" && (strings.HasPrefix(code[i:], "%w") || strings.HasPrefix(code[i:], "%W"))) &&
		i+2 < len(code) && !isWordByte(code[i+2]) && code[i+2] != ' ':
		body, end := delimited(code, i+2)
		a.kind, a.list = litList, strings.Fields(body)
		return end
	}
	if s, end, ok := stringLit(code, i, lang); end > i {
		if ok {
			a.kind, a.s = litString, s
		}
		return end
	}
	if home := homeExpr(code[i:]); home > 0 {
		a.kind, a.s = litString, "~"
		return i + home
	}
	return skipExpr(code, i, paren)
}

// homeExpr recognizes the python spellings of the home directory, which
// code passes to rmtree as often as a literal: os.path.expanduser('~'),
// Path.home(), os.environ['HOME'].
func homeExpr(s string) int {
	for _, p := range [...]string{`os.path.expanduser('~')`, `os.path.expanduser("~")`, `Path.home()`, `pathlib.Path.home()`,
		`os.environ['HOME']`, `os.environ["HOME"]`, `os.getenv('HOME')`, `os.getenv("HOME")`, `os.homedir()`, `require('os').homedir()`,
		`ENV['HOME']`, `ENV["HOME"]`, `Dir.home`, `$ENV{HOME}`, `$ENV{'HOME'}`} {
		if strings.HasPrefix(s, p) {
			return len(p)
		}
	}
	return 0
}

// list reads string literals up to the closing bracket.
func list(code string, i int, lang string, a *litArg) int {
	a.kind = litList
	for {
		i = skipSpace(code, i, true)
		if i >= len(code) {
			a.kind = litOther
			return i
		}
		if code[i] == ']' || code[i] == ')' {
			return i + 1
		}
		s, end, ok := stringLit(code, i, lang)
		if end == i || !ok {
			a.kind = litOther
			return skipExpr(code, i, true)
		}
		a.list = append(a.list, s)
		i = skipSpace(code, end, true)
		if i < len(code) && code[i] == ',' {
			i++
		}
	}
}

// stringLit reads a string literal at code[i:]. end is past it (i when
// there is none there); ok is false when it interpolates, so that its
// value is known only at run time.
func stringLit(code string, i int, lang string) (s string, end int, ok bool) {
	k := i
	raw, format := false, false
	if lang == "python" {
		for k < len(code) && k-i < 2 && strings.IndexByte("rRbBuUfF", code[k]) >= 0 {
			raw = raw || code[k] == 'r' || code[k] == 'R'
			format = format || code[k] == 'f' || code[k] == 'F'
			k++
		}
	}
	if lang == "perl" && (strings.HasPrefix(code[k:], "qq") || strings.HasPrefix(code[k:], "q")) || lang == "ruby" && (strings.HasPrefix(code[k:], "%q") || strings.HasPrefix(code[k:], "%Q")) {
		n := 1
		if strings.HasPrefix(code[k:], "qq") || code[k] == '%' {
			n = 2
		}
		if k+n < len(code) && !isWordByte(code[k+n]) && code[k+n] != ' ' && code[k+n] != '=' && code[k+n] != ',' {
			body, e := delimited(code, k+n)
			interp := code[k+n-1] == 'q' && n == 2 || code[k+n-1] == 'Q'
			return body, e, !interp || !strings.ContainsAny(body, "$@#")
		}
	}
	if k >= len(code) {
		return "", i, false
	}
	q := code[k]
	if q != '\'' && q != '"' && !(q == '`' && lang == "node") {
		return "", i, false
	}
	quote := code[k : k+1]
	if lang == "python" && strings.HasPrefix(code[k:], strings.Repeat(quote, 3)) {
		quote = code[k : k+3]
	}
	var b strings.Builder
	for k += len(quote); k < len(code); k++ {
		c := code[k]
		if strings.HasPrefix(code[k:], quote) {
			end = k + len(quote)
			break
		}
		if c == '\\' && !raw && k+1 < len(code) {
			k++
			switch e := code[k]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case '\\', '\'', '"', '`', '$':
				b.WriteByte(e)
			case '\n':
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
			}
			continue
		}
		b.WriteByte(c)
	}
	if end == 0 {
		return "", len(code), false
	}
	s = b.String()
	switch {
	case format && strings.Contains(strings.ReplaceAll(s, "{{", ""), "{"),
		q == '`' && strings.Contains(s, "${"),
		q == '"' && (lang == "perl" || lang == "php") && strings.ContainsAny(s, "$@"),
		q == '"' && lang == "ruby" && strings.Contains(s, "#{"):
		return s, end, false
	}
	return s, end, true
}

// delimited reads perl's and ruby's q{...}, qw(...), %x[...] bodies.
func delimited(code string, i int) (string, int) {
	i = skipSpace(code, i, true)
	if i >= len(code) {
		return "", i
	}
	open := code[i]
	closing := open
	switch open {
	case '(':
		closing = ')'
	case '[':
		closing = ']'
	case '{':
		closing = '}'
	case '<':
		closing = '>'
	}
	end := strings.IndexByte(code[i+1:], closing)
	if end < 0 {
		return code[i+1:], len(code)
	}
	return code[i+1 : i+1+end], i + 2 + end
}

// skipExpr skips an expression up to the comma, closing bracket or end of
// statement that ends it, minding nested brackets and strings.
func skipExpr(code string, i int, paren bool) int {
	depth := 0
	for i < len(code) {
		c := code[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			e := i + 1
			for e < len(code) && code[e] != c {
				if code[e] == '\\' {
					e++
				}
				e++
			}
			i = e + 1
			continue
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			if depth == 0 {
				return i
			}
			depth--
		case depth == 0 && (c == ',' || c == ';' || !paren && c == '\n'):
			return i
		}
		i++
	}
	return len(code)
}

// shellLiterals finds the commands perl, ruby and php run with backticks,
// qx{} and %x{}.
func shellLiterals(code, lang string) []litArg {
	var out []litArg
	add := func(body string) {
		a := litArg{kind: litString, s: body}
		if strings.Contains(body, "#{") || lang != "ruby" && strings.ContainsAny(body, "$@") {
			a.kind = litOther
		}
		out = append(out, a)
	}
	for i := 0; i < len(code) && len(out) < maxCalls; i++ {
		switch {
		case code[i] == '`':
			end := strings.IndexByte(code[i+1:], '`')
			if end < 0 {
				return out
			}
			add(code[i+1 : i+1+end])
			i += end + 1
		case lang == "perl" && strings.HasPrefix(code[i:], "qx") && (i == 0 || !isWordByte(code[i-1])) && i+2 < len(code) && !isWordByte(code[i+2]),
			lang == "ruby" && strings.HasPrefix(code[i:], "%x") && i+2 < len(code) && !isWordByte(code[i+2]):
			body, end := delimited(code, i+2)
			add(body)
			i = end - 1
		}
	}
	return out
}

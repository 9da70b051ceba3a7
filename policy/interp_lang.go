package policy

import (
	"strings"
)

var (
	cLoops = []*lazyRegexp{lazyRE(`while\s*\(\s*(?:true|1)\s*\)`), lazyRE(`for\s*\(\s*;\s*;\s*\)`)}

	pyLang   = language{action: pythonAction, loops: []*lazyRegexp{lazyRE(`while\s*\(?\s*(?:True|1)\s*\)?\s*:`)}}
	nodeLang = language{action: nodeAction, loops: cLoops}
	perlLang = language{bare: true, backticks: true, action: perlAction, bombs: []*lazyRegexp{
		lazyRE(`fork\s*(?:\(\s*\))?\s*(?:while|until)\b`), lazyRE(`while\s*\(\s*1\s*\)\s*\{\s*fork\b`),
		lazyRE(`1\s+while\s+fork\b`)}}
	rubyLang = language{bare: true, backticks: true, action: rubyAction, loops: []*lazyRegexp{
		lazyRE(`loop\s*(?:\{|do\b)`), lazyRE(`while\s+true\b`)},
		bombs: []*lazyRegexp{lazyRE(`fork\s+(?:while|until)\b`)}}
	phpLang = language{backticks: true, action: phpAction, loops: cLoops}
	luaLang = language{action: luaAction, loops: []*lazyRegexp{lazyRE(`while\s+true\s+do`)}}
	rLang   = language{action: rAction, loops: []*lazyRegexp{lazyRE(`repeat\s*\{`), lazyRE(`while\s*\(\s*TRUE\s*\)`)}}
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

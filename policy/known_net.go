package policy

import (
	"path"
	"strings"
)

// networkKnowledge covers the programs that talk to other machines.
func networkKnowledge(name string) func(*judge, *Command) {
	switch name {
	case "curl":
		return judgeCurl
	case "wget", "wget2":
		return judgeWget
	case "ssh", "autossh":
		return judgeSSH
	case "nc", "ncat", "netcat", "socat":
		return judgeNetcat
	case "gh":
		return judgeGh
	case "telnet", "ftp", "sftp", "lftp", "mosh", "mtr":
		return judgeRemoteSession
	case "ping", "ping6", "dig", "nslookup", "host", "traceroute", "tracepath", "whois", "ssh-keyscan", "drill", "arp", "delv", "kdig", "doggo":
		return judgeQuery
	case "http", "https", "xh", "httpie", "aria2c", "lwp-request", "nmap", "open", "xdg-open", "ssh-keygen", "ssh-add", "ssh-copy-id", "ssh-agent":
		return judgeNetwork
	}
	return nil
}

// curlValues are curl's long options that take a value.
const curlValues = " output dump-header cookie-jar cookie upload-file data data-binary data-raw data-urlencode data-ascii form " +
	"form-string config header request user url output-dir json trace trace-ascii stderr write-out proxy user-agent referer " +
	"max-time connect-timeout retry cert key cacert range continue-at time-cond limit-rate max-filesize resolve connect-to " +
	"interface local-port proxy-user oauth2-bearer variable etag-save etag-compare hsts alt-svc libcurl unix-socket " +
	"abstract-unix-socket preproxy quote retry-delay retry-max-time speed-limit speed-time telnet-option tls-max "

// judgeCurl: a request is a caution; the files curl writes (-o, -O, -D,
// -c) and the local files it sends (-T, -d @file, -F f=@file) are judged
// as such.
func judgeCurl(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "AbcCdDeEFHKmoPQrtTuUwxXyYz", long: curlValues})
	j.reach(Caution, 3, "curl sends requests over the network")
	remoteName, dir := false, "."
	for _, o := range s.opts {
		switch {
		case o.short == 'o' || o.long == "output" || o.short == 'D' || o.long == "dump-header" || o.short == 'c' ||
			o.long == "cookie-jar" || o.long == "trace" || o.long == "trace-ascii" || o.long == "stderr" || o.long == "libcurl" ||
			o.long == "etag-save":
			if o.val != "-" && o.val != "" {
				j.write(staticArg(o.val), "curl --"+curlName(o))
			}
		case o.short == 'O' || o.long == "remote-name" || o.long == "remote-name-all":
			remoteName = true
		case o.long == "output-dir":
			dir = o.val
		case o.short == 'T' || o.long == "upload-file":
			j.sends("curl -T", o.val)
		case o.short == 'd' || strings.HasPrefix(o.long, "data") || o.long == "json":
			if f, ok := strings.CutPrefix(o.val, "@"); ok {
				j.sends("curl -d @", f)
			}
		case o.short == 'F' || o.long == "form":
			if _, f, ok := strings.Cut(o.val, "=@"); ok {
				f, _, _ = strings.Cut(f, ";")
				j.sends("curl -F", f)
			} else if _, f, ok := strings.Cut(o.val, "=<"); ok {
				j.sends("curl -F", f)
			}
		case o.short == 'K' || o.long == "config":
			j.add(Caution, 4, "curl reads more options from %s", o.val)
		}
	}
	if remoteName {
		j.write(staticArg(dir), "curl -O")
	}
}

func curlName(o option) string {
	if o.long != "" {
		return o.long
	}
	switch o.short {
	case 'o':
		return "output"
	case 'D':
		return "dump-header"
	}
	return "cookie-jar"
}

// sends judges a local file a program uploads.
func (j *judge) sends(how, file string) {
	if file == "-" || file == "" {
		j.reach(Caution, 4, "%s sends its input over the network", how)
		return
	}
	switch p := j.place(homeArg(j, file)); p {
	case PlaceWorkspace, PlaceWorkspaceRoot, PlaceTemp, PlaceTempRoot, PlaceDevice:
		j.reach(Caution, 4, "%s sends the local file %s over the network", how, file)
	default:
		j.reach(Caution, 5, "%s sends %s (the %s) over the network", how, file, p)
	}
}

func judgeWget(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "OoaPeiBtTwQUYlARDXI", long: " output-document output-file append-output directory-prefix execute " +
		"input-file base tries timeout wait quota user-agent level accept reject domains exclude-directories include-directories " +
		"post-data post-file body-data body-file header method user password load-cookies save-cookies referer use-askpass config " +
		"bind-address limit-rate "})
	j.reach(Caution, 3, "%s downloads from the network", c.Name)
	out, ok := s.val("-O", "--output-document")
	switch {
	case ok && out != "-":
		j.write(staticArg(out), "wget -O")
	case !ok:
		dir, ok := s.val("-P", "--directory-prefix")
		if !ok {
			dir = "."
		}
		j.write(staticArg(dir), "wget")
	}
	for _, o := range s.opts {
		switch {
		case o.short == 'o' || o.short == 'a' || o.long == "output-file" || o.long == "append-output" || o.long == "save-cookies":
			j.write(staticArg(o.val), "wget --"+o.long)
		case o.long == "post-file" || o.long == "body-file":
			j.sends("wget --"+o.long, o.val)
		case o.short == 'e' || o.long == "execute" || o.long == "config":
			j.add(Caution, 4, "wget runs the settings %s", o.val)
		case o.long == "use-askpass":
			j.add(Caution, 5, "wget --use-askpass runs %s", o.val)
		}
	}
}

// judgeSSH: ssh without a command is a remote shell for a person; with one
// it runs that command on the remote machine, judged as shell code.
func judgeSSH(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "BbcDEeFIiJLlmOopQRSWwM", stop: true})
	for _, o := range s.opts {
		switch o.short {
		case 'o':
			j.sshOption(o.val, "ssh")
		case 'L', 'R', 'D', 'W', 'w':
			j.reach(Caution, 4, "ssh -%c forwards connections through the remote machine", o.short)
		}
	}
	if len(s.ops) == 0 {
		j.add(ReadOnly, 0, "ssh without a host prints its usage")
		return
	}
	host, cmd := s.ops[0], s.ops[1:]
	switch {
	case len(cmd) > 0:
		j.reach(Caution, 4, "ssh runs a command on the remote machine %s", host.Value)
		j.shell(joinArgs(cmd), allStatic(cmd), "ssh")
	case s.has("-N"):
		j.reach(Caution, 4, "ssh -N holds a connection to %s open", host.Value)
	case c.Stdin.HasDoc || c.Stdin.From != nil:
		j.reach(Caution, 4, "ssh runs its input as commands on the remote machine %s", host.Value)
		if c.Stdin.HasDoc {
			j.shell(c.Stdin.Doc, c.Stdin.DocStatic, "ssh")
		}
	default:
		j.add(Interactive, 2, "interactive: ssh without a command opens a shell on %s", host.Value)
	}
}

// sshOption judges an ssh -o option: some of them run local commands.
func (j *judge) sshOption(opt, how string) {
	k, v, ok := strings.Cut(opt, "=")
	if !ok {
		k, v, _ = strings.Cut(strings.TrimSpace(opt), " ")
	}
	k, v = strings.TrimSpace(k), strings.TrimSpace(v)
	switch strings.ToLower(k) {
	case "proxycommand", "localcommand", "knownhostscommand", "remotecommand":
		if v != "" && !strings.EqualFold(v, "none") {
			j.add(Caution, 5, "%s -o %s runs %s", how, k, v)
			j.shell(v, true, how+" -o "+k)
		}
	}
}

func judgeNetcat(j *judge, c *Command) {
	if c.Name == "socat" {
		text := strings.ToUpper(c.Text())
		switch {
		case strings.Contains(text, "EXEC:") || strings.Contains(text, "SYSTEM:"):
			j.reach(Dangerous, 7, "socat connects a program to the network: a remote shell")
		case strings.Contains(text, "-LISTEN"):
			j.reach(Caution, 4, "socat listens for connections")
		default:
			j.reach(Caution, 3, "socat relays data over the network")
		}
		return
	}
	s := scan(c.Rest(), flags{short: "ecpsiIOqTVwxXmMbP", long: " exec sh-exec lua-exec source-port proxy proxy-type wait "})
	switch {
	case s.has("-e", "-c", "--exec", "--sh-exec", "--lua-exec"):
		j.reach(Dangerous, 7, "%s -e runs a program for whoever connects: a remote shell", c.Name)
	case s.has("-l", "--listen"):
		j.reach(Caution, 4, "%s -l listens for connections", c.Name)
	default:
		j.reach(Caution, 3, "%s connects over the network", c.Name)
	}
}

// judgeGh: the GitHub CLI reads freely; what it does on GitHub is done
// under the user's account.
func judgeGh(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "RbtlsmpjqHXfFaLSBAw", long: " repo hostname jq template method field raw-field header input " +
		"title body body-file base head label assignee reviewer milestone limit state search json web workflow branch "})
	var group, verb string
	if len(s.ops) > 0 {
		group = s.ops[0].Value
	}
	if len(s.ops) > 1 {
		verb = s.ops[1].Value
	}
	switch {
	case group == "api":
		m, _ := s.val("-X", "--method")
		switch m = strings.ToUpper(m); {
		case m == "DELETE":
			j.reach(Caution, 5, "gh api -X DELETE deletes something on GitHub")
		case m == "POST" || m == "PUT" || m == "PATCH" || m == "" && s.has("-f", "-F", "--field", "--raw-field", "--input"):
			j.reach(Caution, 4, "gh api changes something on GitHub")
		default:
			j.add(ReadOnly, 1, "gh api reads from GitHub")
		}
	case group == "repo" && verb == "delete" || group == "release" && verb == "delete":
		j.reach(Dangerous, 7, "gh %s delete deletes it on GitHub for good", group)
	case verb == "delete" || verb == "delete-asset" || group == "repo" && verb == "archive":
		j.reach(Caution, 5, "gh %s %s deletes something on GitHub", group, verb)
	case group == "auth" && verb == "token":
		j.add(Caution, 5, "gh auth token prints the user's GitHub token")
	case group == "run" && verb == "watch" || group == "pr" && verb == "checks" && s.has("--watch"):
		j.add(Interactive, 1, "interactive: gh %s %s follows until it is interrupted", group, verb)
	case verb == "view" || verb == "list" || verb == "status" || verb == "diff" || verb == "checks" || group == "search" ||
		group == "browse" || group == "" || group == "help" || group == "version" || group == "--version":
		j.add(ReadOnly, 1, "gh %s %s reads from GitHub", group, verb)
	case group == "pr" && verb == "checkout" || group == "repo" && verb == "clone":
		j.add(SafeWrite, 2, "gh %s %s fetches into the local repository", group, verb)
	case group == "secret" || group == "variable":
		j.reach(Caution, 5, "gh %s %s changes the repository's secrets or variables", group, verb)
	default:
		j.reach(Caution, 4, "gh %s %s acts on GitHub under the user's account", group, verb)
	}
}

func judgeRemoteSession(j *judge, c *Command) {
	switch {
	case c.Name == "sftp" && c.Has("-b") || c.Name == "lftp" && (c.Has("-c") || c.Has("-f")):
		j.reach(Caution, 4, "%s transfers files with a remote machine", c.Name)
	case c.Name == "mtr" && (c.Has("-r") || c.Has("--report") || c.Has("-w")):
		j.add(ReadOnly, 1, "mtr reports the route to a host")
	case c.Stdin.HasDoc || c.Stdin.From != nil:
		j.reach(Caution, 4, "%s talks to a remote machine with commands from its input", c.Name)
	default:
		j.add(Interactive, 2, "interactive: %s opens a session that waits for a person", c.Name)
	}
}

func judgeNetwork(j *judge, c *Command) {
	switch c.Name {
	case "ssh-copy-id":
		j.reach(Caution, 5, "ssh-copy-id grants a key access to a remote machine")
	case "ssh-agent":
		j.add(SafeWrite, 2, "ssh-agent starts an agent that holds keys")
	case "ssh-keygen", "ssh-add":
		if listsKeys(c) {
			j.add(ReadOnly, 1, "%s only lists keys or fingerprints", c.Name)
			return
		}
		j.add(Caution, 3, "%s creates, loads or changes SSH keys", c.Name)
	case "nmap":
		j.reach(Caution, 4, "nmap scans machines on the network")
	case "open", "xdg-open":
		j.add(Caution, 3, "%s opens the file or address in another application", c.Name)
	default:
		j.reach(Caution, 3, "%s sends requests over the network", c.Name)
	}
}

// remote reports whether an rsync or scp operand names another machine
// (host:path, user@host:path, rsync://).
func remote(a Arg) bool {
	v := a.Value
	if strings.HasPrefix(v, "rsync://") {
		return true
	}
	i := strings.IndexByte(v, ':')
	return i > 0 && !strings.Contains(v[:i], "/")
}

func judgeRsync(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "eBfTM", long: " rsh rsync-path filter exclude include exclude-from include-from files-from " +
		"temp-dir partial-dir compare-dest copy-dest link-dest backup-dir suffix chmod chown usermap groupmap timeout " +
		"contimeout port password-file log-file log-file-format out-format max-size min-size max-delete bwlimit " +
		"block-size compress-level skip-compress info debug remote-option iconv address sockopts outbuf stop-after stop-at "})
	j.add(SafeWrite, 1, "rsync copies files")
	if sh, ok := s.val("-e", "--rsh"); ok {
		if f := strings.Fields(sh); len(f) == 0 || path.Base(f[0]) != "ssh" {
			j.add(Caution, 5, "rsync -e runs %s to reach the other side", sh)
			j.shell(sh, true, "rsync -e")
		}
	}
	if p, ok := s.val("--rsync-path"); ok {
		j.add(Caution, 5, "rsync --rsync-path runs %s on the other side", p)
	}
	if len(s.ops) < 2 {
		j.add(ReadOnly, 1, "rsync lists files")
		return
	}
	dest := s.ops[len(s.ops)-1]
	deletes := s.abbrev("del", 3) || s.abbrev("delete", 3) || s.abbrev("delete-before", 8) || s.abbrev("delete-during", 8) ||
		s.abbrev("delete-delay", 8) || s.abbrev("delete-after", 8) || s.abbrev("delete-excluded", 8)
	for _, o := range s.opts {
		deletes = deletes || strings.HasPrefix(o.long, "delete")
	}
	if s.has("--remove-source-files") {
		j.add(Caution, 4, "rsync --remove-source-files deletes the sources it copied")
	}
	if remote(dest) {
		j.reach(Caution, 4, "rsync copies files to the remote machine %s", dest.Value)
		if deletes {
			j.reach(Dangerous, 7, "rsync --delete removes files on the remote machine that the source lacks")
		}
		return
	}
	j.write(dest, "rsync")
	if deletes {
		// What the source lacks is removed from the whole of the
		// destination: judged as rm -r of it (a generated directory or the
		// private /tmp is nobody's work; src/ may be).
		j.record(j.removal(dest, true, false, "rsync --delete (files the source lacks)"))
	}
}

func judgeScp(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "cFiJlPoSDX"})
	if prog, ok := s.val("-S"); ok {
		j.add(Caution, 5, "scp -S runs %s to reach the other side", prog)
	}
	for _, o := range s.opts {
		if o.short == 'o' {
			j.sshOption(o.val, "scp")
		}
	}
	if len(s.ops) < 2 {
		j.add(Caution, 3, "scp without a destination")
		return
	}
	dest := s.ops[len(s.ops)-1]
	if remote(dest) {
		j.reach(Caution, 4, "scp copies files to the remote machine %s", dest.Value)
		return
	}
	j.reach(Caution, 3, "scp copies files over the network")
	j.write(dest, "scp")
}

// listsKeys reports whether ssh-keygen or ssh-add only lists: ssh-keygen -l
// (a key's fingerprint) or -F (a host in known_hosts) without an option
// that writes, ssh-add -l or -L (the agent's keys).
func listsKeys(c *Command) bool {
	list, other := false, false
	for _, a := range c.Args[1:] {
		v := a.Value
		if !a.Static {
			return false
		}
		if !strings.HasPrefix(v, "-") || v == "-" {
			continue // an operand, or the value of -f
		}
		for _, ch := range v[1:] {
			switch {
			case c.Name == "ssh-keygen" && (ch == 'l' || ch == 'F' || ch == 'E' || ch == 'f' || ch == 'v'):
				list = list || ch == 'l' || ch == 'F'
			case c.Name == "ssh-add" && (ch == 'l' || ch == 'L' || ch == 'E'):
				list = true
			default:
				other = true
			}
		}
	}
	return list && !other
}

package policy

import (
	"strconv"
	"strings"
)

// The wrappers that build commands from their input: xargs, parallel,
// watch.

var (
	xargsOpts = opts{arg: "adEILnPs", opt: "eil", flag: "0oprtx", long: " arg-file= delimiter= eof? replace? max-lines? " +
		"max-args= max-procs= max-chars= process-slot-var= interactive no-run-if-empty null open-tty verbose exit " +
		"show-limits help version "}
	parallelOpts = opts{arg: "aCdEIjLnNPsS", opt: "eil", flag: "0fgkmqrtuvxXZ", long: " arg-file= colsep= delimiter= " +
		"eof? replace? jobs= max-procs= max-args= max-replace-args= max-lines? max-chars= sshlogin= sshloginfile= slf= " +
		"results= res= joblog= tmpdir= tempdir= timeout= delay= block= block-size= halt= halt-on-error= retries= " +
		"memfree= load= nice= tag-string= tagstring= workdir= wd= basefile= bf= return= transfer-file= tf= env= " +
		"pipe pipepart keep-order tag dry-run verbose line-buffer group ungroup null quote no-run-if-empty progress " +
		"bar eta will-cite xapply link shuf files cleanup transfer onall nonall header= recstart= recend= regexp " +
		"round-robin compress lb plus no-notice silent resume resume-failed retry-failed tty fg bg semaphore id= " +
		"group-by= trim= csv tee fifo cat total-jobs= ssh= sshdelay= shebang shebang-wrap rpl= show-limits " +
		"number-of-cpus number-of-cores number-of-threads number-of-sockets help version "}
	watchOpts = opts{arg: "nq", opt: "d", flag: "bcCeghptwrxv", long: " interval= beep color no-color differences? errexit " +
		"chgexit equexit= precise no-title no-wrap no-linewrap exec shotsdir= help version "}
)

// maxInputs bounds the known inputs xargs and parallel are judged with.
const maxInputs = 16

// knownInput is what a command reads on stdin when the line says: the
// words echo or printf print, or a here-document without expansions.
func knownInput(c *Command) (string, bool) {
	in := c.Stdin
	switch {
	case in.HasDoc:
		return in.Doc, in.DocStatic
	case in.From == nil || !allStatic(in.From.Args) || len(in.From.Args) < 2:
		return "", false
	case in.From.Name == "echo":
		return joinArgs(in.From.Rest()) + "\n", true
	case in.From.Name == "printf":
		// The format's escapes matter (printf 'rm -rf /\n' | xargs -d '\n'
		// sh -c); its conversions are read as the words they print.
		args := in.From.Rest()
		return backslashes(joinArgs(args)), true
	}
	return "", false
}

// backslashes reads the backslash escapes of printf formats, xargs -d and
// echo -e.
func backslashes(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	r := strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\r`, "\r", `\0`, "\x00", `\\`, `\`, `\f`, "\f", `\v`, "\v")
	return r.Replace(s)
}

// inputUnits splits what xargs reads into its arguments: by the delimiter
// of -d or -0, else by blanks and newlines (quotes are removed: the
// stricter reading keeps the words whole only in code, below).
func inputUnits(text, delim string, lines bool) []string {
	var units []string
	switch {
	case delim != "":
		units = strings.Split(text, delim)
	case lines:
		units = strings.Split(text, "\n")
	default:
		units = strings.Fields(strings.NewReplacer(`'`, "", `"`, "").Replace(text))
	}
	out := units[:0]
	for i, u := range units {
		switch {
		case delim == "":
			u = strings.TrimSpace(u)
		case i == len(units)-1:
			// echo's newline ends the last unit of echo / | xargs -0: the
			// worse reading drops it.
			u = strings.TrimSuffix(u, "\n")
		}
		if u != "" {
			out = append(out, u)
		}
	}
	return out
}

// peelXargs: xargs [OPTION]... COMMAND [ARG]... runs COMMAND with the
// words it reads from stdin (or from the file of -a) appended, or put
// where -I says.
func peelXargs(j *judge, args []Arg) ([]Arg, bool) {
	replace, delim, fromFile, help := "", "", false, false
	rest, bad := xargsOpts.skip(args, func(opt string, val Arg) {
		switch opt {
		case "-I":
			replace = val.Value
		case "-i", "--replace":
			replace = val.Value
			if replace == "" {
				replace = "{}"
			}
		case "-a", "--arg-file":
			fromFile = true
		case "-0", "--null":
			delim = "\x00"
		case "-d", "--delimiter":
			delim = backslashes(val.Value)
		case "--help", "--version":
			help = true
		}
	})
	j.unreadable("xargs", bad, nil)
	if bad != "" && len(rest) > 1 && rest[1].Static {
		// The other reading: the option took the next word. xargs reads
		// the same input then.
		alt := &Command{Args: append([]Arg{args[0]}, rest[1:]...), Name: "xargs", Depth: j.cmd.Depth + 1,
			Source: "xargs " + joinArgs(rest[1:]), Stdin: j.cmd.Stdin}
		restore := j.enter()
		j.st.command(alt, "xargs "+bad)
		restore()
	}
	switch {
	case help:
		j.add(ReadOnly, 0, "xargs prints its usage or version")
		return nil, true
	case len(rest) == 0:
		j.add(ReadOnly, 0, "xargs without a command echoes its input")
		return nil, true
	}
	// With -a the operands come from the file: stdin is not read.
	text, known := "", false
	if !fromFile {
		text, known = knownInput(j.cmd)
	}
	if codeFromInput(rest, replace) && (!known || replace == "") {
		xargsCode(j, programName(rest[0]), text, known, fromFile)
		return nil, true
	}
	if !known {
		return xargsUnknown(rest, replace), false
	}
	units := inputUnits(text, delim, replace != "")
	if replace == "" {
		out := append([]Arg{}, rest...)
		for _, u := range units {
			out = append(out, staticArg(u))
		}
		return out, false
	}
	// -I runs the command once per line, the line put where -I says (in
	// code too: echo / | xargs -I{} sh -c 'rm -rf {}').
	if len(units) == 0 {
		j.add(ReadOnly, 0, "xargs -I reads no input and runs nothing")
		return nil, true
	}
	for _, u := range units[1:min(len(units), maxInputs)] {
		j.argv(replaceIn(rest, replace, u), "xargs")
	}
	return replaceIn(rest, replace, units[0]), false
}

// xargsCode judges input that xargs makes code (a shell's -c string, an
// interpreter's program, a script's name): known input is judged as one
// shell line, the worse reading; unknown input asks every time.
func xargsCode(j *judge, name, text string, known, fromFile bool) {
	if known && (shells[name] || name == "eval") {
		j.add(ReadOnly, 0, "xargs hands what it reads to %s as code", name)
		j.shell(text, true, "xargs "+name)
		return
	}
	j.add(Caution, j.st.e.pol.Thresholds.SessionApprove+1, "%s runs code xargs reads from %s, which forgebox cannot see",
		name, inputName(j.cmd, fromFile))
}

// xargsUnknown is the command xargs runs with input forgebox cannot see:
// a dynamic word appended, or put where -I says.
func xargsUnknown(rest []Arg, replace string) []Arg {
	out := make([]Arg, 0, len(rest)+1)
	for _, a := range rest {
		if replace != "" && strings.Contains(a.Value, replace) {
			out = append(out, Arg{Value: a.Value, IfEmpty: strings.ReplaceAll(a.Value, replace, "")})
			continue
		}
		out = append(out, a)
	}
	if replace == "" {
		out = append(out, Arg{Value: "<input of xargs>", IfEmpty: ""})
	}
	return out
}

func replaceIn(args []Arg, old, val string) []Arg {
	out := make([]Arg, len(args))
	for i, a := range args {
		if a.Static && strings.Contains(a.Value, old) {
			a = staticArg(strings.ReplaceAll(a.Value, old, val))
		}
		out[i] = a
	}
	return out
}

func inputName(c *Command, fromFile bool) string {
	switch {
	case fromFile:
		return "the file of -a"
	case c.Stdin.From != nil:
		return "the output of " + c.Stdin.From.Name
	}
	return "its input"
}

// shells are the programs judgeShell reads.
var shells = map[string]bool{"bash": true, "sh": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "ash": true,
	"fish": true, "rbash": true, "yash": true, "tcsh": true, "csh": true}

// codeFromInput reports whether the words xargs appends (or puts where
// -I says) become code rather than arguments: sh -c with no string after
// it, sh with no script, eval, python -c, a code string holding the -I
// placeholder.
func codeFromInput(rest []Arg, replace string) bool {
	name := programName(rest[0])
	lang := interpreter(name)
	switch {
	case name == "eval":
		return true
	case !shells[name] && lang == "":
		return false
	}
	args := rest[1:]
	i, code := 0, false
	for i < len(args) {
		v := args[i].Value
		if !args[i].Static || len(v) < 2 || v[0] != '-' && v[0] != '+' {
			break
		}
		i++
		if v == "--" {
			break
		}
		if lang != "" {
			if isInlineFlag(lang, v) {
				code = true
				break
			}
			continue
		}
		if v[1] != '-' && strings.IndexByte(v, 'c') > 0 {
			code = true
			break
		}
		if v == "-o" || v == "+o" || v == "-O" || v == "+O" || v == "--rcfile" || v == "--init-file" {
			i++
		}
	}
	switch {
	case i >= len(args):
		return true // the code string, or the script's name, comes from the input
	case replace != "" && strings.Contains(args[i].Value, replace):
		return code || i == 0
	}
	return false
}

// peelParallel: GNU parallel [OPTIONS] [COMMAND] [::: ARGS | :::: FILES]
// runs COMMAND through a shell once per argument (appended, or put where
// {} says, quoted); with no COMMAND the arguments are the commands.
func peelParallel(j *judge, args []Arg) ([]Arg, bool) {
	replace, help, pipe := "{}", false, false
	rest, bad := parallelOpts.skip(args, func(opt string, val Arg) {
		switch opt {
		case "-I":
			replace = val.Value
		case "-i", "--replace":
			if val.Value != "" {
				replace = val.Value
			}
		case "-S", "--sshlogin", "--sshloginfile", "--slf", "--onall", "--nonall":
			j.add(Caution, 5, "parallel %s runs the commands on other machines", opt)
		case "--pipe", "--pipepart":
			pipe = true
		case "--help", "--version", "--dry-run", "--number-of-cpus", "--number-of-cores", "--number-of-threads",
			"--number-of-sockets", "--show-limits":
			help = true
		}
	})
	j.unreadable("parallel", bad, nil)
	if help {
		j.add(ReadOnly, 0, "parallel prints its usage, version or what it would run")
		return nil, true
	}
	cmd, groups, knownArgs := parallelSources(j.cmd, rest, pipe)
	j.add(ReadOnly, 0, "parallel runs each job with a shell")
	static := allStatic(cmd)
	switch {
	case pipe:
		j.shell(joinArgs(cmd), static, "parallel")
		return nil, true
	case len(cmd) == 0 && !knownArgs:
		j.add(Caution, j.st.e.pol.Thresholds.SessionApprove+1, "parallel runs the commands it reads from %s, which forgebox cannot see", inputName(j.cmd, false))
		return nil, true
	}
	if !knownArgs {
		groups = append(groups, []Arg{{Value: `"$PARALLEL_ARG"`}})
	}
	// parallel joins the command's words with spaces for the shell unless
	// -q quotes its arguments: the two readings differ (parallel bash -c 'rm -rf
	// {}'), and both are judged.
	codes := []string{joinArgs(cmd)}
	if quoted := quoteWords(cmd); len(cmd) > 1 && quoted != codes[0] {
		codes = append(codes, quoted)
	}
	for _, job := range parallelJobs(groups) {
		for _, code := range codes {
			line, dyn := parallelLine(code, job, replace)
			j.shell(line, static && !dyn, "parallel")
		}
	}
	return nil, true
}

// parallelSources splits parallel's operands into the command and its
// input sources: each ::: group's values, a :::: group's file (unknown:
// knownArgs is false), or stdin when no group is given.
func parallelSources(c *Command, rest []Arg, pipe bool) (cmd []Arg, groups [][]Arg, knownArgs bool) {
	k := 0
	for k < len(rest) && !isParallelSep(rest[k]) {
		cmd = append(cmd, rest[k])
		k++
	}
	knownArgs = true
	for ; k < len(rest); k++ {
		if isParallelSep(rest[k]) {
			groups = append(groups, nil)
			if strings.HasPrefix(rest[k].Value, "::::") {
				knownArgs = false
			}
			continue
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], rest[k])
	}
	if len(groups) == 0 && !pipe {
		text, known := knownInput(c)
		knownArgs = known
		var in []Arg
		for _, u := range inputUnits(text, "", true) {
			in = append(in, staticArg(u))
		}
		groups = append(groups, in)
	}
	return cmd, groups, knownArgs
}

// parallelJobs combines the input sources as parallel does (every value
// of one with every value of the next), up to maxInputs jobs.
func parallelJobs(groups [][]Arg) [][]Arg {
	jobs := [][]Arg{nil}
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		var next [][]Arg
		for _, job := range jobs {
			for _, v := range g {
				if len(next) >= maxInputs {
					break
				}
				next = append(next, append(append([]Arg{}, job...), v))
			}
		}
		jobs = next
	}
	return jobs
}

// parallelLine puts a job's values into the command: {} all of them, {N}
// the Nth, or appended when the command names none. With no command, the
// values are the command. dyn is true when a value is computed at run
// time.
func parallelLine(code string, job []Arg, replace string) (string, bool) {
	dyn := false
	words := make([]string, len(job))
	for i, v := range job {
		words[i] = v.Value
		if v.Static {
			words[i] = shellQuote(v.Value)
		} else {
			dyn = true
		}
	}
	if code == "" {
		var vals []string
		for _, v := range job {
			vals = append(vals, v.Value)
		}
		return strings.Join(vals, " "), dyn
	}
	line, named := code, false
	for i, w := range words {
		for _, r := range []string{"{" + strconv.Itoa(i+1) + "}", "{" + strconv.Itoa(i+1) + ".}", "{" + strconv.Itoa(i+1) + "/}"} {
			if strings.Contains(line, r) {
				line, named = strings.ReplaceAll(line, r, w), true
			}
		}
	}
	all := strings.Join(words, " ")
	for _, r := range []string{replace, "{.}", "{/}", "{//}", "{/.}"} {
		if r != "" && strings.Contains(line, r) {
			line, named = strings.ReplaceAll(line, r, all), true
		}
	}
	if !named && all != "" {
		line += " " + all
	}
	return line, dyn
}

// quoteWords renders words for a shell line, each quoted but the
// program's name (a command given in one word stays a command).
func quoteWords(args []Arg) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if a.Static && i > 0 {
			b.WriteString(shellQuote(a.Value))
		} else {
			b.WriteString(a.Value)
		}
	}
	return b.String()
}

func isParallelSep(a Arg) bool {
	return a.Static && (a.Value == ":::" || a.Value == "::::" || a.Value == ":::+" || a.Value == "::::+")
}

// shellQuote quotes a word for a shell line.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// peelWatch: watch runs its arguments joined, with sh -c, every few
// seconds; watch -x runs them as a command.
func peelWatch(j *judge, args []Arg) ([]Arg, bool) {
	exec, help := false, false
	rest, bad := watchOpts.skip(args, func(opt string, _ Arg) {
		exec = exec || opt == "-x" || opt == "--exec"
		help = help || gnuHelp(opt) || opt == "-h" || opt == "-v"
	})
	j.unreadable("watch", bad, after(rest, 1))
	if help {
		j.add(ReadOnly, 0, "watch prints its usage or version")
		return nil, true
	}
	j.add(Interactive, 1, "interactive: watch redraws the screen until it is interrupted")
	if len(rest) == 0 {
		return nil, true
	}
	if exec {
		return rest, false
	}
	j.shell(joinArgs(rest), allStatic(rest), "watch")
	return nil, true
}

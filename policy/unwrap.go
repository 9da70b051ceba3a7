package policy

import (
	"strings"
)

// maxWrappers bounds the unwrapping (nice nice nice ... rm).
const maxWrappers = 16

// systemBin are the directories whose programs rules name by their base
// name: an allow rule for "git status" also allows /usr/bin/git status,
// but not ./git status, a program the agent may have written.
var systemBin = []string{"/usr/bin/", "/bin/", "/usr/local/bin/", "/usr/sbin/", "/sbin/", "/opt/homebrew/bin/", "/usr/local/sbin/"}

// formText is the text of an argv as rules see it.
func formText(args []Arg) string {
	if len(args) == 0 {
		return ""
	}
	first := args[0]
	if first.Static {
		for _, d := range systemBin {
			if rest, ok := strings.CutPrefix(first.Value, d); ok && !strings.Contains(rest, "/") && rest != "" {
				first.Value = rest
				break
			}
		}
	}
	return normalize(joinArgs(append([]Arg{first}, args[1:]...)))
}

// unwrap looks through the wrappers in front of a command (sudo, env,
// timeout, xargs, ...), recording what each one adds, and returns the
// command that finally runs: nil when a wrapper runs none of its own
// (sudo -l, env alone) or hands it to a shell (su -c, watch).
func unwrap(j *judge, c *Command) *Command {
	cur := c.Args
	if len(cur) == 0 {
		return nil
	}
	c.Forms = []string{formText(cur)}
	for step := 0; step < maxWrappers; step++ {
		j.layer = step
		name := programName(cur[0])
		if !cur[0].Static {
			break
		}
		w := wrapper(name)
		if w == nil {
			break
		}
		next, done := w(j, cur)
		c.Wrappers = append(c.Wrappers, name)
		if done || len(next) == 0 {
			j.layer = len(c.Wrappers)
			return nil
		}
		cur = next
		c.Forms = append(c.Forms, formText(cur))
	}
	j.layer = len(c.Wrappers)
	if len(c.Wrappers) == maxWrappers && wrapper(programName(cur[0])) != nil {
		j.add(Caution, 6, "more than %d wrappers in front of the command", maxWrappers)
	}
	inner := *c
	inner.Args = cur
	inner.Name = programName(cur[0])
	inner.Function = c.Function && len(c.Wrappers) == 0
	return &inner
}

// wrapperFunc peels one wrapper off args. It returns the command the
// wrapper runs, or done when there is nothing more to unwrap.
type wrapperFunc func(j *judge, args []Arg) (next []Arg, done bool)

func wrapper(name string) wrapperFunc {
	switch name {
	case "sudo":
		return peelSudo
	case "doas":
		return privileged("doas", opts{arg: "uC", flag: "nsL"})
	case "pkexec":
		return privileged("pkexec", opts{long: map[string]bool{"user": true}, flag: ""})
	case "runuser":
		return peelRunuser
	case "su":
		return peelSu
	case "chroot":
		return peelChroot
	case "env":
		return peelEnv
	case "command":
		return peelCommand
	case "builtin", "nohup", "unbuffer":
		return simple(opts{})
	case "exec":
		return simple(opts{arg: "a", flag: "cl"})
	case "time":
		return peelTime
	case "nice":
		return peelNice
	case "timeout":
		return peelTimeout
	case "stdbuf":
		return simple(opts{arg: "ioe", long: map[string]bool{"input": true, "output": true, "error": true}})
	case "setsid":
		return simple(opts{flag: "cfw"})
	case "ionice":
		return peelIonice
	case "taskset":
		return peelTaskset
	case "chrt":
		return peelChrt
	case "xargs":
		return peelXargs
	case "watch":
		return peelWatch
	}
	return nil
}

// opts describes a wrapper's options: short ones that take an argument,
// short flags, and long options that take one.
type opts struct {
	arg, flag string
	long      map[string]bool
}

// skip returns the args after the options, calling seen for each option
// with its value. "--" ends the options; so does the first non-option.
func (o opts) skip(args []Arg, seen func(opt, val string)) []Arg {
	i := 1
	for i < len(args) {
		a := args[i].Value
		if !args[i].Static || a == "-" || !strings.HasPrefix(a, "-") {
			break
		}
		i++
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "--") {
			name, val, hasVal := strings.Cut(a[2:], "=")
			if !hasVal && o.long[name] && i < len(args) {
				val = args[i].Value
				i++
			}
			if seen != nil {
				seen("--"+name, val)
			}
			continue
		}
		for k := 1; k < len(a); k++ {
			ch := a[k]
			if strings.IndexByte(o.arg, ch) >= 0 {
				val := a[k+1:]
				if val == "" && i < len(args) {
					val = args[i].Value
					i++
				}
				if seen != nil {
					seen("-"+string(ch), val)
				}
				break
			}
			if seen != nil {
				seen("-"+string(ch), "")
			}
		}
	}
	return args[i:]
}

func simple(o opts) wrapperFunc {
	return func(j *judge, args []Arg) ([]Arg, bool) {
		return o.skip(args, nil), false
	}
}

func privileged(name string, o opts) wrapperFunc {
	return func(j *judge, args []Arg) ([]Arg, bool) {
		user := "root"
		rest := o.skip(args, func(opt, val string) {
			if opt == "-u" || opt == "--user" {
				user = val
			}
		})
		j.add(Dangerous, 7, "%s runs the command as %s", name, user)
		if len(rest) == 0 {
			j.add(Interactive, 7, "interactive: %s without a command starts a shell as %s", name, user)
		}
		return rest, false
	}
}

func peelSudo(j *judge, args []Arg) ([]Arg, bool) {
	o := opts{arg: "ugCDhprtUTR", flag: "AbEeHiKklnPSsVv",
		long: map[string]bool{"user": true, "group": true, "chdir": true, "close-from": true, "host": true,
			"prompt": true, "role": true, "type": true, "other-user": true, "command-timeout": true, "chroot": true}}
	user, shell, edit, list := "root", false, false, false
	rest := o.skip(args, func(opt, val string) {
		switch opt {
		case "-u", "--user":
			user = val
		case "-i", "-s", "--login", "--shell":
			shell = true
		case "-e", "--edit":
			edit = true
		case "-l", "-v", "-k", "-K", "-V", "--list", "--validate", "--reset-timestamp", "--remove-timestamp", "--version":
			list = true
		}
	})
	switch {
	case edit:
		j.add(Dangerous, 7, "sudo -e edits files as %s", user)
		j.add(Interactive, 7, "interactive: sudo -e opens an editor")
		return nil, true
	case len(rest) == 0 && list:
		j.add(Caution, 3, "sudo lists or refreshes the user's privileges")
		return nil, true
	case len(rest) == 0 && shell:
		j.add(Dangerous, 7, "sudo starts a shell as %s", user)
		j.add(Interactive, 7, "interactive: sudo -i/-s without a command is an interactive shell")
		return nil, true
	}
	j.add(Dangerous, 7, "sudo runs the command as %s", user)
	if shell && len(rest) > 0 {
		// sudo -s CMD runs CMD with the user's shell: $SHELL -c 'CMD'.
		j.shell(joinArgs(rest), allStatic(rest), "sudo -s")
		return nil, true
	}
	return rest, false
}

func peelRunuser(j *judge, args []Arg) ([]Arg, bool) {
	o := opts{arg: "ugGlcsw", long: map[string]bool{"user": true, "group": true, "supp-group": true, "command": true,
		"shell": true, "whitelist-environment": true}}
	user, code := "another user", ""
	hasCode := false
	rest := o.skip(args, func(opt, val string) {
		switch opt {
		case "-u", "--user", "-l":
			user = val
		case "-c", "--command":
			code, hasCode = val, true
		}
	})
	j.add(Dangerous, 7, "runuser runs the command as %s", user)
	if hasCode {
		j.shell(code, true, "runuser -c")
		return nil, true
	}
	return rest, false
}

func peelSu(j *judge, args []Arg) ([]Arg, bool) {
	o := opts{arg: "cCsgGw", flag: "lmpfP", long: map[string]bool{"command": true, "session-command": true, "shell": true,
		"group": true, "supp-group": true, "whitelist-environment": true}}
	code, hasCode, static := "", false, true
	i := 1
	for i < len(args) {
		a := args[i]
		if a.Value == "-" || a.Value == "--login" {
			i++
			continue
		}
		rest := o.skip(args[i-1:], func(opt, val string) {
			if opt == "-c" || opt == "-C" || opt == "--command" || opt == "--session-command" {
				code, hasCode = val, true
			}
		})
		consumed := len(args) - len(rest)
		if consumed <= i {
			i++ // a user name or a shell argument
			continue
		}
		i = consumed
	}
	for _, a := range args {
		if a.Value == code && !a.Static {
			static = false
		}
	}
	user := "root"
	for _, a := range args[1:] {
		if !strings.HasPrefix(a.Value, "-") && a.Value != code {
			user = a.Value
			break
		}
	}
	j.add(Dangerous, 7, "su runs as %s", user)
	if hasCode {
		j.shell(code, static, "su -c")
	} else {
		j.add(Interactive, 7, "interactive: su without -c starts a shell and asks for a password")
	}
	return nil, true
}

func peelChroot(j *judge, args []Arg) ([]Arg, bool) {
	o := opts{long: map[string]bool{"userspec": true, "groups": true}}
	rest := o.skip(args, nil)
	j.add(Dangerous, 7, "chroot needs root and changes the root directory")
	if len(rest) <= 1 {
		j.add(Interactive, 7, "interactive: chroot without a command starts a shell")
		return nil, true
	}
	return rest[1:], false
}

func peelEnv(j *judge, args []Arg) ([]Arg, bool) {
	i := 1
	var split []Arg
	for i < len(args) {
		a := args[i]
		v := a.Value
		switch {
		case !a.Static:
			return args[i:], false
		case v == "--":
			i++
		case v == "-" || v == "-i" || v == "--ignore-environment" || v == "-0" || v == "--null" || v == "-v" || v == "--debug" ||
			strings.HasPrefix(v, "--block-signal") || strings.HasPrefix(v, "--default-signal") || strings.HasPrefix(v, "--ignore-signal") ||
			v == "--list-signal-handling" || v == "-iv":
			i++
			continue
		case v == "-u" || v == "-C" || v == "--unset" || v == "--chdir":
			i += 2
			continue
		case strings.HasPrefix(v, "--unset=") || strings.HasPrefix(v, "--chdir=") || strings.HasPrefix(v, "-u") || strings.HasPrefix(v, "-C"):
			i++
			continue
		case v == "-S" || v == "--split-string" || strings.HasPrefix(v, "-S") || strings.HasPrefix(v, "--split-string="):
			s := strings.TrimPrefix(strings.TrimPrefix(v, "--split-string="), "-S")
			if s == "" || s == "--split-string" {
				i++
				if i < len(args) {
					s = args[i].Value
				}
			}
			for _, f := range strings.Fields(s) {
				split = append(split, staticArg(f))
			}
			i++
			continue
		case strings.Contains(v, "=") && !strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "="):
			j.assign(v)
			i++
			continue
		}
		break
	}
	rest := append(split, args[min(i, len(args)):]...)
	if len(rest) == 0 {
		j.add(ReadOnly, 0, "env prints the environment")
		return nil, true
	}
	return rest, false
}

func peelCommand(j *judge, args []Arg) ([]Arg, bool) {
	lookup := false
	rest := opts{flag: "pvV"}.skip(args, func(opt, _ string) {
		if opt == "-v" || opt == "-V" {
			lookup = true
		}
	})
	if lookup || len(rest) == 0 {
		j.add(ReadOnly, 0, "command -v looks a name up without running it")
		return nil, true
	}
	return rest, false
}

func peelTime(j *judge, args []Arg) ([]Arg, bool) {
	o := opts{arg: "fo", flag: "pvaq", long: map[string]bool{"format": true, "output": true}}
	rest := o.skip(args, func(opt, val string) {
		if opt == "-o" || opt == "--output" {
			j.write(staticArg(val), "time -o")
		}
	})
	return rest, false
}

func peelNice(j *judge, args []Arg) ([]Arg, bool) {
	i := 1
	for i < len(args) {
		v := args[i].Value
		switch {
		case v == "-n" || v == "--adjustment":
			i += 2
			continue
		case strings.HasPrefix(v, "--adjustment=") || strings.HasPrefix(v, "-n") || len(v) > 1 && v[0] == '-' && isNumber(v[1:]) || v == "--":
			i++
			if v == "--" {
				break
			}
			continue
		}
		break
	}
	if i >= len(args) {
		j.add(ReadOnly, 0, "nice prints the niceness")
		return nil, true
	}
	return args[i:], false
}

func peelTimeout(j *judge, args []Arg) ([]Arg, bool) {
	o := opts{arg: "sk", flag: "v", long: map[string]bool{"signal": true, "kill-after": true}}
	rest := o.skip(args, nil)
	if len(rest) < 2 {
		j.add(ReadOnly, 0, "timeout without a command does nothing")
		return nil, true
	}
	return rest[1:], false
}

func peelIonice(j *judge, args []Arg) ([]Arg, bool) {
	pid := false
	rest := opts{arg: "cnpPu", flag: "t", long: map[string]bool{"class": true, "classdata": true, "pid": true, "pgid": true, "uid": true}}.
		skip(args, func(opt, _ string) {
			pid = pid || opt == "-p" || opt == "-P" || opt == "-u" || opt == "--pid" || opt == "--pgid" || opt == "--uid"
		})
	if pid || len(rest) == 0 {
		j.add(Caution, 3, "ionice changes the I/O priority of running processes")
		return nil, true
	}
	return rest, false
}

func peelTaskset(j *judge, args []Arg) ([]Arg, bool) {
	pid := false
	rest := opts{flag: "acpf"}.skip(args, func(opt, _ string) { pid = pid || opt == "-p" })
	if pid || len(rest) < 2 {
		j.add(Caution, 3, "taskset changes the CPU affinity of a running process")
		return nil, true
	}
	return rest[1:], false
}

func peelChrt(j *judge, args []Arg) ([]Arg, bool) {
	pid := false
	rest := opts{arg: "TPD", flag: "abdfiomprRv"}.skip(args, func(opt, _ string) { pid = pid || opt == "-p" })
	if pid || len(rest) < 2 {
		j.add(Caution, 3, "chrt changes the scheduling of a running process")
		return nil, true
	}
	return rest[1:], false
}

func peelXargs(j *judge, args []Arg) ([]Arg, bool) {
	o := opts{arg: "adEeIiLlnPs", flag: "0oprtx", long: map[string]bool{"arg-file": true, "delimiter": true, "eof": true,
		"max-lines": true, "max-args": true, "max-procs": true, "max-chars": true, "replace": true, "process-slot-var": true}}
	replace := ""
	rest := o.skip(args, func(opt, val string) {
		if opt == "-I" || opt == "--replace" || opt == "-i" {
			replace = val
			if replace == "" {
				replace = "{}"
			}
		}
	})
	if len(rest) == 0 {
		j.add(ReadOnly, 0, "xargs without a command echoes its input")
		return nil, true
	}
	// The arguments xargs reads are unknown, unless echo or printf with
	// fixed words feeds it (echo / | xargs rm -rf); otherwise they are
	// judged as a dynamic word, where -I puts them or at the end.
	if from := j.cmd.Stdin.From; from != nil && replace == "" && (from.Name == "echo" || from.Name == "printf") &&
		allStatic(from.Args) && len(from.Args) > 1 {
		out := append([]Arg{}, rest...)
		for _, w := range strings.Fields(joinArgs(from.Rest())) {
			out = append(out, staticArg(w))
		}
		return out, false
	}
	input := Arg{Value: "<input of xargs>", IfEmpty: ""}
	out := make([]Arg, 0, len(rest)+1)
	for _, a := range rest {
		if replace != "" && strings.Contains(a.Value, replace) {
			out = append(out, Arg{Value: a.Value, IfEmpty: strings.ReplaceAll(a.Value, replace, "")})
			continue
		}
		out = append(out, a)
	}
	if replace == "" {
		out = append(out, input)
	}
	return out, false
}

func peelWatch(j *judge, args []Arg) ([]Arg, bool) {
	o := opts{arg: "nq", flag: "bcdegptwrx", long: map[string]bool{"interval": true, "equexit": true}}
	exec := false
	rest := o.skip(args, func(opt, _ string) { exec = exec || opt == "-x" || opt == "--exec" })
	j.add(Interactive, 1, "interactive: watch redraws the screen until it is interrupted")
	if len(rest) == 0 {
		return nil, true
	}
	if exec {
		return rest, false
	}
	// watch joins its arguments and runs them with sh -c.
	j.shell(joinArgs(rest), allStatic(rest), "watch")
	return nil, true
}

func allStatic(args []Arg) bool {
	for _, a := range args {
		if !a.Static {
			return false
		}
	}
	return true
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

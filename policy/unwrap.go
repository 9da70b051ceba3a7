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

// The options of each wrapper, from its manual (GNU coreutils, util-linux,
// sudo, OpenBSD doas, procps, GNU findutils and time).
var (
	envOpts = opts{arg: "uCSaPL", flag: "i0vU", long: " ignore-environment null unset= chdir= split-string= debug " +
		"block-signal? default-signal? ignore-signal? list-signal-handling argv0= help version "}
	timeoutOpts = opts{arg: "sk", flag: "v", long: " signal= kill-after= preserve-status foreground verbose help version "}
	niceOpts    = opts{arg: "n", long: " adjustment= help version "}
	stdbufOpts  = opts{arg: "ioe", long: " input= output= error= help version "}
	setsidOpts  = opts{flag: "cfw", long: " ctty fork wait help version "}
	nohupOpts   = opts{long: " help version "}
	chrootOpts  = opts{long: " userspec= groups= skip-chdir help version "}
	execOpts    = opts{arg: "a", flag: "cl"}
	timeOpts    = opts{arg: "fo", flag: "apqvV", long: " format= output= append portability quiet verbose help version "}
	pkexecOpts  = opts{long: " user= keep-cwd disable-internal-agent help version "}
	doasOpts    = opts{arg: "aCu", flag: "Lns"}
)

func wrapper(name string) wrapperFunc {
	switch name {
	case "sudo":
		return peelSudo
	case "sudoedit":
		return peelSudoedit
	case "doas":
		return peelDoas
	case "pkexec":
		return privileged("pkexec", pkexecOpts)
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
	case "builtin", "unbuffer":
		return simple(name, opts{})
	case "nohup":
		return simple(name, nohupOpts)
	case "exec":
		return simple(name, execOpts)
	case "time":
		return peelTime
	case "nice":
		return peelNice
	case "timeout":
		return peelTimeout
	case "stdbuf":
		return simple(name, stdbufOpts)
	case "setsid":
		return simple(name, setsidOpts)
	case "ionice":
		return peelIonice
	case "taskset":
		return peelTaskset
	case "chrt":
		return peelChrt
	case "xargs":
		return peelXargs
	case "parallel":
		return peelParallel
	case "watch":
		return peelWatch
	}
	return nil
}

// opts describes a wrapper's options as its manual does: short options
// that take an argument, short options whose argument is optional (glued
// only: xargs -i{}, watch -d), short flags, and long options, each
// written " name " (a flag), " name= " (takes an argument, glued or in
// the next word) or " name? " (takes one only as --name=VALUE).
type opts struct {
	arg, opt, flag string
	long           string
}

// skip returns the args after the options, calling seen for each option
// with its value; long options are reported by their full name, as
// getopt_long takes any unambiguous prefix (--chd=DIR is --chdir=DIR).
// "--" ends the options; so does the first operand. bad is the first
// option the manual does not list: forgebox cannot tell whether it takes
// the next word, so the words after it may or may not be the program.
func (o opts) skip(args []Arg, seen func(opt string, val Arg)) (rest []Arg, bad string) {
	i := 1
	for i < len(args) {
		a := args[i].Value
		if !args[i].Static || a == "-" || len(a) < 2 || a[0] != '-' {
			break
		}
		i++
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "--") {
			name, val, hasVal := strings.Cut(a[2:], "=")
			full, kind := o.longOpt(name)
			switch {
			case kind == 0:
				if bad == "" {
					bad = a
				}
			case kind == '=' && !hasVal && i < len(args):
				val = args[i].Value
				i++
			case kind == ' ' && hasVal:
				if bad == "" {
					bad = a // --flag=VALUE: getopt refuses it
				}
			}
			if seen != nil {
				seen("--"+full, valArg(args[i-1], val))
			}
			continue
		}
		for k := 1; k < len(a); k++ {
			ch := a[k]
			switch {
			case strings.IndexByte(o.arg, ch) >= 0:
				val := a[k+1:]
				if val == "" && i < len(args) {
					val = args[i].Value
					i++
				}
				if seen != nil {
					seen("-"+string(ch), valArg(args[i-1], val))
				}
				k = len(a)
			case strings.IndexByte(o.opt, ch) >= 0:
				if seen != nil {
					seen("-"+string(ch), valArg(args[i-1], a[k+1:]))
				}
				k = len(a)
			case strings.IndexByte(o.flag, ch) >= 0:
				if seen != nil {
					seen("-"+string(ch), Arg{})
				}
			default:
				if bad == "" {
					bad = a
				}
				if seen != nil {
					seen("-"+string(ch), Arg{})
				}
			}
		}
	}
	return args[i:], bad
}

// longOpt finds a long option by its name or an unambiguous prefix of it:
// its full name and kind (' ' a flag, '=' takes an argument, '?' an
// optional one), or kind 0 when the manual does not list it.
func (o opts) longOpt(name string) (string, byte) {
	if name == "" {
		return name, 0
	}
	found, kind, n := "", byte(0), 0
	rest := o.long
	for rest != "" {
		var f string
		f, rest, _ = strings.Cut(strings.TrimLeft(rest, " "), " ")
		if f == "" {
			continue
		}
		k := byte(' ')
		if last := f[len(f)-1]; last == '=' || last == '?' {
			f, k = f[:len(f)-1], last
		}
		if f == name {
			return f, k
		}
		if strings.HasPrefix(f, name) {
			found, kind = f, k
			n++
		}
	}
	if n == 1 {
		return found, kind
	}
	return name, 0
}

// unreadable records an option forgebox cannot read. The command is
// judged as if the option took no argument, and the line asks whatever
// that reading finds; alt is the command in the other reading (the option
// took the next word), judged too, so that the worse of the two counts.
func (j *judge) unreadable(wrapper, opt string, alt []Arg) {
	if opt == "" {
		return
	}
	j.add(Caution, 5, "forgebox cannot read %s %s: the program it runs may be another word", wrapper, opt)
	if len(alt) > 0 && alt[0].Static {
		j.argv(alt, wrapper+" "+opt)
	}
}

// after returns args[n:], or nil when there are fewer.
func after(args []Arg, n int) []Arg {
	if len(args) <= n {
		return nil
	}
	return args[n:]
}

// valArg is an option's value taken from the word w.
func valArg(w Arg, v string) Arg {
	if w.Static {
		return staticArg(v)
	}
	return Arg{Value: v, Runs: w.Runs}
}

// gnuHelp reports whether an option only prints a usage or a version.
func gnuHelp(opt string) bool { return opt == "--help" || opt == "--version" }

func simple(name string, o opts) wrapperFunc {
	return func(j *judge, args []Arg) ([]Arg, bool) {
		help := false
		rest, bad := o.skip(args, func(opt string, _ Arg) { help = help || gnuHelp(opt) })
		j.unreadable(name, bad, after(rest, 1))
		if help {
			j.add(ReadOnly, 0, "%s prints its usage or version", name)
			return nil, true
		}
		return rest, false
	}
}

func peelCommand(j *judge, args []Arg) ([]Arg, bool) {
	lookup := false
	rest, bad := opts{flag: "pvV"}.skip(args, func(opt string, _ Arg) {
		if opt == "-v" || opt == "-V" {
			lookup = true
		}
	})
	j.unreadable("command", bad, after(rest, 1))
	if lookup || len(rest) == 0 {
		j.add(ReadOnly, 0, "command -v looks a name up without running it")
		return nil, true
	}
	return rest, false
}

func peelTime(j *judge, args []Arg) ([]Arg, bool) {
	help := false
	rest, bad := timeOpts.skip(args, func(opt string, val Arg) {
		switch {
		case opt == "-o" || opt == "--output":
			j.write(val, "time -o")
		case gnuHelp(opt) || opt == "-V":
			help = true
		}
	})
	j.unreadable("time", bad, after(rest, 1))
	if help {
		j.add(ReadOnly, 0, "time prints its usage or version")
		return nil, true
	}
	return rest, false
}

func peelNice(j *judge, args []Arg) ([]Arg, bool) {
	// nice -N and nice --N: the adjustment in the old form, first only.
	if len(args) > 1 && args[1].Static && len(args[1].Value) > 1 && args[1].Value[0] == '-' &&
		isNumber(strings.TrimPrefix(strings.TrimPrefix(args[1].Value[1:], "-"), "+")) {
		args = append([]Arg{args[0]}, args[2:]...)
	}
	help := false
	rest, bad := niceOpts.skip(args, func(opt string, _ Arg) { help = help || gnuHelp(opt) })
	j.unreadable("nice", bad, after(rest, 1))
	switch {
	case help:
		j.add(ReadOnly, 0, "nice prints its usage or version")
		return nil, true
	case len(rest) == 0:
		j.add(ReadOnly, 0, "nice prints the niceness")
		return nil, true
	}
	return rest, false
}

func peelTimeout(j *judge, args []Arg) ([]Arg, bool) {
	help := false
	rest, bad := timeoutOpts.skip(args, func(opt string, _ Arg) { help = help || gnuHelp(opt) })
	j.unreadable("timeout", bad, after(rest, 2))
	switch {
	case help:
		j.add(ReadOnly, 0, "timeout prints its usage or version")
		return nil, true
	case len(rest) < 2:
		j.add(ReadOnly, 0, "timeout without a command does nothing")
		return nil, true
	case !isDuration(rest[0]):
		// timeout takes the first operand for the duration whatever it
		// holds; when it is not one, forgebox misread the options.
		j.unreadable("timeout", rest[0].Value, nil)
	}
	return rest[1:], false
}

// isDuration reports whether a word reads as timeout's DURATION: a
// number, with a fraction and a unit (s, m, h, d) allowed.
func isDuration(a Arg) bool {
	v := strings.TrimRight(a.Value, "smhd")
	if !a.Static || v == "" || len(a.Value)-len(v) > 1 {
		return !a.Static
	}
	whole, frac, _ := strings.Cut(v, ".")
	return (whole == "" || isNumber(whole)) && (frac == "" || isNumber(frac)) && whole+frac != ""
}

func peelIonice(j *judge, args []Arg) ([]Arg, bool) {
	pid := false
	rest, bad := opts{arg: "cnpPu", flag: "tV", long: " class= classdata= pid= pgid= uid= ignore help version "}.
		skip(args, func(opt string, _ Arg) {
			pid = pid || opt == "-p" || opt == "-P" || opt == "-u" || opt == "--pid" || opt == "--pgid" || opt == "--uid"
		})
	j.unreadable("ionice", bad, nil)
	if pid || len(rest) == 0 {
		j.add(Caution, 3, "ionice changes the I/O priority of running processes")
		return nil, true
	}
	return rest, false
}

func peelTaskset(j *judge, args []Arg) ([]Arg, bool) {
	pid := false
	rest, bad := opts{flag: "acpfV", long: " all-tasks cpu-list pid help version "}.skip(args, func(opt string, _ Arg) {
		pid = pid || opt == "-p" || opt == "--pid"
	})
	j.unreadable("taskset", bad, nil)
	if pid || len(rest) < 2 {
		j.add(Caution, 3, "taskset changes the CPU affinity of a running process")
		return nil, true
	}
	return rest[1:], false
}

func peelChrt(j *judge, args []Arg) ([]Arg, bool) {
	pid := false
	rest, bad := opts{arg: "TPD", flag: "abdfiomprRvhV", long: " all-tasks batch deadline fifo idle other pid rr " +
		"reset-on-fork sched-runtime= sched-period= sched-deadline= max verbose help version "}.skip(args, func(opt string, _ Arg) {
		pid = pid || opt == "-p" || opt == "--pid"
	})
	j.unreadable("chrt", bad, nil)
	if pid || len(rest) < 2 {
		j.add(Caution, 3, "chrt changes the scheduling of a running process")
		return nil, true
	}
	return rest[1:], false
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

package policy

import "strings"

// The wrappers that run a command as another user.
var (
	// sudo 1.9: -h takes a host only as -hHOST or --host=HOST, but sudo -h
	// host cmd is read as a host too: the worse reading runs cmd.
	sudoOpts = opts{arg: "aCcDghpRrTtUu", flag: "AbBEeHiKklNnPSsVv", long: " askpass background bell chdir= chroot= " +
		"close-from= command-timeout= edit group= help host= set-home login remove-timestamp reset-timestamp list " +
		"non-interactive no-update other-user= preserve-env? preserve-groups prompt= role= stdin shell type= user= version validate "}
	runuserOpts = opts{arg: "cCgGsuw", flag: "flmpP", long: " command= session-command= fast group= supp-group= login " +
		"preserve-environment pty shell= user= whitelist-environment= help version "}
)

func privileged(name string, o opts) wrapperFunc {
	return func(j *judge, args []Arg) ([]Arg, bool) {
		user, help := "root", false
		rest, bad := o.skip(args, func(opt string, val Arg) {
			switch {
			case opt == "-u" || opt == "--user":
				user = val.Value
			case gnuHelp(opt):
				help = true
			}
		})
		j.unreadable(name, bad, after(rest, 1))
		if help {
			j.add(ReadOnly, 0, "%s prints its usage or version", name)
			return nil, true
		}
		j.add(Dangerous, 7, "%s runs the command as %s", name, user)
		if len(rest) == 0 {
			j.add(Interactive, 7, "interactive: %s without a command starts a shell as %s", name, user)
		}
		return rest, false
	}
}

func peelDoas(j *judge, args []Arg) ([]Arg, bool) {
	user, clear, check := "root", false, false
	rest, bad := doasOpts.skip(args, func(opt string, val Arg) {
		switch opt {
		case "-u":
			user = val.Value
		case "-L":
			clear = true
		case "-C":
			check = true
		}
	})
	j.unreadable("doas", bad, after(rest, 1))
	switch {
	case clear:
		j.add(Caution, 3, "doas -L forgets the user's authentication")
		return nil, true
	case check:
		j.add(ReadOnly, 0, "doas -C checks the configuration without running anything")
		return nil, true
	}
	j.add(Dangerous, 7, "doas runs the command as %s", user)
	if len(rest) == 0 {
		j.add(Interactive, 7, "interactive: doas without a command starts a shell as %s", user)
		return nil, true
	}
	return rest, false
}

func peelSudoedit(j *judge, args []Arg) ([]Arg, bool) {
	j.add(Dangerous, 7, "sudoedit edits files as root")
	j.add(Interactive, 7, "interactive: sudoedit opens an editor")
	return nil, true
}

func peelSudo(j *judge, args []Arg) ([]Arg, bool) {
	user, shell, edit, list, info, help := "root", false, false, false, false, false
	rest, bad := sudoOpts.skip(args, func(opt string, val Arg) {
		switch opt {
		case "-u", "--user":
			user = val.Value
		case "-i", "-s", "--login", "--shell":
			shell = true
		case "-e", "--edit":
			edit = true
		case "-l", "--list":
			list = true
		case "-v", "-K", "-V", "--validate", "--remove-timestamp", "--version":
			info = true
		case "-k", "--reset-timestamp":
			info = info || len(args) == 2
		case "--help":
			help = true
		case "-h":
			help = help || len(args) == 2 // sudo -h alone; -h HOST otherwise
		case "-D", "--chdir":
			j.ctx = j.ctx.chdirTo(val)
		}
	})
	j.unreadable("sudo", bad, after(rest, 1))
	switch {
	case help:
		j.add(ReadOnly, 0, "sudo prints its usage")
		return nil, true
	case edit:
		j.add(Dangerous, 7, "sudo -e edits files as %s", user)
		j.add(Interactive, 7, "interactive: sudo -e opens an editor")
		return nil, true
	case list:
		// sudo -l CMD says whether CMD may run; it runs nothing.
		j.add(Caution, 3, "sudo lists the user's privileges")
		return nil, true
	case len(rest) == 0 && info:
		j.add(Caution, 3, "sudo refreshes or forgets the user's credentials")
		return nil, true
	case len(rest) == 0 && shell:
		j.add(Dangerous, 7, "sudo starts a shell as %s", user)
		j.add(Interactive, 7, "interactive: sudo -i/-s without a command is an interactive shell")
		return nil, true
	case len(rest) == 0:
		j.add(Dangerous, 7, "sudo runs the command as %s", user)
		return nil, true
	}
	j.add(Dangerous, 7, "sudo runs the command as %s", user)
	if shell {
		// sudo -s CMD runs CMD with the user's shell: $SHELL -c 'CMD'.
		j.shell(joinArgs(rest), allStatic(rest), "sudo -s")
		return nil, true
	}
	return rest, false
}

// peelRunuser: runuser -u USER [--] CMD runs CMD itself; runuser [-]
// [USER [ARG]...] runs the user's shell with ARGs, like su.
func peelRunuser(j *judge, args []Arg) ([]Arg, bool) {
	u, ok := userArgs(j, "runuser", args)
	if !ok {
		return nil, true
	}
	if u.direct {
		j.add(Dangerous, 7, "runuser runs the command as %s", u.user)
		if len(u.rest) == 0 {
			j.add(Interactive, 7, "interactive: runuser without a command starts a shell as %s", u.user)
			return nil, true
		}
		return u.rest, false
	}
	u.runShell(j, "runuser")
	return nil, true
}

func peelSu(j *judge, args []Arg) ([]Arg, bool) {
	u, ok := userArgs(j, "su", args)
	if ok {
		u.runShell(j, "su")
	}
	return nil, true
}

// userRun is what su or runuser was asked for.
type userRun struct {
	user, shell string
	code        Arg
	hasCode     bool
	direct      bool  // runuser -u: the command follows, no shell
	rest        []Arg // the command (direct) or the shell's arguments
}

// userArgs reads the options of su and runuser. Both permute (su bob -c
// CMD); "-" alone means --login; the first operand is the user, the ones
// after it go to the shell. ok is false when only help was asked for.
func userArgs(j *judge, name string, args []Arg) (userRun, bool) {
	u := userRun{user: "root", shell: "sh"}
	help, userSet := false, false
	seen := func(opt string, val Arg) {
		switch opt {
		case "-c", "-C", "--command", "--session-command":
			u.code, u.hasCode = val, true
		case "-s", "--shell":
			u.shell = programName(val)
		case "-u", "--user":
			if name == "runuser" {
				u.user, u.direct, userSet = val.Value, true, true
			}
		case "--help", "--version":
			help = true
		}
	}
	for i := 1; i < len(args); {
		a := args[i]
		switch {
		case a.Static && a.Value == "-":
			i++
		case a.Static && a.Value == "--":
			if u.direct {
				u.rest = args[i+1:]
				i = len(args)
				break
			}
			if !userSet && i+1 < len(args) {
				u.user, userSet = args[i+1].Value, true
				i++
			}
			u.rest = append(u.rest, args[i+1:]...)
			i = len(args)
		case a.Static && strings.HasPrefix(a.Value, "-"):
			rest, bad := runuserOpts.skip(append([]Arg{args[0]}, args[i:]...), seen)
			j.unreadable(name, bad, nil)
			i = len(args) - len(rest)
		case u.direct:
			u.rest = args[i:]
			i = len(args)
		case !userSet:
			u.user, userSet = a.Value, true
			i++
		default:
			u.rest = append(u.rest, a)
			i++
		}
	}
	if help {
		j.add(ReadOnly, 0, "%s prints its usage or version", name)
		return u, false
	}
	return u, true
}

// runShell judges the shell su or runuser starts: -c CODE, or the
// arguments after the user (su bob script.sh), or an interactive shell.
func (u userRun) runShell(j *judge, name string) {
	j.add(Dangerous, 7, "%s runs as %s", name, u.user)
	switch {
	case u.hasCode:
		j.shell(u.code.Value, u.code.Static, name+" -c")
	case len(u.rest) > 0:
		j.argv(append([]Arg{staticArg(u.shell)}, u.rest...), name)
	default:
		j.add(Interactive, 7, "interactive: %s without -c starts a shell and asks for a password", name)
	}
}

func peelChroot(j *judge, args []Arg) ([]Arg, bool) {
	help := false
	rest, bad := chrootOpts.skip(args, func(opt string, _ Arg) { help = help || gnuHelp(opt) })
	j.unreadable("chroot", bad, after(rest, 2))
	if help {
		j.add(ReadOnly, 0, "chroot prints its usage or version")
		return nil, true
	}
	j.add(Dangerous, 7, "chroot needs root and changes the root directory")
	if len(rest) <= 1 {
		j.add(Interactive, 7, "interactive: chroot without a command starts a shell")
		return nil, true
	}
	return rest[1:], false
}

package policy

import (
	"strings"
)

// systemKnowledge covers the programs that act on the machine rather than
// on files: power, processes, users, services, schedules, mounts, the
// firewall, containers and the infrastructure tools.
func systemKnowledge(name string) func(*judge, *Command) {
	switch name {
	case "shutdown", "reboot", "poweroff", "halt", "init", "telinit":
		return judgePower
	case "systemctl", "service", "loginctl":
		return judgeSystemctl
	case "kill", "killall", "pkill", "killall5", "skill", "slay":
		return judgeKill
	case "passwd", "usermod", "useradd", "userdel", "groupadd", "groupdel", "groupmod", "chpasswd", "gpasswd", "adduser",
		"deluser", "addgroup", "delgroup", "setcap", "chsh", "chfn", "vipw", "vigr", "visudo", "newusers", "chage":
		return judgePrivilege
	case "crontab", "at", "batch":
		return judgeSchedule
	case "history":
		return judgeHistory
	case "mount", "umount", "swapon", "swapoff", "chattr", "sysctl", "modprobe", "insmod", "rmmod", "setenforce",
		"csrutil", "spctl", "launchctl", "hostnamectl", "timedatectl", "localectl", "journalctl", "dmesg", "getenforce":
		return judgeMachine
	case "iptables", "ip6tables", "iptables-restore", "ip6tables-restore", "nft", "ufw", "firewall-cmd", "pfctl", "ip", "ifconfig", "route":
		return judgeNetConfig
	case "docker", "podman", "nerdctl", "docker-compose", "podman-compose":
		return judgeDocker
	case "kubectl", "oc", "helm":
		return judgeKube
	case "terraform", "tofu", "terragrunt", "pulumi":
		return judgeInfra
	}
	return nil
}

// judgePower: turning the machine off ends every session on it, the
// agent's own included.
func judgePower(j *judge, c *Command) {
	s := scan(c.Rest(), flags{})
	switch {
	case s.has("--help", "--version"):
		j.add(ReadOnly, 0, "%s prints its usage", c.Name)
	case c.Name == "shutdown" && s.has("-c"):
		j.add(Caution, 3, "shutdown -c cancels a pending shutdown")
	case c.Name == "init" || c.Name == "telinit":
		level := ""
		if len(s.ops) > 0 {
			level = s.ops[0].Value
		}
		switch level {
		case "0", "6", "1", "s", "S", "single", "emergency", "rescue":
			j.add(Forbidden, 9, "%s %s stops or restarts the machine", c.Name, level)
		case "":
			j.add(Caution, 3, "%s without a runlevel", c.Name)
		default:
			j.add(Caution, 5, "%s %s changes the system's runlevel", c.Name, level)
		}
	default:
		j.add(Forbidden, 9, "%s turns the machine off or restarts it", c.Name)
	}
}

// judgeSystemctl: systemctl, service and loginctl by their verb.
func judgeSystemctl(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "HMtpnos", long: " host machine type property lines output signal kill-whom state root what job-mode preset-mode boot-loader-entry reboot-argument timestamp message image when "})
	ops := s.ops
	if c.Name == "service" {
		// service NAME VERB
		if len(ops) >= 2 {
			ops = []Arg{ops[1], ops[0]}
		} else if s.has("--status-all") || len(ops) == 0 {
			j.add(ReadOnly, 0, "service lists services")
			return
		}
	}
	if h, ok := s.val("-H", "--host"); ok {
		j.reach(Caution, 4, "%s acts on the remote machine %s", c.Name, h)
		// What it does there, it does on that machine, through ssh.
		defer func(start int) {
			for k := start; k < len(j.findings); k++ {
				j.findings[k].Reach = j.findings[k].Category != Forbidden
			}
		}(len(j.findings))
	}
	verb := "list-units"
	if len(ops) > 0 {
		verb = ops[0].Value
	}
	unit := ""
	if len(ops) > 1 {
		unit = ops[1].Value
	}
	switch verb {
	case "poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "hybrid-sleep", "suspend-then-hibernate", "soft-reboot",
		"rescue", "emergency", "default", "exit", "terminate-seat", "terminate-session", "kill-session", "kill-user", "terminate-user":
		j.add(Forbidden, 9, "%s %s stops the machine or the sessions on it", c.Name, verb)
	case "isolate":
		if strings.Contains(unit, "rescue") || strings.Contains(unit, "emergency") || strings.Contains(unit, "poweroff") ||
			strings.Contains(unit, "reboot") || strings.Contains(unit, "halt") {
			j.add(Forbidden, 9, "%s isolate %s stops the machine", c.Name, unit)
			return
		}
		j.add(Dangerous, 7, "%s isolate stops every unit %s does not need", c.Name, unit)
	case "stop", "disable", "mask", "kill", "set-default", "freeze", "clean":
		j.add(Caution, 5, "%s %s stops or disables %s", c.Name, verb, unit)
	case "start", "restart", "reload", "enable", "unmask", "daemon-reload", "daemon-reexec", "try-restart", "reload-or-restart",
		"try-reload-or-restart", "condrestart", "force-reload", "link", "revert", "preset", "preset-all", "set-property",
		"set-environment", "unset-environment", "import-environment", "reset-failed", "thaw", "enable-linger", "disable-linger":
		j.add(Caution, 4, "%s %s changes the services that run (%s)", c.Name, verb, unit)
	case "edit":
		j.add(Interactive, 2, "interactive: %s edit opens an editor", c.Name)
		j.add(Caution, 5, "%s edit changes the unit %s", c.Name, unit)
	case "status", "show", "cat", "help", "get-default", "show-environment", "list-units", "list-unit-files", "list-sockets",
		"list-timers", "list-jobs", "list-dependencies", "list-machines", "list-automounts", "list-paths", "list-sessions",
		"list-users", "list-seats", "is-active", "is-enabled", "is-failed", "is-system-running", "show-session",
		"show-user", "show-seat", "session-status", "user-status", "seat-status", "--version", "whoami":
		j.add(ReadOnly, 0, "%s %s only reports", c.Name, verb)
	default:
		j.add(Caution, 4, "%s %s changes the system", c.Name, verb)
	}
}

// judgeKill: signalling a process the agent started is routine; -1
// reaches every process the user owns.
func judgeKill(j *judge, c *Command) {
	switch c.Name {
	case "killall5":
		j.add(Forbidden, 9, "killall5 signals every process on the machine")
		return
	case "killall", "slay":
		j.add(Dangerous, 6, "%s signals every process with that name, whoever started it", c.Name)
		return
	case "pkill", "skill":
		j.add(Caution, 5, "%s signals every process that matches", c.Name)
		return
	}
	args := c.Rest()
	sig, i := "", 0
	for i < len(args) {
		a := args[i]
		v := a.Value
		if !a.Static || len(v) < 2 || v[0] != '-' {
			break
		}
		if v == "--" {
			i++
			break
		}
		if v == "-l" || v == "-L" || v == "--list" || v == "--table" {
			j.add(ReadOnly, 0, "kill -l lists the signals")
			return
		}
		if v == "-s" || v == "-n" || v == "--signal" {
			if i+1 < len(args) {
				sig = args[i+1].Value
			}
			i += 2
			continue
		}
		if strings.HasPrefix(v, "--signal=") || sig == "" {
			sig = v
			i++
			continue
		}
		break // a negative number after the signal: a process group
	}
	targets := args[min(i, len(args)):]
	if len(targets) == 0 {
		j.add(ReadOnly, 0, "kill without a process signals nothing")
		return
	}
	worst := finding{cat: ReadOnly, risk: -1, reason: ""}
	for _, t := range targets {
		var f finding
		switch v := t.Value; {
		case v == "-1":
			f = finding{cat: Forbidden, risk: 9, reason: "kill -1 signals every process the user can reach, ending the session"}
		case v == "0":
			f = finding{cat: Dangerous, risk: 6, reason: "kill 0 signals every process in the shell's group, forgebox's included"}
		case v == "1":
			f = finding{cat: Dangerous, risk: 7, reason: "kill 1 signals init, the first process of the system"}
		case strings.HasPrefix(v, "-") && t.Static:
			f = finding{cat: Caution, risk: 4, reason: "kill " + v + " signals a whole process group"}
		case strings.HasPrefix(v, "%"):
			f = finding{cat: SafeWrite, risk: 2, reason: "kill signals a job of this shell"}
		case !t.Static:
			f = finding{cat: Caution, risk: 3, reason: "kill signals " + v + ", a process computed at run time"}
		default:
			f = finding{cat: Caution, risk: 3, reason: "kill signals process " + v}
		}
		if worst.worse(f) {
			worst = f
		}
	}
	j.record(worst)
}

// judgePrivilege: the programs that change who may do what.
func judgePrivilege(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "sgGuUdecfp", long: " shell gid groups uid home expiredate comment "})
	switch c.Name {
	case "passwd":
		if s.has("-S", "--status") {
			j.add(ReadOnly, 0, "passwd -S shows the password status")
			return
		}
		j.add(Interactive, 2, "interactive: passwd asks for the new password")
		j.add(Dangerous, 7, "passwd changes a password")
	case "visudo", "vipw", "vigr":
		if s.has("-c", "--check") {
			j.add(ReadOnly, 0, "visudo -c checks the sudoers file")
			return
		}
		j.add(Interactive, 2, "interactive: %s opens an editor", c.Name)
		j.add(Dangerous, 7, "%s edits who may log in or use sudo", c.Name)
	case "chsh", "chfn":
		if len(s.opts) == 0 {
			j.add(Interactive, 2, "interactive: %s asks for the new values", c.Name)
		}
		j.add(Dangerous, 7, "%s changes a user's login shell or details", c.Name)
	case "setcap":
		j.add(Dangerous, 7, "setcap grants a program capabilities it keeps for every user")
	default:
		j.add(Dangerous, 7, "%s changes the system's users or groups", c.Name)
	}
}

// judgeSchedule: crontab, at and batch plant commands that run later,
// when nobody is watching.
func judgeSchedule(j *judge, c *Command) {
	if c.Name != "crontab" {
		j.add(Caution, 4, "%s schedules a command to run later", c.Name)
		j.stdinCode(c, "shell", c.Name)
		return
	}
	s := scan(c.Rest(), flags{short: "us"})
	switch {
	case s.has("-l"):
		j.add(ReadOnly, 0, "crontab -l lists the scheduled jobs")
	case s.has("-r"):
		j.add(Dangerous, 7, "crontab -r removes every scheduled job of the user")
	case s.has("-e"):
		j.add(Interactive, 2, "interactive: crontab -e opens an editor")
		j.add(Caution, 5, "crontab -e changes the user's scheduled jobs")
	default:
		j.add(Caution, 5, "crontab replaces the user's scheduled jobs")
	}
}

func judgeHistory(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "d"})
	switch {
	case s.has("-c"):
		j.add(Dangerous, 6, "history -c clears the shell's history, hiding what ran")
	case s.has("-d"):
		j.add(Caution, 4, "history -d deletes entries from the shell's history")
	default:
		j.add(ReadOnly, 0, "history lists the commands run")
	}
}

// judgeMachine: mounts, kernel settings, security switches and the
// logs, by whether they change or only report.
func judgeMachine(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "tOoLUpwnF", long: " types options label uuid output since until unit lines vacuum-size vacuum-time vacuum-files "})
	verb := ""
	if len(s.ops) > 0 {
		verb = s.ops[0].Value
	}
	switch c.Name {
	case "mount":
		if len(s.ops) == 0 && !s.has("-a", "--all") {
			j.add(ReadOnly, 0, "mount lists the mounted file systems")
			return
		}
		j.add(Dangerous, 7, "mount changes what the file system shows")
	case "umount":
		j.add(Dangerous, 7, "umount detaches a file system from under the programs using it")
	case "swapon", "swapoff":
		if s.has("-s", "--show", "--summary") {
			j.add(ReadOnly, 0, "%s lists swap areas", c.Name)
			return
		}
		j.add(Caution, 5, "%s changes the machine's swap", c.Name)
	case "chattr":
		j.add(Caution, 5, "chattr changes file attributes (+i makes a file unchangeable, even for root)")
	case "sysctl":
		if s.has("-w", "-p", "--write", "--load", "--system") || strings.Contains(verb, "=") {
			j.add(Caution, 5, "sysctl changes kernel settings")
			return
		}
		j.add(ReadOnly, 0, "sysctl reads kernel settings")
	case "modprobe", "insmod", "rmmod":
		if s.has("-n", "--dry-run", "-c", "--showconfig", "-D", "--show-depends") {
			j.add(ReadOnly, 0, "modprobe only shows what it would do")
			return
		}
		j.add(Dangerous, 7, "%s loads or unloads kernel code", c.Name)
	case "setenforce":
		if verb == "0" || strings.EqualFold(verb, "permissive") {
			j.add(Dangerous, 7, "setenforce 0 turns SELinux enforcement off")
			return
		}
		j.add(Caution, 5, "setenforce changes SELinux enforcement")
	case "csrutil", "spctl":
		if verb == "disable" || s.has("--master-disable", "--global-disable", "--disable") {
			j.add(Dangerous, 7, "%s turns off a macOS protection", c.Name)
			return
		}
		j.add(ReadOnly, 0, "%s reports the protection status", c.Name)
	case "launchctl":
		switch verb {
		case "list", "print", "blame", "help", "version", "getenv", "print-disabled", "":
			j.add(ReadOnly, 0, "launchctl %s only reports", verb)
		default:
			j.add(Caution, 5, "launchctl %s changes the services launchd runs", verb)
		}
	case "hostnamectl", "timedatectl", "localectl":
		if strings.HasPrefix(verb, "set-") || verb == "hostname" && len(s.ops) > 1 {
			j.add(Caution, 5, "%s %s changes the machine's settings", c.Name, verb)
			return
		}
		j.add(ReadOnly, 0, "%s reports the machine's settings", c.Name)
	case "journalctl", "dmesg":
		switch {
		case s.has("-f", "-w", "--follow"):
			j.add(Interactive, 1, "interactive: %s --follow waits for new messages", c.Name)
		case s.has("--rotate", "--flush", "--relinquish-var", "-c", "-C", "--clear", "--read-clear") || s.abbrev("vacuum-size", 6) || s.abbrev("vacuum-time", 8) || s.abbrev("vacuum-files", 8):
			j.add(Caution, 4, "%s deletes or rotates the system's logs", c.Name)
		default:
			j.add(ReadOnly, 0, "%s reads the system's logs", c.Name)
		}
	default:
		j.add(ReadOnly, 0, "%s only reports", c.Name)
	}
}

// judgeNetConfig: the firewall and the network configuration. Flushing
// the firewall opens the machine; a wrong route cuts it off.
func judgeNetConfig(j *judge, c *Command) {
	words := c.Rest()
	has := func(vs ...string) bool {
		for _, a := range words {
			for _, v := range vs {
				if a.Value == v {
					return true
				}
			}
		}
		return false
	}
	switch c.Name {
	case "iptables", "ip6tables":
		switch {
		case has("-L", "--list", "-S", "--list-rules", "-C", "--check") || len(words) == 0:
			j.add(ReadOnly, 0, "%s lists the firewall rules", c.Name)
		case has("-F", "--flush", "-X", "--delete-chain", "-P", "--policy"):
			j.add(Dangerous, 7, "%s flushes the firewall rules or changes their default", c.Name)
		default:
			j.add(Caution, 5, "%s changes the firewall", c.Name)
		}
	case "nft":
		switch {
		case has("flush") || has("delete") && has("table"):
			j.add(Dangerous, 7, "nft flushes or deletes firewall rules")
		case has("list") || len(words) == 0:
			j.add(ReadOnly, 0, "nft lists the firewall rules")
		default:
			j.add(Caution, 5, "nft changes the firewall")
		}
	case "ufw", "firewall-cmd", "pfctl":
		switch {
		case has("disable", "reset", "--panic-on", "-d", "-F"):
			j.add(Dangerous, 7, "%s turns the firewall off or resets it", c.Name)
		case has("status", "show", "--state", "--list-all", "--get-zones", "--get-active-zones", "-s", "app") || len(words) == 0:
			j.add(ReadOnly, 0, "%s reports the firewall's state", c.Name)
		default:
			j.add(Caution, 5, "%s changes the firewall", c.Name)
		}
	case "iptables-restore", "ip6tables-restore":
		j.add(Caution, 5, "%s replaces the firewall rules", c.Name)
	case "ip":
		if len(words) > 1 && words[0].Value == "netns" && words[1].Value == "exec" && len(words) > 3 {
			j.add(Caution, 4, "ip netns exec runs a command in another network namespace")
			j.argv(words[3:], "ip netns exec")
			return
		}
		if has("add", "del", "delete", "set", "flush", "change", "replace", "append", "prepend", "down", "up") {
			j.add(Caution, 5, "ip changes the network configuration")
			return
		}
		j.add(ReadOnly, 0, "ip shows the network configuration")
	case "ifconfig":
		if s := scan(words, flags{}); len(s.ops) > 1 {
			j.add(Caution, 5, "ifconfig changes a network interface")
			return
		}
		j.add(ReadOnly, 0, "ifconfig shows the network interfaces")
	case "route":
		if has("add", "del", "delete", "flush", "change") {
			j.add(Caution, 5, "route changes the routing table")
			return
		}
		j.add(ReadOnly, 0, "route shows the routing table")
	}
}

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
		j.add(Caution, 4, "%s acts on the remote machine %s", c.Name, h)
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
	worst := finding{ReadOnly, -1, ""}
	for _, t := range targets {
		var f finding
		switch v := t.Value; {
		case v == "-1":
			f = finding{Forbidden, 9, "kill -1 signals every process the user can reach, ending the session"}
		case v == "0":
			f = finding{Dangerous, 6, "kill 0 signals every process in the shell's group, forgebox's included"}
		case v == "1":
			f = finding{Dangerous, 7, "kill 1 signals init, the first process of the system"}
		case strings.HasPrefix(v, "-") && t.Static:
			f = finding{Caution, 4, "kill " + v + " signals a whole process group"}
		case strings.HasPrefix(v, "%"):
			f = finding{SafeWrite, 2, "kill signals a job of this shell"}
		case !t.Static:
			f = finding{Caution, 3, "kill signals " + v + ", a process computed at run time"}
		default:
			f = finding{Caution, 3, "kill signals process " + v}
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

// dockerRunValues are the long options of docker run and create that
// take a value; the first operand after the options is the image.
const dockerRunValues = " add-host annotation attach blkio-weight blkio-weight-device cap-add cap-drop cgroup-parent cgroupns cidfile " +
	"cpu-count cpu-percent cpu-period cpu-quota cpu-rt-period cpu-rt-runtime cpu-shares cpus cpuset-cpus cpuset-mems device " +
	"device-cgroup-rule device-read-bps device-read-iops device-write-bps device-write-iops detach-keys dns dns-option " +
	"dns-search domainname entrypoint env env-file expose gpus group-add health-cmd health-interval health-retries " +
	"health-start-interval health-start-period health-timeout hostname ip ip6 ipc isolation kernel-memory label label-file " +
	"link link-local-ip log-driver log-opt mac-address memory memory-reservation memory-swap memory-swappiness mount name " +
	"network net network-alias net-alias oom-score-adj pid pids-limit platform publish pull restart runtime security-opt " +
	"shm-size stop-signal stop-timeout storage-opt sysctl tmpfs ulimit user userns uts volume volume-driver volumes-from workdir "

// judgeDocker: containers are isolated until an option hands them the
// host; deleting volumes deletes data.
func judgeDocker(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "cHl", long: " config context host log-level tlscacert tlscert tlskey ", stop: true})
	ops := s.ops
	if strings.HasSuffix(c.Name, "-compose") {
		ops = append([]Arg{staticArg("compose")}, ops...)
	}
	if len(ops) == 0 {
		j.add(ReadOnly, 0, "%s prints its usage", c.Name)
		return
	}
	verb, rest := ops[0].Value, ops[1:]
	sub := ""
	switch verb {
	case "container", "image", "volume", "network", "system", "builder", "buildx", "context", "plugin", "compose", "manifest", "trust", "secret", "config", "service", "stack", "swarm", "node":
		r := scan(rest, flags{short: "fp", long: " file project-name profile env-file project-directory ", stop: true})
		if len(r.ops) > 0 {
			sub, rest = r.ops[0].Value, r.ops[1:]
		}
		switch {
		case verb == "container" && sub != "prune" && sub != "ls" && sub != "list":
			verb, sub = sub, ""
		case verb == "image" && (sub == "rm" || sub == "remove"):
			verb, sub = "rmi", ""
		case verb == "image" && (sub == "build" || sub == "pull" || sub == "push" || sub == "history" || sub == "inspect"):
			verb, sub = sub, ""
		case verb == "buildx" && sub == "build":
			verb, sub = "build", ""
		}
	}
	o := scan(rest, flags{short: "aceghlmpuvwfn", long: dockerRunValues + "filter format since until tail ", stop: verb == "run" || verb == "create" || verb == "exec"})
	force := o.has("-f", "--force")
	switch verb {
	case "system":
		if sub == "prune" {
			j.add(Dangerous, 7, "docker system prune deletes stopped containers, unused images and networks (and volumes with --volumes)")
			return
		}
		j.add(ReadOnly, 0, "docker system %s only reports", sub)
	case "volume":
		switch sub {
		case "rm", "remove", "prune":
			j.add(Dangerous, 7, "docker volume %s deletes volumes and the data in them", sub)
		case "create":
			j.add(SafeWrite, 2, "docker volume create makes a volume")
		default:
			j.add(ReadOnly, 0, "docker volume %s only reports", sub)
		}
	case "image", "container", "network", "builder", "context", "buildx", "plugin", "manifest", "trust", "secret", "config", "service", "stack", "swarm", "node":
		switch sub {
		case "prune", "rm", "remove":
			j.add(Caution, 5, "docker %s %s deletes what is unused", verb, sub)
		case "ls", "list", "inspect", "history", "":
			j.add(ReadOnly, 0, "docker %s %s only reports", verb, sub)
		default:
			j.add(Caution, 3, "docker %s %s is a subcommand forgebox does not know", verb, sub)
		}
	case "compose":
		dockerCompose(j, sub, o)
	case "rm":
		if force || o.has("-v", "--volumes") {
			j.add(Dangerous, 6, "docker rm -f kills and deletes containers, with their data")
			return
		}
		j.add(Caution, 4, "docker rm deletes stopped containers")
	case "rmi":
		if force {
			j.add(Dangerous, 6, "docker rmi -f deletes images even when containers use them")
			return
		}
		j.add(Caution, 4, "docker rmi deletes images")
	case "run", "create":
		dockerRun(j, o)
	case "exec":
		if o.has("--privileged") {
			j.add(Dangerous, 7, "docker exec --privileged runs a command with full access to the host")
		}
		if o.has("-i", "--interactive") && o.has("-t", "--tty") {
			j.add(Interactive, 2, "interactive: docker exec -it attaches a terminal")
		}
		j.add(Caution, 3, "docker exec runs a command in a running container")
	case "ps", "images", "inspect", "version", "info", "top", "port", "diff", "history", "search", "ls":
		j.add(ReadOnly, 0, "docker %s only reports", verb)
	case "logs", "events", "stats":
		if o.has("-f", "--follow") || verb == "events" || verb == "stats" && !o.has("--no-stream") {
			j.add(Interactive, 1, "interactive: docker %s follows until it is interrupted", verb)
			return
		}
		j.add(ReadOnly, 0, "docker %s only reports", verb)
	case "build":
		j.add(SafeWrite, 2, "docker build builds an image")
	case "pull":
		j.add(Caution, 3, "docker pull downloads an image")
	case "push", "login", "logout":
		j.add(Caution, 4, "docker %s acts on a registry under the user's account", verb)
	case "attach":
		j.add(Interactive, 2, "interactive: docker attach connects the terminal to a container")
	case "cp":
		j.add(Caution, 3, "docker cp copies files between a container and the host")
		if n := len(o.ops); n > 1 && !strings.Contains(o.ops[n-1].Value, ":") {
			j.write(o.ops[n-1], "docker cp")
		}
	default:
		j.add(Caution, 4, "docker %s changes containers", verb)
	}
}

// dockerRun: the options that hand the container the host.
func dockerRun(j *judge, o scanned) {
	for _, opt := range o.opts {
		v := opt.val
		switch {
		case opt.long == "privileged":
			j.add(Dangerous, 7, "docker run --privileged gives the container full access to the host")
		case opt.short == 'v' || opt.long == "volume" || opt.long == "mount":
			src, _, _ := strings.Cut(v, ":")
			if opt.long == "mount" {
				src = ""
				for _, kv := range strings.Split(v, ",") {
					if k, val, _ := strings.Cut(kv, "="); k == "source" || k == "src" {
						src = val
					}
				}
			}
			if !strings.HasPrefix(src, "/") && !strings.HasPrefix(src, "~") && !strings.HasPrefix(src, ".") {
				continue
			}
			switch p := j.place(homeArg(j, src)); {
			case strings.HasSuffix(src, "docker.sock"):
				j.add(Dangerous, 7, "docker run mounts %s: the container controls docker, and so the host", src)
			case p == PlaceRoot || p == PlaceSystemRoot || p == PlaceHomeRoot || p == PlaceSystem || p == PlaceStartup || p == PlaceDisk:
				j.add(Dangerous, 7, "docker run mounts the host's %s into the container", src)
			}
		case opt.long == "pid" || opt.long == "net" || opt.long == "network" || opt.long == "ipc" || opt.long == "uts" || opt.long == "userns" || opt.long == "cgroupns":
			if v == "host" {
				j.add(Caution, 5, "docker run shares the host's %s namespace", opt.long)
			}
		case opt.long == "cap-add":
			if u := strings.ToUpper(v); u == "ALL" || strings.Contains(u, "SYS_ADMIN") || strings.Contains(u, "SYS_MODULE") || strings.Contains(u, "SYS_PTRACE") {
				j.add(Dangerous, 7, "docker run --cap-add %s gives the container power over the host", v)
			} else {
				j.add(Caution, 5, "docker run --cap-add %s", v)
			}
		case opt.long == "security-opt":
			if strings.Contains(v, "unconfined") || strings.Contains(v, "disable") {
				j.add(Dangerous, 6, "docker run --security-opt %s turns a protection off", v)
			}
		case opt.long == "device":
			j.add(Caution, 5, "docker run gives the container the host device %s", v)
		}
	}
	if o.has("-i", "--interactive") && o.has("-t", "--tty") && !o.has("-d", "--detach") {
		j.add(Interactive, 2, "interactive: docker run -it attaches a terminal")
	}
	image := "an image"
	if len(o.ops) > 0 {
		image = o.ops[0].Value
	}
	j.add(Caution, 4, "docker run starts a container from %s", image)
}

func dockerCompose(j *judge, sub string, o scanned) {
	switch sub {
	case "down":
		if o.has("-v", "--volumes") {
			j.add(Dangerous, 7, "docker compose down -v deletes the project's volumes and their data")
			return
		}
		j.add(Caution, 4, "docker compose down stops and removes the project's containers")
	case "ps", "config", "ls", "images", "top", "version", "port", "":
		j.add(ReadOnly, 0, "docker compose %s only reports", sub)
	case "logs":
		if o.has("-f", "--follow") {
			j.add(Interactive, 1, "interactive: docker compose logs -f follows until it is interrupted")
			return
		}
		j.add(ReadOnly, 0, "docker compose logs only reports")
	case "build":
		j.add(SafeWrite, 2, "docker compose build builds the project's images")
	case "pull":
		j.add(Caution, 3, "docker compose pull downloads images")
	case "exec", "run":
		j.add(Caution, 4, "docker compose %s runs a command in a service's container", sub)
	default:
		j.add(Caution, 4, "docker compose %s changes the project's containers", sub)
	}
}

// judgeKube: kubectl and helm act on a cluster, which is shared and often
// in production: deleting is dangerous, changing is asked about.
func judgeKube(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "nslfocp", long: " namespace context kubeconfig server cluster user selector filename output container field-selector kube-context "})
	verb, sub := "", ""
	if len(s.ops) > 0 {
		verb = s.ops[0].Value
	}
	if len(s.ops) > 1 {
		sub = s.ops[1].Value
	}
	if c.Name == "helm" {
		switch verb {
		case "uninstall", "delete", "del", "un":
			j.add(Dangerous, 7, "helm %s removes a release and its resources from the cluster", verb)
		case "install", "upgrade", "rollback":
			j.add(Caution, 5, "helm %s changes what runs in the cluster", verb)
		case "list", "ls", "status", "get", "show", "inspect", "template", "search", "history", "version", "lint", "env", "verify", "":
			j.add(ReadOnly, 0, "helm %s only reports", verb)
		default:
			j.add(Caution, 3, "helm %s is a subcommand forgebox does not know", verb)
		}
		return
	}
	switch verb {
	case "delete":
		j.add(Dangerous, 7, "%s delete deletes cluster resources", c.Name)
	case "drain":
		j.add(Dangerous, 6, "%s drain evicts every pod from a node", c.Name)
	case "apply", "replace", "create", "patch", "set", "scale", "label", "annotate", "taint", "autoscale", "expose", "run", "cordon", "uncordon", "certificate":
		j.add(Caution, 5, "%s %s changes the cluster", c.Name, verb)
	case "rollout":
		if sub == "status" || sub == "history" {
			j.add(ReadOnly, 0, "%s rollout %s only reports", c.Name, sub)
			return
		}
		j.add(Caution, 5, "%s rollout %s changes the cluster", c.Name, sub)
	case "edit":
		j.add(Interactive, 2, "interactive: %s edit opens an editor", c.Name)
		j.add(Caution, 5, "%s edit changes the cluster", c.Name)
	case "exec", "attach":
		if s.has("-i", "--stdin") && s.has("-t", "--tty") {
			j.add(Interactive, 2, "interactive: %s %s -it attaches a terminal", c.Name, verb)
		}
		j.add(Caution, 4, "%s %s runs a command in a pod", c.Name, verb)
	case "get", "describe", "logs", "top", "explain", "api-resources", "api-versions", "version", "cluster-info", "diff", "auth", "wait", "events", "":
		if s.has("-f", "--follow", "-w", "--watch") && verb != "diff" {
			j.add(Interactive, 1, "interactive: %s %s follows until it is interrupted", c.Name, verb)
			return
		}
		j.add(ReadOnly, 0, "%s %s only reports", c.Name, verb)
	case "config":
		switch {
		case sub == "view" || strings.HasPrefix(sub, "get-") || sub == "current-context":
			j.add(ReadOnly, 0, "%s config %s only reports", c.Name, sub)
		case strings.HasPrefix(sub, "delete-") || sub == "unset":
			j.add(Caution, 4, "%s config %s removes cluster credentials or contexts", c.Name, sub)
		default:
			j.add(Caution, 3, "%s config %s changes which cluster is used", c.Name, sub)
		}
	default:
		j.add(Caution, 4, "%s %s acts on the cluster", c.Name, verb)
	}
}

// judgeInfra: terraform, tofu and pulumi change real infrastructure; an
// apply that skips the plan's approval is asked about every time.
func judgeInfra(j *judge, c *Command) {
	var ops []string
	auto, destroy := false, false
	for _, a := range c.Rest() {
		v := strings.TrimPrefix(a.Value, "-")
		switch {
		case v == "-auto-approve" || v == "auto-approve" || strings.HasPrefix(v, "auto-approve=") && !strings.HasSuffix(v, "=false"),
			v == "yes" || v == "y" || v == "-yes" || v == "-skip-preview":
			auto = true
		case v == "destroy" && a.Value != "destroy" || v == "-destroy":
			destroy = true
		case !strings.HasPrefix(a.Value, "-"):
			ops = append(ops, a.Value)
		}
	}
	verb, sub := "", ""
	if len(ops) > 0 {
		verb = ops[0]
	}
	if len(ops) > 1 {
		sub = ops[1]
	}
	switch {
	case verb == "destroy" || verb == "down" || verb == "stack" && sub == "rm":
		j.add(Dangerous, 7, "%s %s destroys the infrastructure it manages", c.Name, verb)
	case (verb == "apply" || verb == "up" || verb == "update") && destroy:
		j.add(Dangerous, 7, "%s %s -destroy destroys the infrastructure it manages", c.Name, verb)
	case (verb == "apply" || verb == "up" || verb == "update") && auto:
		j.add(Dangerous, 7, "%s %s changes real infrastructure without asking for approval of the plan", c.Name, verb)
	case verb == "apply" || verb == "up" || verb == "update":
		j.add(Interactive, 2, "interactive: %s %s asks for approval at the terminal", c.Name, verb)
		j.add(Caution, 5, "%s %s changes real infrastructure", c.Name, verb)
	case verb == "plan" || verb == "preview" || verb == "init" || verb == "get" || verb == "test":
		j.add(Caution, 3, "%s %s reads remote state and runs providers", c.Name, verb)
	case verb == "fmt":
		j.add(SafeWrite, 2, "%s fmt formats the configuration", c.Name)
	case verb == "import" || verb == "taint" || verb == "untaint" || verb == "force-unlock" || verb == "refresh" || verb == "cancel" ||
		verb == "state" && (sub == "rm" || sub == "mv" || sub == "push" || sub == "replace-provider"):
		j.add(Caution, 5, "%s %s changes the recorded state of the infrastructure", c.Name, verb)
	case verb == "workspace" && sub == "delete":
		j.add(Dangerous, 6, "%s workspace delete deletes a workspace's state", c.Name)
	case verb == "console":
		j.add(Interactive, 1, "interactive: %s console waits for input", c.Name)
	case verb == "login" || verb == "logout":
		j.add(Caution, 4, "%s %s changes stored credentials", c.Name, verb)
	case verb == "validate" || verb == "version" || verb == "show" || verb == "output" || verb == "graph" || verb == "providers" ||
		verb == "state" || verb == "workspace" || verb == "config" || verb == "whoami" || verb == "about" || verb == "logs" || verb == "":
		j.add(ReadOnly, 0, "%s %s only reports", c.Name, verb)
	default:
		j.add(Caution, 4, "%s %s is a subcommand forgebox does not know", c.Name, verb)
	}
}

// packageKnowledge covers package managers: installing runs the
// packages' install scripts, removing a system package can take the
// system with it.
func packageKnowledge(name string) func(*judge, *Command) {
	switch name {
	case "apt", "apt-get", "aptitude", "dnf", "yum", "microdnf", "zypper", "apk", "snap", "flatpak", "port", "brew", "pkg",
		"dpkg", "rpm", "pacman", "yay", "paru", "nix-env":
		return judgeSystemPackages
	case "apt-cache", "apt-file", "dpkg-query", "rpmquery":
		return judgeReads
	case "pip", "pipx", "uv", "uvx", "poetry", "pipenv", "conda", "mamba", "micromamba":
		return judgePythonPackages
	case "npm", "pnpm", "yarn", "npx", "pnpx", "bunx", "gem", "bundle", "bundler":
		return judgeNodePackages
	case "go":
		return judgeGo
	case "cargo", "rustup":
		return judgeCargo
	}
	if strings.HasPrefix(name, "pip2") || strings.HasPrefix(name, "pip3") {
		return judgePythonPackages
	}
	return nil
}

// pkgKind is what a package manager's verb does.
type pkgKind int

const (
	pkgOther pkgKind = iota
	pkgRead
	pkgInstall
	pkgRemove
	pkgRefresh
	pkgRun
	pkgPublish
)

func judgeSystemPackages(j *judge, c *Command) {
	name := c.Name
	s := scan(c.Rest(), flags{short: "oct", long: " option config target-release root installroot repo enablerepo disablerepo "})
	verb := ""
	if len(s.ops) > 0 {
		verb = s.ops[0].Value
	}
	kind := pkgOther
	switch name {
	case "pacman", "yay", "paru":
		for _, o := range s.opts {
			switch {
			case o.short == 'S' || o.long == "sync" || o.short == 'U' || o.long == "upgrade":
				kind = pkgInstall
			case o.short == 'R' || o.long == "remove":
				kind = pkgRemove
			case o.short == 'Q' || o.long == "query" || o.short == 'F' || o.long == "files":
				kind = pkgRead
			}
		}
		if kind == pkgInstall && s.has("-s", "-i", "-l", "--search", "--info", "--list") {
			kind = pkgRead
		}
	case "dpkg", "rpm", "nix-env":
		switch {
		case s.has("-i", "--install", "-U", "--upgrade", "--unpack", "--configure"):
			kind = pkgInstall
		case s.has("-r", "-P", "-e", "--remove", "--purge", "--erase", "--uninstall"):
			kind = pkgRemove
		default:
			kind = pkgRead
		}
	default:
		switch verb {
		case "install", "in", "i", "reinstall", "upgrade", "full-upgrade", "dist-upgrade", "build-dep", "groupinstall",
			"localinstall", "distro-sync", "downgrade", "dup", "patch", "add", "refresh", "tap", "selfupdate", "fix":
			kind = pkgInstall
		case "update", "up":
			kind = pkgRefresh
			if name == "dnf" || name == "yum" || name == "microdnf" || name == "zypper" || name == "port" {
				kind = pkgInstall
			}
		case "remove", "purge", "autoremove", "autopurge", "erase", "rm", "groupremove", "del", "delete", "uninstall", "untap", "cleanup":
			kind = pkgRemove
		case "list", "ls", "search", "se", "show", "info", "policy", "depends", "rdepends", "changelog", "showsrc", "madison",
			"provides", "what-provides", "repolist", "check-update", "deplist", "repoquery", "history", "find", "deps", "uses",
			"outdated", "config", "doctor", "leaves", "home", "installed", "--version", "--prefix", "":
			kind = pkgRead
		case "clean", "autoclean", "makecache", "download", "source", "cache", "fetch":
			j.add(SafeWrite, 2, "%s %s cleans or fills the package cache", name, verb)
			return
		case "edit-sources":
			j.add(Interactive, 2, "interactive: %s edit-sources opens an editor", name)
			return
		case "run":
			kind = pkgRun
		}
	}
	user := name == "brew" // Homebrew installs for the user, not as root
	switch kind {
	case pkgRead:
		j.add(ReadOnly, 0, "%s only queries packages", name)
	case pkgInstall:
		if user {
			j.add(Caution, 3, "%s %s installs packages", name, verb)
			return
		}
		j.add(Caution, 5, "%s installs system packages; their install scripts run as root", name)
	case pkgRemove:
		j.add(Caution, 4, "%s removes packages; programs that need them stop working", name)
	case pkgRefresh:
		j.add(Caution, 3, "%s %s refreshes the package lists", name, verb)
	case pkgRun:
		j.add(Caution, 3, "%s run runs an installed application", name)
	default:
		j.add(Caution, 4, "%s %s changes the system's packages", name, verb)
	}
}

// pipVerb says what a pip verb does.
func pipVerb(verb string) pkgKind {
	switch verb {
	case "install", "download", "wheel", "add", "sync", "lock", "update", "upgrade", "inject", "create", "i":
		return pkgInstall
	case "uninstall", "remove", "rm":
		return pkgRemove
	case "list", "show", "freeze", "check", "help", "debug", "inspect", "index", "hash", "search", "info", "tree", "dir",
		"activate", "deactivate", "env", "--version", "-V", "":
		return pkgRead
	case "run", "exec", "x":
		return pkgRun
	case "publish", "upload":
		return pkgPublish
	}
	return pkgOther
}

// judgePythonPackages: pip and the tools around it (uv, pipx, poetry,
// conda). Their run verbs run the named program, judged as such.
func judgePythonPackages(j *judge, c *Command) {
	name := c.Name
	s := scan(c.Rest(), flags{short: "rceitfCpn", long: " requirement constraint editable target index-url extra-index-url find-links " +
		"prefix root src python log cache-dir proxy timeout retries platform python-version implementation abi " +
		"config-settings global-option upgrade-strategy progress-bar exists-action trusted-host cert client-cert " +
		"no-binary only-binary format report with directory project name prefix file channel ", stop: name == "uvx"})
	ops := s.ops
	if name == "uvx" {
		j.add(SafeWrite, 2, "uvx runs a tool, downloading it when it is missing")
		if len(ops) > 0 {
			j.argv(ops, "uvx")
		}
		return
	}
	verb := ""
	if len(ops) > 0 {
		verb, ops = ops[0].Value, ops[1:]
	}
	if (name == "uv" && (verb == "pip" || verb == "tool")) || (name == "conda" || name == "mamba" || name == "micromamba") && verb == "env" {
		if len(ops) > 0 {
			verb, ops = ops[0].Value, ops[1:]
		}
	}
	switch kind := pipVerb(verb); {
	case kind == pkgInstall:
		switch {
		case asRoot(c):
			j.add(Dangerous, 7, "%s %s installs packages system-wide as root", name, verb)
		case s.has("--break-system-packages"):
			j.add(Caution, 5, "%s %s --break-system-packages overrides the protection of the system's Python", name, verb)
		default:
			j.add(Caution, 3, "%s %s installs packages; their build and setup code runs", name, verb)
		}
		if t, ok := s.val("-t", "--target", "--prefix", "--root"); ok {
			j.write(staticArg(t), name+" --target")
		}
	case kind == pkgRemove:
		if asRoot(c) {
			j.add(Dangerous, 7, "%s %s removes system-wide packages as root", name, verb)
			return
		}
		j.add(Caution, 4, "%s %s removes packages", name, verb)
	case kind == pkgRead:
		j.add(ReadOnly, 0, "%s %s only reports", name, verb)
	case kind == pkgRun:
		j.add(SafeWrite, 2, "%s %s runs a program in the project's environment", name, verb)
		if len(ops) > 0 && strings.HasSuffix(ops[0].Value, ".py") {
			ops = append([]Arg{staticArg("python")}, ops...)
		}
		if len(ops) > 0 {
			j.argv(ops, name+" "+verb)
		}
	case kind == pkgPublish:
		j.add(Caution, 5, "%s %s publishes to a package index under the user's account", name, verb)
	case verb == "build" || verb == "venv" || verb == "init" || verb == "new" || verb == "python" || verb == "cache" || verb == "clean" || verb == "fmt" || verb == "format":
		j.add(SafeWrite, 2, "%s %s builds or sets up the project", name, verb)
	case verb == "shell":
		j.add(Interactive, 2, "interactive: %s shell starts a shell", name)
	default:
		j.add(Caution, 3, "%s %s is a subcommand forgebox does not know", name, verb)
	}
}

// npmVerb says what an npm, pnpm, yarn or gem verb does.
func npmVerb(verb string) pkgKind {
	switch verb {
	case "install", "i", "in", "ins", "inst", "insta", "instal", "isnt", "isntal", "add", "ci", "clean-install", "install-test",
		"it", "install-ci-test", "update", "up", "upgrade", "udpate", "link", "ln", "rebuild", "rb", "dedupe", "ddp", "prune",
		"import", "fetch", "create", "innit", "lock", "cache", "package", "cleanup":
		return pkgInstall
	case "uninstall", "un", "unlink", "remove", "rm", "r":
		return pkgRemove
	case "test", "t", "tst", "run", "run-script", "rum", "urn", "start", "stop", "restart", "build", "node", "version", "pack", "binstubs", "dev", "lint":
		return pkgRun
	case "exec", "x", "dlx":
		return pkgOther
	case "publish", "unpublish", "deprecate", "dist-tag", "owner", "access", "team", "org", "token", "adduser", "login",
		"logout", "star", "hook", "profile", "push", "yank", "signin", "signout":
		return pkgPublish
	case "ls", "list", "la", "ll", "view", "v", "info", "show", "outdated", "search", "s", "se", "find", "get", "help",
		"docs", "repo", "bugs", "root", "prefix", "bin", "whoami", "ping", "doctor", "explain", "why", "query", "fund", "audit",
		"sbom", "diff", "check", "versions", "contents", "specification", "env", "which", "platform", "query-args", "":
		return pkgRead
	}
	return -1
}

// judgeNodePackages: npm, pnpm, yarn and npx, and Ruby's gem and bundle,
// which work the same way.
func judgeNodePackages(j *judge, c *Command) {
	name := c.Name
	s := scan(c.Rest(), flags{short: "wpcC", long: " prefix workspace registry tag otp access cache userconfig globalconfig loglevel " +
		"location omit include install-strategy before script-shell package call filter dir ", stop: name == "npx" || name == "pnpx" || name == "bunx"})
	global := s.has("-g", "--global") || s.has("--location") && strings.Contains(c.Text(), "global")
	ops := s.ops
	if name == "npx" || name == "pnpx" || name == "bunx" {
		j.add(SafeWrite, 2, "%s runs a package's program, downloading it when it is missing", name)
		if code, ok := s.val("-c", "--call"); ok {
			j.shell(code, true, name+" -c")
		}
		if len(ops) > 0 {
			j.argv(ops, name)
		}
		return
	}
	verb := ""
	if len(ops) > 0 {
		verb, ops = ops[0].Value, ops[1:]
	}
	if name == "yarn" && verb == "global" {
		global = true
		if len(ops) > 0 {
			verb, ops = ops[0].Value, ops[1:]
		}
	}
	if (name == "yarn" || name == "bundle" || name == "bundler") && verb == "" {
		verb = "install"
	}
	if verb == "config" || verb == "c" {
		if len(ops) > 0 && (ops[0].Value == "get" || ops[0].Value == "list" || ops[0].Value == "ls") {
			j.add(ReadOnly, 0, "%s config only reports", name)
			return
		}
		j.add(Caution, 3, "%s config changes the package manager's settings", name)
		return
	}
	switch kind := npmVerb(verb); {
	case kind == pkgInstall:
		switch {
		case asRoot(c):
			j.add(Dangerous, 7, "%s %s installs packages system-wide as root", name, verb)
		case global:
			j.add(Caution, 4, "%s %s -g installs packages for the whole user account", name, verb)
		default:
			j.add(Caution, 3, "%s %s installs packages; their install scripts run", name, verb)
		}
	case kind == pkgRemove:
		switch {
		case global || asRoot(c):
			j.add(Dangerous, 6, "%s %s -g removes a globally installed package", name, verb)
			return
		case name == "gem":
			j.add(Caution, 4, "gem %s removes an installed gem", verb)
			return
		}
		j.add(Caution, 3, "%s %s removes packages from the project", name, verb)
	case kind == pkgRun:
		j.add(SafeWrite, 2, "%s %s runs the project's script", name, verb)
	case kind == pkgPublish:
		j.add(Caution, 5, "%s %s acts on the package registry under the user's account", name, verb)
	case kind == pkgRead:
		if verb == "audit" && len(ops) > 0 && ops[0].Value == "fix" {
			j.add(Caution, 3, "%s audit fix installs updated packages", name)
			return
		}
		j.add(ReadOnly, 0, "%s %s only reports", name, verb)
	case verb == "exec" || verb == "x" || verb == "dlx":
		j.add(SafeWrite, 2, "%s %s runs a package's program", name, verb)
		if len(ops) > 0 {
			j.argv(ops, name+" "+verb)
		}
	case name == "yarn" || name == "pnpm":
		j.add(SafeWrite, 2, "%s %s runs the project's script", name, verb) // yarn build is yarn run build
	case name == "bundle" || name == "bundler":
		j.add(Caution, 3, "bundle %s is a subcommand forgebox does not know", verb)
	default:
		j.add(Caution, 3, "%s %s is a subcommand forgebox does not know", name, verb)
	}
}

// goValues are the go command's flags that take a value.
const goValues = " o C p ldflags gcflags asmflags gccgoflags tags mod modfile pkgdir toolexec exec overlay pgo installsuffix " +
	"buildmode compiler covermode coverpkg coverprofile cpuprofile memprofile blockprofile mutexprofile trace outputdir " +
	"run skip bench benchtime count cpu parallel timeout list fuzz fuzztime fuzzminimizetime shuffle vet "

// judgeGo: building and testing the workspace is the agent's daily work;
// fetching code from elsewhere is asked about.
func judgeGo(j *judge, c *Command) {
	var ops []Arg
	var opts []option
	args := c.Rest()
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		if !args[i].Static || !strings.HasPrefix(v, "-") || len(v) < 2 {
			ops = append(ops, args[i])
			continue
		}
		name, val, has := strings.Cut(strings.TrimLeft(v, "-"), "=")
		if !has && strings.Contains(goValues, " "+name+" ") && i+1 < len(args) {
			i++
			val = args[i].Value
		}
		opts = append(opts, option{long: name, val: val})
	}
	s := scanned{opts: opts, ops: ops, dd: -1}
	verb := ""
	if len(ops) > 0 {
		verb, ops = ops[0].Value, ops[1:]
	}
	remote := false
	for _, a := range ops {
		remote = remote || strings.Contains(a.Value, "@")
	}
	if out, ok := s.val("--o"); ok && (verb == "build" || verb == "test") {
		j.write(staticArg(out), "go "+verb+" -o")
	}
	if x, ok := s.val("--exec", "--toolexec"); ok {
		j.add(Caution, 4, "go %s runs the programs it builds through %s", verb, x)
	}
	switch verb {
	case "build", "vet", "fmt", "fix", "tool", "work", "clean", "telemetry":
		j.add(SafeWrite, 2, "go %s builds, checks or formats the packages", verb)
	case "mod":
		j.add(SafeWrite, 2, "go mod manages the module's dependencies")
	case "test":
		j.add(SafeWrite, 2, "go test builds and runs the tests")
	case "run":
		if remote {
			j.add(Caution, 3, "go run downloads and runs %s", ops[0].Value)
			return
		}
		j.add(SafeWrite, 2, "go run builds and runs the program")
	case "install", "get":
		j.add(Caution, 3, "go %s downloads or installs modules", verb)
	case "generate":
		j.add(Caution, 3, "go generate runs the commands in //go:generate comments")
	case "env":
		if s.has("--w", "--u") {
			j.add(Caution, 3, "go env -w changes the user's Go environment")
			return
		}
		j.add(ReadOnly, 0, "go env prints the Go environment")
	case "list", "doc", "version", "help", "":
		j.add(ReadOnly, 0, "go %s only reports", verb)
	default:
		j.add(Caution, 3, "go %s is a subcommand forgebox does not know", verb)
	}
}

func judgeCargo(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "pjFZ", long: " package jobs features target target-dir manifest-path config color profile bin example test bench message-format ", stop: true})
	ops := s.ops
	if len(ops) > 0 && strings.HasPrefix(ops[0].Value, "+") {
		ops = ops[1:] // cargo +nightly build
	}
	verb := ""
	if len(ops) > 0 {
		verb = ops[0].Value
	}
	if c.Name == "rustup" {
		switch verb {
		case "show", "which", "doc", "check", "--version", "-V", "help", "":
			j.add(ReadOnly, 0, "rustup %s only reports", verb)
		case "run":
			j.add(SafeWrite, 2, "rustup run runs a toolchain's program")
			if len(ops) > 2 {
				j.argv(ops[2:], "rustup run")
			}
		default:
			j.add(Caution, 3, "rustup %s installs or changes toolchains", verb)
		}
		return
	}
	switch verb {
	case "build", "b", "check", "c", "test", "t", "run", "r", "bench", "fmt", "clippy", "doc", "d", "clean", "new", "init",
		"update", "fetch", "generate-lockfile", "vendor", "package", "add", "remove", "rm", "fix", "nextest":
		j.add(SafeWrite, 2, "cargo %s builds, checks or manages the project", verb)
	case "tree", "metadata", "locate-project", "read-manifest", "verify-project", "pkgid", "search", "version", "help", "":
		j.add(ReadOnly, 0, "cargo %s only reports", verb)
	case "install", "uninstall", "binstall":
		j.add(Caution, 3, "cargo %s installs or removes a binary for the user", verb)
	case "publish", "yank", "owner", "login", "logout":
		j.add(Caution, 5, "cargo %s acts on crates.io under the user's account", verb)
	default:
		j.add(Caution, 3, "cargo %s runs a plugin forgebox does not know", verb)
	}
}

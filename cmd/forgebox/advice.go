package main

import (
	"runtime"
	"strings"

	"github.com/forgebox/forgebox/sandbox"
	"github.com/forgebox/forgebox/shellquote"
)

// fixFor says how to get a missing capability, from the facts the doctor
// found. This is the only place that turns causes into advice.
func fixFor(c sandbox.Check, r sandbox.Report) string {
	switch c.Name {
	case sandbox.CheckUserNS:
		return userNSAdvice(r, true)
	case sandbox.CheckSandbox:
		return launchAdvice(c, r)
	case sandbox.CheckMountAPI:
		return "upgrade to Linux 5.12 or later"
	case sandbox.CheckLandlock:
		if strings.Contains(c.Detail, "lacks") {
			return "use Linux 6.12 or later (Landlock ABI 6), or pass --best-effort to run without the missing Landlock features"
		}
		if strings.Contains(c.Detail, "not enabled at boot") {
			return "add landlock to the kernel's lsm= boot parameter (e.g. lsm=landlock,lockdown,yama,apparmor,bpf) and reboot"
		}
		return "use a kernel built with CONFIG_SECURITY_LANDLOCK (Linux 5.13 or later)"
	case sandbox.CheckSeccomp:
		return "use a kernel built with CONFIG_SECCOMP_FILTER"
	case sandbox.CheckCgroups:
		if r.Root {
			return "mount the cgroup filesystem at /sys/fs/cgroup"
		}
		return "run under a systemd user session with cgroup delegation (systemd-run --user --scope), or as root"
	case sandbox.CheckPTY:
		return "mount devpts at /dev/pts"
	}
	return ""
}

// launchAdvice is the fix for a test sandbox that did not start: the
// user-namespace fix when namespaces were refused, else a pointer to the
// failed checks that say what is missing (not "see forgebox doctor", which
// is where it is printed).
func launchAdvice(c sandbox.Check, r sandbox.Report) string {
	if ns, ok := r.Find(sandbox.CheckUserNS); c.Values["layer"] == "namespaces" || ok && !ns.OK {
		return userNSAdvice(r, c.Values["layer"] == "namespaces")
	}
	var missing []string
	for _, o := range r.Checks {
		if !o.OK && o.Required && o.Name != sandbox.CheckSandbox {
			missing = append(missing, o.Name)
		}
	}
	if len(missing) > 0 {
		return "see the fix for " + strings.Join(missing, " and ") + "; --best-effort runs without what is missing and reports it"
	}
	if r.Container != "" {
		return userNSAdvice(r, false)
	}
	return "forgebox doctor --json gives the failed step and errno; --best-effort runs without the missing layers and reports them"
}

// userNSAdvice says how to get user namespaces, from what the doctor's
// user_namespaces check found refusing them ("blocked_by"); failed says a
// namespace was actually refused, so that a profile confining forgebox is
// a suspect too. Every fix that loosens a sysctl says what it costs: each
// opens the kernel's user-namespace code, where many local privilege
// escalations were found, to every program on the host. No fix involves
// setuid: forgebox needs no privilege and must not be given any.
func userNSAdvice(r sandbox.Report, failed bool) string {
	ns, _ := r.Find(sandbox.CheckUserNS)
	v := ns.Values
	const price = " (persist it in /etc/sysctl.d/); that opens the kernel's user-namespace code, where many local privilege escalations were found, to every program on this host"
	var fixes []string
	for _, code := range strings.Split(v["blocked_by"], ",") {
		switch code {
		case "user.max_user_namespaces":
			fixes = append(fixes, "user namespaces are switched off (user.max_user_namespaces=0): allow them with `sudo sysctl -w user.max_user_namespaces=15000`"+price)
		case "kernel.unprivileged_userns_clone":
			fixes = append(fixes, "this kernel leaves user namespaces to root (kernel.unprivileged_userns_clone=0): allow them with `sudo sysctl -w kernel.unprivileged_userns_clone=1`"+price)
		case "kernel.apparmor_restrict_unprivileged_userns":
			fixes = append(fixes, appArmorAdvice(v["executable"], v["executable_root_only"] == "true"))
		}
	}
	profile := appArmorProfile(v["apparmor_label"])
	switch {
	case len(fixes) > 0:
		return strings.Join(fixes, "; and ")
	case failed && v["kernel.apparmor_restrict_unprivileged_userns"] == "1" && profile != "" && profile != "unconfined" && !r.Root:
		return "forgebox runs under the AppArmor profile " + profile + ", and with kernel.apparmor_restrict_unprivileged_userns=1 that profile decides: " +
			"add the rule `userns,` to it and reload it (`sudo apparmor_parser -r /etc/apparmor.d/FILE`)"
	case r.Container != "":
		return "this " + r.Container + " container forbids namespaces: run it with --security-opt seccomp=unconfined --security-opt apparmor=unconfined (or --privileged), or run forgebox on the host"
	}
	return "see forgebox doctor; --best-effort runs without the missing layers and reports them"
}

// appArmorAdvice is the fix for Ubuntu's restriction: a profile that grants
// forgebox alone `userns` and confines nothing else (forgebox confines its
// commands itself), or the sysctl for everything. AppArmor attaches the
// profile by path, so the path must be one only root can replace, or any
// program could get user namespaces by putting itself there.
func appArmorAdvice(exe string, rootOnly bool) string {
	path, install := "/usr/local/bin/forgebox", ""
	switch {
	case rootOnly && plainPath(exe):
		path = exe
	case exe != "":
		install = "sudo install -m 0755 " + shellquote.Quote(exe) + " " + path + " && "
	default:
		install = "sudo install -m 0755 PATH-OF-FORGEBOX " + path + " && "
	}
	return "AppArmor gives unconfined programs no capabilities in the user namespaces they create " +
		"(kernel.apparmor_restrict_unprivileged_userns=1, Ubuntu 23.10 and later), and the sandbox needs them there. " +
		"Allow forgebox alone with an AppArmor profile granting `userns`: " + install +
		`printf 'abi <abi/4.0>,\ninclude <tunables/global>\nprofile forgebox ` + path + ` flags=(unconfined) {\n  userns,\n}\n' | sudo tee /etc/apparmor.d/forgebox >/dev/null && ` +
		"sudo apparmor_parser -r /etc/apparmor.d/forgebox, then run " + path +
		" (the profile attaches to that path, which only root may write: a profile for a path you can write would give user namespaces to any program you put there). " +
		"Or lift the restriction for every program with `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`" +
		" (persist it in /etc/sysctl.d/): that undoes Ubuntu's hardening and opens the kernel's user-namespace code, where many local privilege escalations were found, to everything on this host"
}

// plainPath reports whether a path can go into the profile and the shell
// command as it is: no quoting, no AppArmor glob characters.
func plainPath(p string) bool {
	return strings.HasPrefix(p, "/") && strings.Trim(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._+-") == ""
}

// appArmorProfile is the profile name in an AppArmor label such as
// "forgebox (unconfined)".
func appArmorProfile(label string) string {
	if i := strings.LastIndex(label, " ("); i > 0 && strings.HasSuffix(label, ")") {
		return label[:i]
	}
	return label
}

// adviceFor is the hint printed when a run fails for want of a layer.
func adviceFor(un *sandbox.UnavailableError) string { return adviceOn(runtime.GOOS, un) }

// adviceOn is adviceFor on the system goos.
func adviceOn(goos string, un *sandbox.UnavailableError) string {
	if un.Layer == "namespaces" {
		return userNSAdvice(sandbox.QuickReport(), true) + "; run forgebox doctor for details, or pass --best-effort to run without a sandbox"
	}
	if strings.Contains(un.Layer, " limit (--") && goos != "linux" {
		return "this system has nothing that enforces the limit for a process tree (macOS has no cgroups, and its rlimits are per user or not enforced); " +
			"drop the flag, or pass --best-effort to run without this limit"
	}
	if strings.Contains(un.Layer, " limit (--") {
		return "run forgebox as root, or inside a delegated cgroup v2 subtree (systemd-run --user --scope -p Delegate=yes forgebox run ...); " +
			"or drop the flag to run with the default limits, or pass --best-effort to run without this limit"
	}
	switch {
	case un.Layer == "network allowlist (--net allow)":
		return "run with --net none (no network) or --net host (the host's network) here; the allowlist needs Linux"
	case un.Layer == "network" && goos == "windows":
		return "Windows cannot take the network away from one process tree: pass --net host to run with the network, or --best-effort, which runs and reports it"
	case un.Layer == "secret hiding" && goos == "windows":
		return "pass --profile strict, which makes your whole profile unreadable to the command (grant what it needs with --ro), or --best-effort, which runs and reports it"
	case strings.HasPrefix(un.Layer, "--hide ") && goos == "windows":
		return "on Windows only paths inside your profile can be hidden, and only with --profile strict; drop the flag, or pass --best-effort"
	case un.Layer == "restricted token":
		return "forgebox could not create the restricted, Low-integrity token the sandbox runs under (Wine and some hardened policies refuse it); run forgebox doctor, or pass --best-effort to run without a sandbox"
	}
	if un.Layer == "sandbox-exec" {
		return "forgebox's macOS sandbox is /usr/bin/sandbox-exec (Seatbelt); it is part of macOS: check it is present and that forgebox is not already inside another sandbox (an app's or a terminal's); " +
			"run forgebox doctor for details, or pass --best-effort to run without a sandbox"
	}
	return "run forgebox doctor for details, or pass --best-effort to run without the missing layer"
}

// unixSocketAdvice names the seccomp refusal of Unix sockets when a run
// failed and its output, where forgebox saw it, reads like a program that
// was refused one ("error connecting to /tmp/tmux-0/default (Operation not
// permitted)", "listen unix ...: socket: operation not permitted"). It is
// a hint, not a diagnosis: the filter leaves no trace of its own.
func unixSocketAdvice(res *sandbox.Result) string {
	if res.ExitCode == 0 || res.Enforced.UnixSockets != sandbox.UnixSocketsRefused {
		return ""
	}
	var out []byte
	for _, c := range []sandbox.Captured{res.Stdout, res.Stderr} {
		out = append(append(out, c.Head...), c.Tail...)
	}
	text := strings.ToLower(string(out))
	if !strings.Contains(text, "operation not permitted") ||
		!(strings.Contains(text, "sock") || strings.Contains(text, "unix") || strings.Contains(text, "connect")) {
		return ""
	}
	return "the command may have failed on a Unix socket: forgebox refuses socket(AF_UNIX) (EPERM) so that no host socket is reachable; " +
		"if it needs its own (tmux, a database on a socket), rerun with --allow-unix-sockets, which leaves host sockets created after the start reachable"
}

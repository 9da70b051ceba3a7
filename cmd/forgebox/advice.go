package main

import (
	"strings"

	"github.com/forgebox/forgebox/sandbox"
)

// fixFor says how to get a missing capability, from the facts the doctor
// found. This is the only place that turns causes into advice.
func fixFor(c sandbox.Check, r sandbox.Report) string {
	switch c.Name {
	case sandbox.CheckUserNS, sandbox.CheckSandbox:
		return userNSAdvice(r)
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

func userNSAdvice(r sandbox.Report) string {
	ns, _ := r.Find(sandbox.CheckUserNS)
	v := ns.Values
	switch {
	case v["kernel.apparmor_restrict_unprivileged_userns"] == "1" && !r.Root:
		return "Ubuntu's AppArmor blocks unprivileged user namespaces: allow them with `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`, or install an AppArmor profile granting forgebox `userns,`"
	case v["kernel.unprivileged_userns_clone"] == "0" && !r.Root:
		return "enable unprivileged user namespaces: `sudo sysctl -w kernel.unprivileged_userns_clone=1`"
	case v["user.max_user_namespaces"] == "0":
		return "allow user namespaces: `sudo sysctl -w user.max_user_namespaces=15000`"
	case r.Container != "":
		return "this " + r.Container + " container forbids namespaces: run it with --security-opt seccomp=unconfined --security-opt apparmor=unconfined (or --privileged), or run forgebox on the host"
	}
	return "see forgebox doctor; --best-effort runs without the missing layers and reports them"
}

// adviceFor is the hint printed when a run fails for want of a layer.
func adviceFor(un *sandbox.UnavailableError) string {
	if un.Layer == "namespaces" {
		return userNSAdvice(sandbox.QuickReport()) + "; run forgebox doctor for details, or pass --best-effort to run without a sandbox"
	}
	if strings.Contains(un.Layer, " limit (--") {
		return "run forgebox as root, or inside a delegated cgroup v2 subtree (systemd-run --user --scope -p Delegate=yes forgebox run ...); " +
			"or drop the flag to run with the default limits, or pass --best-effort to run without this limit"
	}
	return "run forgebox doctor for details, or pass --best-effort to run without the missing layer"
}

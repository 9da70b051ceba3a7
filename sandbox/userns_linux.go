package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The settings that can refuse user namespaces, named by their sysctls.
// They appear in the user_namespaces check's values ("blocked_by", a
// comma-separated list) as the stable codes of what refused them.
const (
	sysctlMaxUserNS         = "user.max_user_namespaces"
	sysctlUnprivilegedClone = "kernel.unprivileged_userns_clone"
	sysctlAppArmorRestrict  = "kernel.apparmor_restrict_unprivileged_userns"
)

// usernsFacts are the readings that decide whether this process may create
// a user namespace. An empty string is a setting this kernel does not have.
type usernsFacts struct {
	// MaxUserNS is user.max_user_namespaces: 0 refuses every new user
	// namespace, root's too (RHEL 7, hardening guides).
	MaxUserNS string
	// UnprivilegedClone is kernel.unprivileged_userns_clone, a patch
	// carried by Debian, Ubuntu and linux-hardened: 0 leaves user
	// namespaces to CAP_SYS_ADMIN.
	UnprivilegedClone string
	// AppArmorRestrict is kernel.apparmor_restrict_unprivileged_userns
	// (Ubuntu 23.10 and later, on by default): 1 sends an unconfined
	// process that creates a user namespace into AppArmor's
	// unprivileged_userns profile, which denies every capability inside,
	// so writing the namespace's uid map fails.
	AppArmorRestrict string
	// AppArmorLabel is this process's AppArmor confinement as the kernel
	// prints it ("unconfined", "forgebox (unconfined)"); empty when
	// unknown.
	AppArmorLabel string
	// Privileged is CAP_SYS_ADMIN in the effective set, which exempts a
	// process from all but user.max_user_namespaces.
	Privileged bool
}

// usernsBlock is one setting that refuses user namespaces to this process.
type usernsBlock struct {
	Sysctl string // one of the sysctl* names above
	Detail string
}

// usernsBlocks lists, in the order the kernel applies them, the settings
// that refuse this process a user namespace; none means they are allowed
// as far as the settings go (a container's seccomp filter or an AppArmor
// profile without `userns` can still refuse them: the real launch is the
// test).
func usernsBlocks(f usernsFacts) []usernsBlock {
	var b []usernsBlock
	if f.MaxUserNS == "0" {
		b = append(b, usernsBlock{sysctlMaxUserNS,
			"user.max_user_namespaces is 0: the kernel refuses every new user namespace, root's too"})
	}
	if f.Privileged {
		return b
	}
	if f.UnprivilegedClone == "0" {
		b = append(b, usernsBlock{sysctlUnprivilegedClone,
			"kernel.unprivileged_userns_clone is 0: only root (CAP_SYS_ADMIN) may create user namespaces"})
	}
	if f.AppArmorRestrict == "1" && appArmorRestricted(f.AppArmorLabel) {
		b = append(b, usernsBlock{sysctlAppArmorRestrict,
			"AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1) and forgebox runs " +
				confinement(f.AppArmorLabel) + ": a namespace it creates gets no capabilities (AppArmor's unprivileged_userns profile), " +
				"so the sandbox cannot map its uid"})
	}
	return b
}

// appArmorRestricted reports whether the restriction applies to a process
// with this label: to unconfined processes, and to those AppArmor already
// moved into unprivileged_userns. A process under a profile of its own is
// governed by that profile's `userns` rule instead.
func appArmorRestricted(label string) bool {
	p := appArmorProfile(label)
	return p == "" || p == "unconfined" || p == "unprivileged_userns"
}

// appArmorProfile is the profile name in a label such as
// "forgebox (unconfined)" or "unconfined".
func appArmorProfile(label string) string {
	label = strings.TrimSpace(label)
	if i := strings.LastIndex(label, " ("); i > 0 && strings.HasSuffix(label, ")") {
		label = label[:i]
	}
	return label
}

func confinement(label string) string {
	if p := appArmorProfile(label); p != "" && p != "unconfined" {
		return "under the AppArmor profile " + p
	}
	return "unconfined"
}

// readUsernsFacts reads the settings from /proc.
func readUsernsFacts() usernsFacts {
	f := usernsFacts{
		MaxUserNS:         readSysctl("/proc/sys/user/max_user_namespaces"),
		UnprivilegedClone: readSysctl("/proc/sys/kernel/unprivileged_userns_clone"),
		AppArmorRestrict:  readSysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"),
		Privileged:        hasCapSysAdmin(),
	}
	if f.AppArmorRestrict != "" {
		// The LSM-specific file first (Linux 5.8+): with stacked LSMs
		// attr/current belongs to whichever came first.
		if f.AppArmorLabel = readSysctl("/proc/self/attr/apparmor/current"); f.AppArmorLabel == "" {
			f.AppArmorLabel = readSysctl("/proc/self/attr/current")
		}
	}
	return f
}

func hasCapSysAdmin() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return os.Geteuid() == 0
	}
	return data[unix.CAP_SYS_ADMIN/32].Effective&(1<<(unix.CAP_SYS_ADMIN%32)) != 0
}

// userNSCheck reports whether this process may create user namespaces, with
// the raw settings, what refuses them and, where AppArmor is in the way, the
// facts an AppArmor profile for forgebox needs (its label and executable).
func userNSCheck() Check {
	exe := executable()
	return usernsCheckFrom(readUsernsFacts(), exe, rootOnly(exe))
}

// usernsCheckFrom is the check for these facts. exe is forgebox's
// executable and exeRootOnly whether only root can replace it: an AppArmor
// profile that grants user namespaces to a path its user can write grants
// them to any program that user puts there.
func usernsCheckFrom(f usernsFacts, exe string, exeRootOnly bool) Check {
	v := map[string]string{
		sysctlUnprivilegedClone: f.UnprivilegedClone,
		sysctlMaxUserNS:         f.MaxUserNS,
		sysctlAppArmorRestrict:  f.AppArmorRestrict,
	}
	if f.AppArmorRestrict == "1" {
		v["apparmor_label"] = f.AppArmorLabel
		v["executable"] = exe
		v["executable_root_only"] = strconv.FormatBool(exeRootOnly)
	}
	c := Check{Name: CheckUserNS, OK: true, Values: v, Detail: "user namespaces are allowed"}
	blocks := usernsBlocks(f)
	if len(blocks) > 0 {
		var codes, details []string
		for _, b := range blocks {
			codes, details = append(codes, b.Sysctl), append(details, b.Detail)
		}
		c.OK, c.Detail = false, strings.Join(details, "; ")
		v["blocked_by"] = strings.Join(codes, ",")
		return c
	}
	if f.AppArmorRestrict == "1" && !f.Privileged {
		c.Detail = fmt.Sprintf("user namespaces are allowed if the AppArmor profile %s grants `userns` "+
			"(kernel.apparmor_restrict_unprivileged_userns=1 applies to unconfined programs; the sandbox_launch check tries)",
			appArmorProfile(f.AppArmorLabel))
	}
	return c
}

// executable is the path AppArmor sees for this binary: symlinks resolved.
func executable() string {
	p, err := os.Executable()
	if err != nil {
		return ""
	}
	return p
}

// rootOnly reports whether only root can replace the file at path: it and
// every directory above it belong to root and are writable by no one else.
func rootOnly(path string) bool {
	if !filepath.IsAbs(path) {
		return false
	}
	for p := path; ; p = filepath.Dir(p) {
		var st unix.Stat_t
		if unix.Stat(p, &st) != nil || st.Uid != 0 || st.Mode&0o022 != 0 {
			return false
		}
		if p == "/" {
			return true
		}
	}
}

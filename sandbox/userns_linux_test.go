package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// This machine has none of the restrictions: the readings of hosts that do
// are given as facts.
func TestUsernsCheckFrom(t *testing.T) {
	ubuntu := usernsFacts{MaxUserNS: "63000", UnprivilegedClone: "1", AppArmorRestrict: "1", AppArmorLabel: "unconfined"}
	tests := []struct {
		name      string
		f         usernsFacts
		ok        bool
		blockedBy string   // values["blocked_by"]
		detail    []string // in the detail
	}{
		{"plain kernel", usernsFacts{MaxUserNS: "63000"}, true, "", []string{"allowed"}},
		{"Debian 11+ default", usernsFacts{MaxUserNS: "63000", UnprivilegedClone: "1"}, true, "", nil},
		{"Ubuntu restriction off", usernsFacts{MaxUserNS: "63000", UnprivilegedClone: "1", AppArmorRestrict: "0", AppArmorLabel: "unconfined"},
			true, "", []string{"allowed"}},
		{"Ubuntu 24.04 default, unconfined", ubuntu, false, sysctlAppArmorRestrict,
			[]string{"kernel.apparmor_restrict_unprivileged_userns=1", "runs unconfined", "no capabilities"}},
		{"Ubuntu 24.04, label unreadable", usernsFacts{AppArmorRestrict: "1"}, false, sysctlAppArmorRestrict, []string{"unconfined"}},
		{"Ubuntu 24.04, already moved to unprivileged_userns", usernsFacts{AppArmorRestrict: "1", AppArmorLabel: "unprivileged_userns (enforce)"},
			false, sysctlAppArmorRestrict, []string{"under the AppArmor profile unprivileged_userns"}},
		{"Ubuntu 24.04, forgebox's own profile", usernsFacts{AppArmorRestrict: "1", AppArmorLabel: "forgebox (unconfined)"},
			true, "", []string{"profile forgebox grants `userns`"}},
		{"Ubuntu 24.04, root", usernsFacts{AppArmorRestrict: "1", AppArmorLabel: "unconfined", Privileged: true}, true, "", []string{"allowed"}},
		{"Debian 10 default", usernsFacts{MaxUserNS: "63000", UnprivilegedClone: "0"}, false, sysctlUnprivilegedClone,
			[]string{"kernel.unprivileged_userns_clone is 0", "only root"}},
		{"Debian 10 default, root", usernsFacts{UnprivilegedClone: "0", Privileged: true}, true, "", nil},
		{"max_user_namespaces 0", usernsFacts{MaxUserNS: "0"}, false, sysctlMaxUserNS, []string{"user.max_user_namespaces is 0", "root's too"}},
		{"max_user_namespaces 0, root", usernsFacts{MaxUserNS: "0", Privileged: true}, false, sysctlMaxUserNS, nil},
		{"every restriction", usernsFacts{MaxUserNS: "0", UnprivilegedClone: "0", AppArmorRestrict: "1", AppArmorLabel: "unconfined"}, false,
			sysctlMaxUserNS + "," + sysctlUnprivilegedClone + "," + sysctlAppArmorRestrict, []string{"; "}},
		{"sysctls unreadable", usernsFacts{}, true, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := usernsCheckFrom(tt.f, "/usr/local/bin/forgebox", true)
			if c.Name != CheckUserNS || c.OK != tt.ok || c.Values["blocked_by"] != tt.blockedBy {
				t.Errorf("usernsCheckFrom(%+v) = %s ok %v blocked_by %q; want ok %v blocked_by %q",
					tt.f, c.Name, c.OK, c.Values["blocked_by"], tt.ok, tt.blockedBy)
			}
			for _, want := range tt.detail {
				if !strings.Contains(c.Detail, want) {
					t.Errorf("usernsCheckFrom(%+v).Detail = %q; want it to contain %q", tt.f, c.Detail, want)
				}
			}
			for _, k := range []string{sysctlMaxUserNS, sysctlUnprivilegedClone, sysctlAppArmorRestrict} {
				if _, ok := c.Values[k]; !ok {
					t.Errorf("usernsCheckFrom(%+v).Values lacks %s", tt.f, k)
				}
			}
			if tt.f.AppArmorRestrict == "1" && (c.Values["executable"] != "/usr/local/bin/forgebox" ||
				c.Values["executable_root_only"] != "true" || c.Values["apparmor_label"] != tt.f.AppArmorLabel) {
				t.Errorf("usernsCheckFrom(%+v).Values = %v; want the executable and label for an AppArmor profile", tt.f, c.Values)
			}
		})
	}
}

func TestAppArmorProfile(t *testing.T) {
	for label, want := range map[string]string{
		"unconfined":                       "unconfined",
		"unconfined\n":                     "unconfined",
		"forgebox (unconfined)":            "forgebox",
		"/usr/bin/man (enforce)":           "/usr/bin/man",
		"unprivileged_userns (enforce)":    "unprivileged_userns",
		"":                                 "",
		"odd (name) with parens (enforce)": "odd (name) with parens",
	} {
		if got := appArmorProfile(label); got != want {
			t.Errorf("appArmorProfile(%q) = %q, want %q", label, got, want)
		}
	}
}

// hasCapSysAdmin agrees with the kernel's own account in /proc/self/status
// (as root, and as the test user when scripts/test reruns this binary).
func TestHasCapSysAdmin(t *testing.T) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	var eff uint64
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			if eff, err = strconv.ParseUint(strings.TrimSpace(v), 16, 64); err != nil {
				t.Fatalf("CapEff %q: %v", v, err)
			}
		}
	}
	if want := eff&(1<<unix.CAP_SYS_ADMIN) != 0; hasCapSysAdmin() != want {
		t.Errorf("hasCapSysAdmin() = %v; CapEff %#x says %v", !want, eff, want)
	}
}

func TestRootOnly(t *testing.T) {
	dir := t.TempDir() // under a sticky, world-writable /tmp, or the caller's
	exe := filepath.Join(dir, "forgebox")
	if err := os.WriteFile(exe, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{"/": true, exe: false, dir: false, "forgebox": false, "/no/such/forgebox": false} {
		if got := rootOnly(path); got != want {
			t.Errorf("rootOnly(%q) = %v, want %v", path, got, want)
		}
	}
}

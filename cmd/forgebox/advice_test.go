package main

import (
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/forgebox/forgebox/sandbox"
)

// report is a host whose user_namespaces check found these values.
func report(values map[string]string, opts ...func(*sandbox.Report)) sandbox.Report {
	r := sandbox.Report{OS: "linux", Checks: []sandbox.Check{{Name: sandbox.CheckUserNS, Values: values}}}
	for _, o := range opts {
		o(&r)
	}
	return r
}

func TestUserNSAdvice(t *testing.T) {
	ubuntu := func(exe, rootOnly string) map[string]string {
		return map[string]string{
			"kernel.apparmor_restrict_unprivileged_userns": "1", "apparmor_label": "unconfined",
			"executable": exe, "executable_root_only": rootOnly,
			"blocked_by": "kernel.apparmor_restrict_unprivileged_userns",
		}
	}
	tests := []struct {
		name   string
		r      sandbox.Report
		failed bool
		want   []string
		not    []string
	}{
		{"AppArmor, forgebox installed by root", report(ubuntu("/usr/local/bin/forgebox", "true")), true,
			[]string{"kernel.apparmor_restrict_unprivileged_userns=1", "profile forgebox /usr/local/bin/forgebox flags=(unconfined)",
				"userns,", "sudo apparmor_parser -r /etc/apparmor.d/forgebox", "then run /usr/local/bin/forgebox",
				"sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0", "privilege escalations"},
			[]string{"sudo install"}},
		{"AppArmor, forgebox in the user's home", report(ubuntu("/home/ann/go/bin/forgebox", "false")), true,
			[]string{"sudo install -m 0755 /home/ann/go/bin/forgebox /usr/local/bin/forgebox && printf",
				"profile forgebox /usr/local/bin/forgebox flags=(unconfined)", "a path you can write"},
			[]string{"profile forgebox /home"}},
		{"AppArmor, root-owned path with a space", report(ubuntu("/opt/forge box/forgebox", "true")), true,
			[]string{"sudo install -m 0755 '/opt/forge box/forgebox' /usr/local/bin/forgebox", "profile forgebox /usr/local/bin/forgebox "},
			nil},
		{"AppArmor, executable unknown", report(ubuntu("", "false")), true,
			[]string{"sudo install -m 0755 PATH-OF-FORGEBOX /usr/local/bin/forgebox"}, nil},
		{"Debian's unprivileged_userns_clone", report(map[string]string{"blocked_by": "kernel.unprivileged_userns_clone"}), true,
			[]string{"kernel.unprivileged_userns_clone=0", "sudo sysctl -w kernel.unprivileged_userns_clone=1", "/etc/sysctl.d/", "privilege escalations"},
			[]string{"AppArmor"}},
		{"max_user_namespaces", report(map[string]string{"blocked_by": "user.max_user_namespaces"}), true,
			[]string{"sudo sysctl -w user.max_user_namespaces=15000", "privilege escalations"}, nil},
		{"everything at once", report(map[string]string{"blocked_by": "user.max_user_namespaces,kernel.unprivileged_userns_clone,kernel.apparmor_restrict_unprivileged_userns",
			"executable": "/usr/bin/forgebox", "executable_root_only": "true"}), true,
			[]string{"user.max_user_namespaces=15000", "; and ", "unprivileged_userns_clone=1", "profile forgebox /usr/bin/forgebox"}, nil},
		{"a profile of forgebox's own, namespaces refused", report(map[string]string{
			"kernel.apparmor_restrict_unprivileged_userns": "1", "apparmor_label": "forgebox (enforce)"}), true,
			[]string{"AppArmor profile forgebox", "add the rule `userns,`"}, []string{"sysctl"}},
		{"a profile of forgebox's own, another layer failed", report(map[string]string{
			"kernel.apparmor_restrict_unprivileged_userns": "1", "apparmor_label": "forgebox (enforce)"}), false,
			[]string{"see forgebox doctor"}, []string{"userns"}},
		{"a container", report(map[string]string{}, func(r *sandbox.Report) { r.Container = "docker" }), true,
			[]string{"docker container forbids namespaces"}, nil},
		{"nothing known", report(map[string]string{}), true, []string{"--best-effort"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := userNSAdvice(tt.r, tt.failed)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("userNSAdvice = %q; want it to contain %q", got, w)
				}
			}
			for _, n := range append(tt.not, "setuid", "u+s", "4755", "\n") {
				if strings.Contains(got, n) {
					t.Errorf("userNSAdvice = %q; want no %q", got, n)
				}
			}
		})
	}
}

// The profile in the advice is what a shell's printf turns it into.
func TestAppArmorAdviceProfileText(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs a POSIX shell")
	}
	advice := appArmorAdvice("/usr/local/bin/forgebox", true)
	m := regexp.MustCompile(`printf '([^']*)'`).FindStringSubmatch(advice)
	if m == nil {
		t.Fatalf("appArmorAdvice = %q; want a printf of the profile", advice)
	}
	out, err := exec.Command("sh", "-c", `printf "$1"`, "sh", m[1]).Output()
	if err != nil {
		t.Fatalf("printf %q: %v", m[1], err)
	}
	want := "abi <abi/4.0>,\ninclude <tunables/global>\nprofile forgebox /usr/local/bin/forgebox flags=(unconfined) {\n  userns,\n}\n"
	if string(out) != want {
		t.Errorf("the advice's profile is\n%s\nwant\n%s", out, want)
	}
}

func TestFixForSandboxLaunch(t *testing.T) {
	r := report(map[string]string{"blocked_by": "kernel.unprivileged_userns_clone"})
	if got := fixFor(sandbox.Check{Name: sandbox.CheckSandbox, Values: map[string]string{"layer": "namespaces"}}, r); !strings.Contains(got, "unprivileged_userns_clone=1") {
		t.Errorf("fixFor(sandbox_launch failed at namespaces) = %q; want the user-namespace fix", got)
	}
	if got := fixFor(sandbox.Check{Name: sandbox.CheckUserNS}, r); !strings.Contains(got, "unprivileged_userns_clone=1") {
		t.Errorf("fixFor(user_namespaces) = %q; want the user-namespace fix", got)
	}
	// Linux 5.10: namespaces work, Landlock and the mount API do not.
	old := sandbox.Report{Checks: []sandbox.Check{{Name: sandbox.CheckUserNS, OK: true, Required: true},
		{Name: sandbox.CheckSandbox, Required: true, Values: map[string]string{"layer": "landlock filesystem rules"}},
		{Name: sandbox.CheckMountAPI, Required: true}, {Name: sandbox.CheckLandlock, Required: true}, {Name: sandbox.CheckCgroups}}}
	if got := fixFor(old.Checks[1], old); got != "see the fix for mount_api and landlock; --best-effort runs without what is missing and reports it" {
		t.Errorf("fixFor(sandbox_launch failed for want of Landlock) = %q; want a pointer to the mount_api and landlock fixes", got)
	}
}

// Each refusal on macOS and Windows says what to do there, not Linux's
// fixes.
func TestAdviceOnOtherSystems(t *testing.T) {
	for _, c := range []struct {
		goos, layer string
		want        []string
	}{
		{"windows", "network", []string{"--net host", "--best-effort"}},
		{"windows", "secret hiding", []string{"--profile strict", "--ro"}},
		{"windows", "--hide C:\\Users\\u\\x", []string{"profile", "--profile strict"}},
		{"windows", "restricted token", []string{"Low-integrity", "--best-effort"}},
		{"windows", "memory limit (--memory)", []string{"drop the flag"}},
		{"darwin", "network allowlist (--net allow)", []string{"--net none", "--net host"}},
		{"darwin", "sandbox-exec", []string{"/usr/bin/sandbox-exec"}},
	} {
		got := adviceOn(c.goos, &sandbox.UnavailableError{Layer: c.layer})
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s, %s: %q lacks %q", c.goos, c.layer, got, w)
			}
		}
		if strings.Contains(got, "systemd") || strings.Contains(got, "sysctl") {
			t.Errorf("%s, %s: Linux advice %q", c.goos, c.layer, got)
		}
	}
}

func TestUnixSocketAdvice(t *testing.T) {
	refused := sandbox.Enforced{UnixSockets: sandbox.UnixSocketsRefused}
	out := func(s string) sandbox.Captured { return sandbox.Captured{Tail: []byte(s)} }
	for _, c := range []struct {
		name string
		res  sandbox.Result
		want bool
	}{
		{"tmux", sandbox.Result{ExitCode: 1, Enforced: refused, Stderr: out("error connecting to /tmp/tmux-0/default (Operation not permitted)\n")}, true},
		{"go listen", sandbox.Result{ExitCode: 1, Enforced: refused, Stdout: out("listen unix /tmp/s: socket: operation not permitted\n")}, true},
		{"success", sandbox.Result{ExitCode: 0, Enforced: refused, Stderr: out("socket: operation not permitted")}, false},
		{"opted in", sandbox.Result{ExitCode: 1, Enforced: sandbox.Enforced{UnixSockets: sandbox.UnixSocketsAllowed}, Stderr: out("socket: operation not permitted")}, false},
		{"other EPERM", sandbox.Result{ExitCode: 1, Enforced: refused, Stderr: out("chmod: changing permissions of 'x': Operation not permitted")}, false},
	} {
		if got := unixSocketAdvice(&c.res) != ""; got != c.want {
			t.Errorf("%s: unixSocketAdvice gave advice = %v, want %v", c.name, got, c.want)
		}
	}
}

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"strings"

	"github.com/forgebox/forgebox/cgroup"
	"github.com/forgebox/forgebox/landlock"
	"golang.org/x/sys/unix"
)

// QuickReport describes the host without launching anything: enough to
// explain a failed run.
func QuickReport() Report {
	r := Report{OS: "linux", Root: os.Getuid() == 0, Container: detectContainer()}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		r.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	if me, err := user.Current(); err == nil {
		r.User = fmt.Sprintf("%s (uid %s)", me.Username, me.Uid)
	}
	r.Checks = []Check{userNSCheck()}
	r.Checks[0].Required = true
	return r
}

// requiredChecks are the capabilities forgebox run cannot do without.
var requiredChecks = map[string]bool{CheckUserNS: true, CheckSandbox: true, CheckMountAPI: true, CheckPTY: true,
	CheckLandlock: true, CheckSeccomp: true}

// Diagnose inspects the host and launches one real sandbox to see what
// works. It changes nothing on the host.
func Diagnose(ctx context.Context) Report {
	r := QuickReport()
	launch := launchCheck(ctx)
	cg := cgroupCheck()
	r.Checks = append(r.Checks, launch, mountAPICheck(), landlockCheck(), seccompCheck(), cg, ptyCheck())
	if launch.OK {
		r.WillEnforce = []string{
			"user, PID, mount, IPC, UTS and network namespaces",
			"read-only host filesystem (writes, chmod, chown, utime, xattr refused)",
			"writable workspace with protected .git/hooks, .git/config, rc files and editor/agent config",
			"hidden credential locations, /etc secrets and host Unix sockets",
			"private /tmp, /var/tmp, /dev/shm and /run; minimal /dev; fresh /proc",
			"Landlock: the same file policy as the view, sockets and signals scoped, TCP limited to the proxy's port with --net allow",
			"no capabilities, no_new_privs, own session and pseudo-terminal",
			"whole process tree killed on exit, timeout and forgebox's death",
			"seccomp filter: ptrace, mount, namespaces, io_uring, bpf, modules, TIOCSTI and raw sockets refused",
			fmt.Sprintf("default limits: memory by %s, tasks by %s (see the cgroups check)",
				cg.Values["memory_limit"], cg.Values["pids_limit"]),
		}
	} else {
		r.Missing = append(r.Missing, "sandbox: "+launch.Detail)
	}
	for i, c := range r.Checks {
		r.Checks[i].Required = requiredChecks[c.Name]
		if !c.OK && c.Name != CheckSandbox && requiredChecks[c.Name] {
			r.Missing = append(r.Missing, c.Name+": "+c.Detail)
		}
	}
	return r
}

func readSysctl(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// launchCheck runs `true` in a real sandbox: the only reliable test.
func launchCheck(ctx context.Context) Check {
	c := Check{Name: CheckSandbox}
	dir, err := os.MkdirTemp("", "forgebox-doctor-")
	if err != nil {
		c.Detail = "cannot create a scratch workspace: " + err.Error()
		return c
	}
	defer os.RemoveAll(dir)
	_, err = Run(ctx, Spec{Argv: []string{"true"}, Workspace: dir, Dir: dir, Environ: []string{"PATH=" + defaultPath}}, Streams{})
	var setup *SetupError
	var un *UnavailableError
	switch {
	case err == nil:
		c.OK, c.Detail = true, "a sandboxed command ran"
	case errors.As(err, &un):
		c.Detail = un.Error()
		c.Values = map[string]string{"layer": un.Layer}
	case errors.As(err, &setup):
		c.Detail = fmt.Sprintf("setup failed at %s: %s", setup.Step, setup.Message)
		c.Values = map[string]string{"step": setup.Step, "errno": setup.Errno.Error()}
	default:
		c.Detail = err.Error()
	}
	return c
}

func mountAPICheck() Check {
	_, _, errno := unix.Syscall6(unix.SYS_MOUNT_SETATTR, ^uintptr(0), 0, 0, 0, 0, 0)
	if errno == unix.ENOSYS {
		return Check{Name: CheckMountAPI, Detail: "the kernel lacks mount_setattr (Linux 5.12 or later is needed)"}
	}
	return Check{Name: CheckMountAPI, OK: true, Detail: "open_tree, move_mount, fsmount and mount_setattr are available"}
}

func landlockCheck() Check {
	c := Check{Name: CheckLandlock}
	abi, err := landlock.ABI()
	if err != nil {
		c.Detail = err.Error()
		return c
	}
	c.Values = map[string]string{"abi": strconv.Itoa(abi)}
	lacks := func(n Network) (l []string) {
		for _, f := range landlockNeeds(n) {
			if abi < f.abi {
				l = append(l, fmt.Sprintf("%s (ABI %d)", f.name, f.abi))
			}
		}
		return l
	}
	// The default run decides the check; TCP rules matter only to
	// --net allow, which is then refused on its own.
	if l := lacks(NetNone); len(l) > 0 {
		c.Detail = fmt.Sprintf("Landlock ABI %d lacks %s", abi, strings.Join(l, " and "))
		return c
	}
	c.OK, c.Detail = true, fmt.Sprintf("Landlock ABI %d: file rules, scoped sockets and signals, TCP rules for --net allow", abi)
	if l := lacks(NetAllow); len(l) > 0 {
		c.Detail = fmt.Sprintf("Landlock ABI %d: file rules, scoped sockets and signals; --net allow is refused, it needs %s", abi, strings.Join(l, " and "))
	}
	return c
}

func seccompCheck() Check {
	_, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0)
	if err != nil {
		return Check{Name: CheckSeccomp, Detail: "the kernel has no seccomp (" + err.Error() + ")"}
	}
	return Check{Name: CheckSeccomp, OK: true, Detail: "seccomp filters are available"}
}

// cgroupCheck says how the default limits would be enforced here. Without
// cgroups the run goes on (the task limit may fall back to RLIMIT_NPROC),
// so the check is optional; an explicit --memory, --pids or --cpus the
// host cannot enforce is refused at run time.
func cgroupCheck() Check {
	h := cgroup.Probe()
	d := cgroup.Plan(cgroup.DefaultLimits(h.MemoryBytes, h.CPUs), h)
	c := Check{Name: CheckCgroups, OK: h.CanCreate, Values: map[string]string{
		"version":      string(h.Version),
		"can_create":   strconv.FormatBool(h.CanCreate),
		"delegated":    strconv.FormatBool(h.Delegated),
		"root":         h.Root,
		"controllers":  strings.Join(h.Controllers, ","),
		"memory_limit": string(d.Memory.Mechanism),
		"pids_limit":   string(d.Pids.Mechanism),
		"cpu_limit":    string(cgroup.Plan(cgroup.Limits{CPUs: 1}, h).CPUs.Mechanism),
		"nproc_per_ns": strconv.FormatBool(h.NprocPerUserNS),
	}}
	c.Detail = fmt.Sprintf("cgroup %s; default limits enforced by: memory %s, tasks %s", h.Version, d.Memory.Mechanism, d.Pids.Mechanism)
	if h.Why != "" {
		c.Detail += "; " + h.Why
	}
	return c
}

func ptyCheck() Check {
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return Check{Name: CheckPTY, Detail: "cannot open /dev/ptmx: " + err.Error()}
	}
	unix.Close(fd)
	return Check{Name: CheckPTY, OK: true, Detail: "pseudo-terminals are available"}
}

// detectContainer names the container runtime forgebox runs in, if any. A
// /.dockerenv alone is not evidence: VM images are often built from
// container images and keep it.
func detectContainer() string {
	if v := os.Getenv("container"); v != "" {
		return v
	}
	if _, err := os.Stat("/run/.containerenv"); err == nil {
		return "podman"
	}
	b, _ := os.ReadFile("/proc/1/cgroup")
	for _, k := range []string{"docker", "kubepods", "containerd", "lxc", "libpod"} {
		if strings.Contains(string(b), k) {
			return k
		}
	}
	return ""
}

package sandbox

// Report says what the host supports and what a run will enforce.
type Report struct {
	OS          string   `json:"os"`
	Kernel      string   `json:"kernel"`
	User        string   `json:"user"`
	Root        bool     `json:"root"`
	Container   string   `json:"container,omitempty"`
	Checks      []Check  `json:"checks"`
	WillEnforce []string `json:"will_enforce"`
	// Missing lists the required checks that failed.
	Missing []string `json:"missing"`
	// SecretLocations is the table of credential locations every run
	// hides (relative paths under each home directory, absolute ones on
	// the system), each with the documentation that names it.
	SecretLocations []Secret `json:"secret_locations"`
	// Hidden are the secrets a run started now would hide on this host:
	// the locations that exist, and their other paths through bind mounts.
	Hidden []string `json:"hidden"`
}

// Check is one capability of the host.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	// Required is true when forgebox run needs this capability; the
	// others are reported for information.
	Required bool `json:"required"`
	// Values are the raw facts behind the check (sysctl values, errno).
	Values map[string]string `json:"values,omitempty"`
}

// Check names, stable for JSON consumers.
const (
	CheckUserNS   = "user_namespaces"
	CheckSandbox  = "sandbox_launch"
	CheckLandlock = "landlock"
	CheckSeccomp  = "seccomp"
	CheckCgroups  = "cgroups"
	CheckPTY      = "pty"
	CheckMountAPI = "mount_api"
)

// Find returns the named check.
func (r Report) Find(name string) (Check, bool) {
	for _, c := range r.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return Check{}, false
}

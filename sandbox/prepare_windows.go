package sandbox

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf16"

	"golang.org/x/sys/windows"
)

// winRun is one Windows run, checked against the host and ready to set up.
// Nothing on the disk has changed when it exists.
type winRun struct {
	profile Profile
	network Network // what the command gets: NetHost when --net none went unenforced
	strict  bool    // the user's own SID is not among the restricting SIDs

	dir, ws, cwd string
	rw, ro       []string // canonical --rw and --ro paths
	hidden       []string // what the strict profile makes unreadable
	profileDir   string
	temp         string // the private temporary directory, made later

	argv         []string
	app, cmdline string
	env          []string
	withheld     []string

	missing, warnings []string
}

// checkWindows checks a spec on this host: the layers it asks for that
// Windows cannot give (refused unless BestEffort), the paths, the
// environment and the program. It changes nothing on the disk.
func checkWindows(s Spec) (*winRun, error) {
	if _, _, err := commandArgv(s); err != nil {
		return nil, err
	}
	if s.Timeout < 0 || s.Grace < 0 || s.IdleTimeout < 0 {
		return nil, invalidf("timeouts must not be negative")
	}
	r := &winRun{profile: s.Profile, network: s.Network}
	if r.profile == "" {
		r.profile = ProfileWorkspace
	}
	if r.network == "" {
		r.network = NetNone
	}
	if _, err := ParseProfile(string(r.profile)); err != nil {
		return nil, err
	}
	if _, err := ParseNetwork(string(r.network)); err != nil {
		return nil, err
	}
	if r.network == NetAllow {
		return nil, errAllowlistUnavailable("Windows")
	}
	r.strict = r.profile == ProfileStrict
	if err := r.layers(s); err != nil {
		return nil, err
	}
	var err error
	if r.profileDir, err = profileDir(); err != nil {
		return nil, &UnavailableError{Layer: "sandbox", Reason: "cannot tell your profile directory: " + err.Error(), Err: err}
	}
	if err := r.paths(s); err != nil {
		return nil, err
	}
	if r.temp, err = tempDirName(); err != nil {
		return nil, err
	}
	if r.env, r.withheld, err = windowsEnv(s, r.temp); err != nil {
		return nil, err
	}
	if err := r.command(s); err != nil {
		return nil, err
	}
	return r, nil
}

// layers applies the fail-closed rule to what Windows cannot enforce per
// process: network isolation and, outside the strict profile, hiding the
// caller's secrets.
func (r *winRun) layers(s Spec) error {
	if r.network != NetHost {
		why := fmt.Sprintf("--net %s cannot be enforced on Windows: a Low-integrity process may use the network, "+
			"and cutting one process off takes Windows Filtering Platform or firewall rules, which forgebox does not make", r.network)
		if !s.BestEffort {
			return &UnavailableError{Layer: "network", Reason: why}
		}
		r.missing = append(r.missing, "network isolation ("+why+")")
		r.network = NetHost
	}
	if !r.strict {
		why := fmt.Sprintf("the %s profile leaves your profile readable on Windows, credentials included (.ssh, .aws, browser data): "+
			"a Low-integrity process reads what you read; the strict profile makes the whole profile unreadable", r.profile)
		if !s.BestEffort {
			return &UnavailableError{Layer: "secret hiding", Reason: why}
		}
		r.missing = append(r.missing, "secret hiding ("+why+")")
		if len(s.Hide) > 0 {
			r.missing = append(r.missing, "--hide "+strings.Join(s.Hide, ", ")+" (not hidden outside the strict profile on Windows)")
		}
	}
	return nil
}

// paths resolves the directories of the run and checks the grants.
func (r *winRun) paths(s Spec) error {
	dir := s.Dir
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return invalidf("cannot tell the current directory: %v", err)
		}
	}
	var err error
	if r.dir, err = existingWinPath(dir, "current directory"); err != nil {
		return err
	}
	ws := s.Workspace
	switch {
	case ws == "":
		ws = r.dir
	case !filepath.IsAbs(ws):
		ws = filepath.Join(r.dir, ws)
	}
	if r.ws, err = existingWinPath(ws, "workspace"); err != nil {
		return err
	}
	if st, err := os.Stat(r.ws); err != nil || !st.IsDir() {
		return invalidf("workspace %s is not a directory", r.ws)
	}
	if strings.HasPrefix(r.ws, `\\`) {
		return invalidf("workspace %s is on a network share: Windows integrity labels, which make the workspace writable "+
			"and nothing else, do not apply there; use a local directory", r.ws)
	}
	homes := r.homes(s)
	secrets := windowsSecrets(homes)
	if r.profile != ProfileReadOnly {
		if err := checkWindowsWritable(r.ws, "workspace", homes, secrets); err != nil {
			return err
		}
	}
	for _, p := range s.ReadWrite {
		c, err := grantPath(p, "--rw")
		if err != nil {
			return err
		}
		if strings.HasPrefix(c, `\\`) {
			return invalidf("--rw %s is on a network share, where integrity labels do not apply", c)
		}
		if st, err := os.Stat(c); err != nil || !st.IsDir() {
			return invalidf("--rw %s: Windows grants directories only; give the directory that holds it", c)
		}
		if err := checkWindowsWritable(c, "--rw", homes, secrets); err != nil {
			return err
		}
		r.rw = appendNew(r.rw, c)
	}
	for _, p := range s.ReadOnly {
		c, err := grantPath(p, "--ro")
		if err != nil {
			return err
		}
		if r.strict {
			if in, _ := winWithin(c, r.profileDir); in && !containedIn(c, r.rw) && !containedIn(c, []string{r.ws}) {
				for _, sec := range secrets {
					if in, _ := winWithin(c, sec); in {
						return invalidf("--ro %s is inside %s, which the strict profile keeps unreadable as a secret location", c, sec)
					}
				}
			}
			if st, err := os.Stat(c); err != nil || !st.IsDir() {
				return invalidf("--ro %s: the strict profile on Windows grants directories only", c)
			}
		}
		r.ro = appendNew(r.ro, c)
	}
	if r.strict {
		r.hidden = []string{r.profileDir}
		for _, h := range s.Hide {
			c, err := hidePath(h)
			if err != nil {
				return err
			}
			in, err := winWithin(c, r.profileDir)
			if err != nil {
				return err
			}
			granted := containedIn(c, append(append([]string{r.ws}, r.rw...), r.ro...))
			switch {
			case in && !granted:
				r.hidden = appendNew(r.hidden, c)
			case !s.BestEffort:
				why := fmt.Sprintf("on Windows only paths inside your profile (%s) and outside the granted ones are unreadable to the command", r.profileDir)
				return &UnavailableError{Layer: "--hide " + c, Reason: why}
			default:
				r.missing = append(r.missing, fmt.Sprintf("--hide %s (only paths inside your profile %s and outside the grants are hidden on Windows)", c, r.profileDir))
			}
		}
	}
	r.cwd = r.ws
	if in, err := winWithin(r.dir, r.ws); err == nil && in {
		r.cwd = r.dir
	}
	return nil
}

// homes are the directories whose secrets count: the profile, and HOME
// when it names another directory.
func (r *winRun) homes(s Spec) []string {
	homes := []string{r.profileDir}
	for _, h := range []string{s.Home, envValue(s.Environ, "HOME")} {
		if h == "" {
			continue
		}
		if c, err := finalPath(h); err == nil && !containedIn(c, homes) {
			homes = append(homes, c)
		}
	}
	return homes
}

// windowsSecretLocations are credential stores under a Windows profile,
// beside the ones every OS has (secretTable's home entries).
var windowsSecretLocations = []string{
	"_netrc", `AppData\Roaming\gh`, `AppData\Roaming\GitHub CLI`, `AppData\Roaming\gcloud`,
	`AppData\Roaming\Microsoft\Credentials`, `AppData\Local\Microsoft\Credentials`,
	`AppData\Roaming\Microsoft\Protect`, `AppData\Roaming\Microsoft\Vault`, `AppData\Local\Microsoft\Vault`,
	`AppData\Roaming\Mozilla`, `AppData\Local\Google\Chrome\User Data`, `AppData\Local\Microsoft\Edge\User Data`,
	`AppData\Local\BraveSoftware`, `AppData\Roaming\Microsoft\Windows\PowerShell\PSReadLine`,
	`AppData\Roaming\Docker`, `AppData\Roaming\npm\etc`, `AppData\Roaming\pip`, `AppData\Roaming\Code\User\globalStorage`,
}

// windowsSecrets lists the secret locations under the homes.
func windowsSecrets(homes []string) []string {
	var out []string
	for _, h := range homes {
		for _, s := range secretTable {
			if s.homeSecret() {
				out = append(out, filepath.Join(h, filepath.FromSlash(s.Path)))
			}
		}
		for _, s := range windowsSecretLocations {
			out = append(out, filepath.Join(h, s))
		}
	}
	return out
}

// checkWindowsWritable refuses a writable root that would make the sandbox
// pointless or dangerous: a drive root, a system directory or what lies in
// one, the profiles directory, a home or what contains one, or a place
// inside a secret location.
func checkWindowsWritable(p, what string, homes, secrets []string) error {
	advice := "choose a project directory"
	if w, err := parseWinPath(p); err != nil {
		return err
	} else if len(w.parts) == 0 {
		return invalidf("refusing %s %s: it is a drive root; %s", what, p, advice)
	}
	for _, d := range systemDirsWindows() {
		if in, _ := winWithin(p, d); in {
			return invalidf("refusing %s %s: it is inside the system directory %s; %s", what, p, d, advice)
		}
	}
	if profiles, err := windows.KnownFolderPath(windows.FOLDERID_UserProfiles, 0); err == nil {
		if in, _ := winWithin(profiles, p); in {
			return invalidf("refusing %s %s: it is (or contains) the profiles directory %s; %s", what, p, profiles, advice)
		}
	}
	for _, h := range homes {
		if in, _ := winWithin(h, p); in {
			return invalidf("refusing %s %s: it is (or contains) the home directory %s; %s", what, p, h, advice)
		}
	}
	for _, s := range secrets {
		if in, _ := winWithin(p, s); in {
			return invalidf("refusing %s %s: it is inside %s, a secret location; %s", what, p, s, advice)
		}
		// A root that contains a secret location would be labelled with it.
		if in, _ := winWithin(s, p); in {
			if _, err := os.Lstat(s); err == nil {
				return invalidf("refusing %s %s: it contains %s, a secret location; %s", what, p, s, advice)
			}
		}
	}
	return nil
}

// systemDirsWindows are the directories no writable root may lie in, from
// the known-folder database rather than the environment, which the caller
// controls.
func systemDirsWindows() []string {
	var out []string
	for _, id := range []*windows.KNOWNFOLDERID{windows.FOLDERID_Windows, windows.FOLDERID_ProgramFiles,
		windows.FOLDERID_ProgramFilesX86, windows.FOLDERID_ProgramData} {
		if p, err := windows.KnownFolderPath(id, 0); err == nil && p != "" {
			if c, err := cleanWinPath(p); err == nil {
				out = appendNew(out, c)
			}
		}
	}
	if d, err := windows.GetWindowsDirectory(); err == nil {
		if c, err := cleanWinPath(d); err == nil {
			out = appendNew(out, c)
			out = appendNew(out, c[:2]+`\$Recycle.Bin`)
			out = appendNew(out, c[:2]+`\System Volume Information`)
		}
	}
	return out
}

// profileDir is the caller's profile directory, from its token.
func profileDir() (string, error) {
	p, err := windows.GetCurrentProcessToken().GetUserProfileDirectory()
	if err != nil {
		return "", err
	}
	return finalPath(p)
}

// existingWinPath resolves an existing path to its canonical form.
func existingWinPath(p, what string) (string, error) {
	if !filepath.IsAbs(p) {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", invalidf("%s %s: %v", what, p, err)
		}
		p = abs
	}
	c, err := finalPath(p)
	if err != nil {
		return "", invalidf("%s %s: %v", what, p, err)
	}
	return c, nil
}

func grantPath(p, flag string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", invalidf("%s %s: give an absolute path", flag, p)
	}
	return existingWinPath(p, flag)
}

// hidePath resolves a --hide path; one that does not exist is resolved
// through its nearest existing parent.
func hidePath(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", invalidf("--hide %s: give an absolute path", p)
	}
	rest := ""
	for cur := filepath.Clean(p); ; {
		if c, err := finalPath(cur); err == nil {
			return cleanWinPath(filepath.Join(c, rest))
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return cleanWinPath(p)
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// finalPath is the canonical form of an existing path: junctions, symbolic
// links, 8.3 names, "." and ".." resolved, the case as on disk
// (GetFinalPathNameByHandle).
func finalPath(p string) (string, error) {
	name, err := windows.UTF16PtrFromString(p)
	if err != nil {
		return "", err
	}
	h, err := windows.CreateFile(name, 0, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return "", err
	}
	defer windows.CloseHandle(h)
	buf := make([]uint16, 512)
	for {
		n, err := windows.GetFinalPathNameByHandle(h, &buf[0], uint32(len(buf)), 0)
		if err != nil {
			return "", err
		}
		if int(n) < len(buf) {
			s := string(utf16.Decode(buf[:n]))
			switch {
			case strings.HasPrefix(s, `\\?\UNC\`):
				s = `\\` + s[len(`\\?\UNC\`):]
			case strings.HasPrefix(s, `\\?\`):
				s = s[len(`\\?\`):]
			}
			return cleanWinPath(s)
		}
		buf = make([]uint16, n+1)
	}
}

// tempDirName chooses the run's private temporary directory.
func tempDirName() (string, error) {
	base, err := finalPath(os.TempDir())
	if err != nil {
		return "", &UnavailableError{Layer: "private temporary directory", Reason: fmt.Sprintf("%s: %v", os.TempDir(), err), Err: err}
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return filepath.Join(base, fmt.Sprintf("forgebox-run-%x", b)), nil
}

func containedIn(p string, dirs []string) bool {
	for _, d := range dirs {
		if in, _ := winWithin(p, d); in {
			return true
		}
	}
	return false
}

func appendNew(list []string, p string) []string {
	for _, x := range list {
		if strings.EqualFold(x, p) {
			return list
		}
	}
	return append(list, p)
}

// envValue returns the value of name in env, names compared as Windows
// does: case-insensitively.
func envValue(env []string, name string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// CheckRoots refuses the workspace and --rw paths of s exactly as Run
// would, without running anything: forgebox serve calls it before it
// starts, so that its file tools never act on a workspace run refuses.
func CheckRoots(s Spec) error {
	r := &winRun{profile: s.Profile, network: s.Network}
	if r.profile == "" {
		r.profile = ProfileWorkspace
	}
	return r.paths(s)
}

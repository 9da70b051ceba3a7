package sandbox

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// layout is the run's filesystem intent, with canonical absolute paths.
type layout struct {
	Profile   Profile
	Network   Network
	Workspace string
	Writable  []string   // writable roots: the workspace (unless read-only) and --rw paths
	ReadOnly  []string   // --ro paths
	Hide      []hostPath // --hide paths that exist
}

// hostFacts is what the parent learned about the host for one run.
type hostFacts struct {
	Dirs      map[string]bool // system paths that exist as real directories
	Root      []hostPath      // entries of / (for the strict profile)
	Grants    map[string]bool // grant path -> is a directory
	Secrets   []hostPath      // secret locations that exist
	Sockets   []string        // host Unix sockets bound at launch
	Protected []protectedPath
	// ResolvConf is the file under /run that /etc/resolv.conf leads to.
	ResolvConf string
}

type hostPath struct {
	Path string
	Dir  bool
}

// protectedPath is a path inside a writable root that stays read-only (or,
// for a pin, stays where it is).
type protectedPath struct {
	Path     string
	Dir      bool
	Pin      bool // bind a .git directory onto itself so it cannot be renamed away
	Dev, Ino uint64
}

// strictVisible are the top-level directories the strict profile keeps.
var strictVisible = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix", "/gnu"}

// managed are top-level paths the view always replaces.
var managed = []string{"/proc", "/dev", "/tmp", "/run"}

// buildView lists what the command's filesystem view places where. The
// order does not matter: planMounts sorts parents before children.
func buildView(l layout, f hostFacts) ([]viewItem, Enforced, error) {
	items := map[string]viewItem{}
	var enf Enforced
	put := func(it viewItem) { items[it.Path] = it }

	// What the child's base view places (build_base_view in view_linux.c).
	for _, d := range []string{"/proc", "/dev", "/dev/pts", "/dev/shm", "/tmp"} {
		put(viewItem{Kind: kindBase, Path: d, Dir: true})
	}
	enf.PrivateDirs = []string{"/tmp", "/dev/shm"}
	for _, d := range []string{"/var/tmp", "/run", "/var/run"} {
		if f.Dirs[d] {
			put(viewItem{Kind: kindBase, Path: d, Dir: true})
			enf.PrivateDirs = append(enf.PrivateDirs, d)
		}
	}

	if l.Profile == ProfileStrict {
		for _, e := range f.Root {
			if slices.Contains(strictVisible, e.Path) || slices.Contains(managed, e.Path) {
				continue
			}
			if _, ok := items[e.Path]; !ok {
				put(viewItem{Kind: kindCover, Path: e.Path, Dir: e.Dir})
			}
		}
	}

	// Secrets first, so that explicit grants below replace them.
	for _, s := range f.Secrets {
		put(viewItem{Kind: kindCover, Path: s.Path, Dir: s.Dir})
		enf.Hidden = append(enf.Hidden, s.Path)
	}
	grant := func(p string, set, clr uint64) error {
		if slices.Contains([]string{"/proc", "/dev", "/sys"}, p) || within(p, "/proc") || within(p, "/dev") || within(p, "/sys") {
			return invalidf("cannot grant %s: /proc, /dev and /sys are managed by the sandbox", p)
		}
		dir, ok := f.Grants[p]
		if !ok {
			return fmt.Errorf("plan: no facts for grant %s", p)
		}
		put(viewItem{Kind: kindGrant, Path: p, Dir: dir, Set: set, Clr: clr})
		return nil
	}
	for _, p := range l.Writable {
		if err := grant(p, attrNosuid|attrNodev, attrRdonly); err != nil {
			return nil, enf, err
		}
	}
	enf.Writable = slices.Clone(l.Writable)
	for _, p := range l.ReadOnly {
		if slices.Contains(l.Writable, p) {
			return nil, enf, invalidf("%s is granted both read-only and read-write", p)
		}
		if err := grant(p, attrRdonly|attrNosuid|attrNodev, 0); err != nil {
			return nil, enf, err
		}
	}
	if l.Profile == ProfileStrict && !slices.Contains(l.Writable, l.Workspace) && !slices.Contains(l.ReadOnly, l.Workspace) {
		if err := grant(l.Workspace, attrRdonly|attrNosuid|attrNodev, 0); err != nil {
			return nil, enf, err
		}
	}
	if l.Network == NetHost && f.ResolvConf != "" {
		if _, ok := items[f.ResolvConf]; !ok {
			put(viewItem{Kind: kindGrant, Path: f.ResolvConf, Set: attrRdonly | attrNosuid | attrNodev})
		}
	}
	for _, h := range l.Hide {
		if it, ok := items[h.Path]; ok && it.Kind == kindGrant {
			return nil, enf, invalidf("%s is both granted and hidden", h.Path)
		}
		put(viewItem{Kind: kindCover, Path: h.Path, Dir: h.Dir})
		enf.Hidden = append(enf.Hidden, h.Path)
	}
	for _, s := range f.Sockets {
		if _, ok := items[s]; !ok {
			put(viewItem{Kind: kindCover, Path: s})
			enf.Sockets = append(enf.Sockets, s)
		}
	}
	for _, p := range f.Protected {
		if _, ok := items[p.Path]; ok {
			continue
		}
		kind, set, clr := kindProtect, uint64(attrRdonly|attrNosuid|attrNodev), uint64(0)
		if p.Pin {
			kind, set, clr = kindPin, attrNosuid|attrNodev, attrRdonly
		} else {
			enf.Protected = append(enf.Protected, p.Path)
		}
		put(viewItem{Kind: kind, Path: p.Path, Dir: p.Dir, Set: set, Clr: clr, Dev: p.Dev, Ino: p.Ino})
	}

	out := make([]viewItem, 0, len(items))
	for _, it := range items {
		out = append(out, it)
	}
	slices.SortFunc(out, func(a, b viewItem) int {
		if d := depth(a.Path) - depth(b.Path); d != 0 {
			return d
		}
		return strings.Compare(a.Path, b.Path)
	})
	for _, s := range []*[]string{&enf.Hidden, &enf.Sockets, &enf.Protected, &enf.PrivateDirs} {
		slices.Sort(*s)
		*s = slices.Compact(*s)
	}
	for _, s := range []*[]string{&enf.Hidden, &enf.Sockets, &enf.Protected, &enf.Writable} {
		if *s == nil {
			*s = []string{}
		}
	}
	enf.Profile, enf.Network, enf.ReadOnlyRoot = l.Profile, l.Network, true
	return out, enf, nil
}

// secretLocations are credential stores under a home directory.
var secretLocations = []string{
	".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker", ".netrc",
	".git-credentials", ".config/git/credentials", ".config/gh", ".config/hub", ".npmrc", ".pypirc",
	".password-store", ".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials",
	".terraform.d/credentials.tfrc.json", ".vault-token", ".local/share/keyrings", ".pki",
	".mozilla", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware",
	".claude/.credentials.json", ".codex/auth.json", ".gemini/oauth_creds.json",
	".bash_history", ".zsh_history", ".python_history", ".psql_history", ".mysql_history",
	".node_repl_history", ".lesshst",
}

// systemSecrets are files under /etc that hold keys or password hashes.
var systemSecrets = []string{
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/security/opasswd",
	"/etc/ssl/private", "/etc/krb5.keytab", "/etc/wireguard", "/etc/NetworkManager/system-connections",
	"/etc/letsencrypt", "/etc/sudoers", "/etc/sudoers.d",
}

// sshHostKeyPattern matches the host's private SSH keys.
const sshHostKeyPattern = "/etc/ssh/ssh_host_*_key"

// secretCandidates lists the secret locations to look for, given the home
// directories that apply.
func secretCandidates(homes []string) []string {
	var out []string
	for _, h := range homes {
		for _, s := range secretLocations {
			out = append(out, path.Join(h, s))
		}
	}
	return append(out, systemSecrets...)
}

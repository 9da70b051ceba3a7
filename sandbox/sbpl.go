package sandbox

// The macOS backend (sandbox_darwin.go) runs the command under
// /usr/bin/sandbox-exec with a Seatbelt profile (SBPL) written here. This
// file is pure, apart from the bounded look for Git repositories, so that
// Linux CI tests the profile as text (testdata/sbpl/*.sb).
//
// Precedence. Seatbelt evaluates the rules of an operation in order and the
// LAST matching rule decides; (deny default) answers when none matches.
// anthropic-experimental/sandbox-runtime generates its profiles on that
// rule ("In Seatbelt profiles, later rules take precedence",
// src/sandbox/macos-sandbox-utils.ts), and agentic-dev3o/sandbox-shell
// measured it on macOS (allow child then deny parent: the child is denied;
// deny parent then allow child: the child is allowed). The profile relies
// on it in one direction everywhere: each deny comes after the broad allow
// it carves out of (secrets after the host read, protected names after the
// writable roots, /dev after the host read), and the few re-allows (devices,
// read-only grants inside a hidden location) come after their deny, the
// deeper path last, like the mount that wins on Linux. Were the order
// ignored and any deny to win, those re-allows would fail closed.
//
// Paths. Seatbelt matches the path the kernel names for the vnode, with
// symlinks resolved: every path here is absolute and canonical (/private/etc,
// not /etc). Allows match exactly, so a path spelled differently is simply
// not allowed. Denies must not be dodged by another spelling of the same
// file: macOS volumes are case-insensitive by default (a new .ENVRC is the
// .envrc direnv reads), normalization-insensitive, and reachable through
// /System/Volumes/Data. So every deny is a regular expression that folds
// ASCII case, lets any run of non-ASCII bytes stand for any name (a wider
// deny is a safe deny), and accepts the data-volume prefix.

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/forgebox/forgebox/cgroup"
	"github.com/forgebox/forgebox/pathtree"
)

// sbplPathKind says what a denied path covers.
type sbplPathKind uint8

const (
	sbplLiteral sbplPathKind = iota // exactly the path
	sbplTree                        // the path and everything beneath it
	// sbplGitNested: Path is a .git directory; the files Git executes or
	// follows in its linked worktrees and submodules (worktrees/*/,
	// modules/**/) are covered, whether they exist yet or not.
	sbplGitNested
	// sbplAnyDepth: Path is a writable root; the protected names read at
	// every depth (anyDepthNames) are covered anywhere below it.
	sbplAnyDepth
)

type sbplPath struct {
	Path string
	Kind sbplPathKind
}

// seatbeltPlan is everything the profile depends on, decided by the caller.
type seatbeltPlan struct {
	Profile  Profile
	Network  Network
	Writable []string // writable roots: the workspace (unless read-only) and --rw
	ReadOnly []string // --ro
	TempDir  string   // the run's private TMPDIR: writable, removed afterwards
	// Secrets are the credential locations (and the targets of those that
	// are symlinks), denied whether they exist or not; Hide the --hide
	// paths. Both are unreadable and unwritable, except what an explicit
	// grant beneath them re-exposes.
	Secrets, Hide []sbplPath
	// Protected stay read-only inside the writable roots.
	Protected []sbplPath
	// SystemReadable are host directories the strict profile shows besides
	// strictReadable (the selected developer directory, say).
	SystemReadable []string
	// PTY is the terminal the command runs on ("" without): it was opened
	// before the sandbox applied, so it carries no sandbox extension.
	PTY string
}

// strictReadable are what --profile strict shows of the host: the system,
// the developer tools and package managers' prefixes, and the files libc
// reads (time zones, passwd for names).
var strictReadable = []string{
	"/usr", "/bin", "/sbin", "/System", "/Library", "/opt", "/nix",
	"/private/etc", "/private/var/db/timezone", "/private/var/db/dyld", "/private/var/select",
	"/private/var/db/xcode_select_link",
}

// mach services. A (deny default) profile reaches no daemon; these are the
// ones a shell and common tools need, each harmless to expose:
//   - opendirectoryd libinfo and membership: user and group names and
//     membership (id, ls -l, git, ssh, ~ expansion);
//   - notification_center: notify(3), which libc uses to learn of time
//     zone and resolver changes.
//
// Not reachable, deliberately: securityd and the keychain
// (com.apple.SecurityServer, com.apple.securityd.xpc), launchservicesd and
// lsd (open(1) would start applications outside the sandbox), dirhelper
// (it creates directories on the caller's behalf; TMPDIR is set instead),
// logd, diagnosticd, the window server, and everything else.
var sbplMachServices = []string{
	"com.apple.system.opendirectoryd.libinfo",
	"com.apple.system.opendirectoryd.membership",
	"com.apple.system.notification_center",
}

// sbplPrefsServices serve preference reads (defaults(1), xcrun, CF-based
// tools); cfprefsd checks user-preference-read/write against the caller's
// profile, which allows only reads. Not under --profile strict, which hides
// the home directory where preferences live.
var sbplPrefsServices = []string{"com.apple.cfprefsd.daemon", "com.apple.cfprefsd.agent"}

// sbplHostNetServices are needed with the host's network: TLS trust
// evaluation (Go's crypto/x509, curl) and the network configuration
// (proxies, reachability).
var sbplHostNetServices = []string{"com.apple.trustd", "com.apple.trustd.agent", "com.apple.SystemConfiguration.configd"}

// sbplProcessTable are the sysctls that list every process of the host or
// read another process's arguments and environment.
var sbplProcessTable = []string{"kern.proc.all", "kern.proc.uid.", "kern.proc.ruid.", "kern.proc.tty.", "kern.procargs"}

// mDNSResponder answers getaddrinfo over this socket.
const sbplResolverSocket = "/private/var/run/mDNSResponder"

// darwinDataVolume is where the data volume's firmlinked directories (/Users,
// /Library, /private/var, ...) can also be reached.
const darwinDataVolume = "/System/Volumes/Data"

// buildSBPL writes the profile.
func buildSBPL(p seatbeltPlan) (string, error) {
	if err := p.check(); err != nil {
		return "", err
	}
	w := &sbplWriter{}
	w.line("; forgebox: the Seatbelt profile of one run, written by sandbox/sbpl.go.")
	w.line("; Rules are evaluated in order and the last matching one decides.")
	w.line("(version 1)")
	w.line("(deny default)")
	p.processes(w)
	p.services(w)
	p.reads(w)
	p.writes(w)
	p.devices(w)
	p.visibility(w)
	p.protected(w)
	p.renames(w)
	p.network(w)
	return w.b.String(), nil
}

func (p seatbeltPlan) check() error {
	all := slices.Concat(p.Writable, p.ReadOnly, p.SystemReadable, []string{p.TempDir})
	for _, list := range [][]sbplPath{p.Secrets, p.Hide, p.Protected} {
		for _, s := range list {
			all = append(all, s.Path)
		}
	}
	if p.PTY != "" {
		all = append(all, p.PTY)
	}
	for _, a := range all {
		if !path.IsAbs(a) || path.Clean(a) != a || strings.IndexByte(a, 0) >= 0 {
			return fmt.Errorf("seatbelt profile: path %q is not absolute and clean", a)
		}
	}
	switch p.Network {
	case NetNone, NetLoopback, NetHost:
	default:
		return fmt.Errorf("seatbelt profile: unknown network mode %q", p.Network)
	}
	switch p.Profile {
	case ProfileWorkspace, ProfileStrict, ProfileReadOnly:
	default:
		return fmt.Errorf("seatbelt profile: unknown profile %q", p.Profile)
	}
	return nil
}

func (p seatbeltPlan) processes(w *sbplWriter) {
	w.section("processes: fork and exec freely; signal and inspect only the sandbox's own")
	w.line("(allow process-fork)")
	w.line("(allow process-exec)")
	w.line("(allow signal (target same-sandbox))")
	w.line("(allow process-info* (target same-sandbox))")
	w.section("system information, but not the process table or other processes' arguments")
	w.line("(allow sysctl-read)")
	w.line("(allow mach-host*)")
	var deny []string
	for _, n := range sbplProcessTable {
		deny = append(deny, "(sysctl-name-prefix "+sbplString(n)+")")
	}
	w.rule("deny", "sysctl-read", deny)
	w.comment("Java reads its CPU type through a sysctl that counts as a write")
	w.line(`(allow sysctl-write (sysctl-name "kern.grade_cputype"))`)
}

func (p seatbeltPlan) services(w *sbplWriter) {
	w.section("services: user and group names, notifications; POSIX semaphores (Python multiprocessing)")
	services := slices.Clone(sbplMachServices)
	if p.Profile != ProfileStrict {
		services = append(services, sbplPrefsServices...)
	}
	if p.Network == NetHost {
		services = append(services, sbplHostNetServices...)
	}
	var names []string
	for _, s := range services {
		names = append(names, "(global-name "+sbplString(s)+")")
	}
	w.rule("allow", "mach-lookup", names)
	w.line("(allow ipc-posix-sem)")
	if p.Profile != ProfileStrict {
		w.line("(allow user-preference-read)")
		w.line(`(allow ipc-posix-shm-read* (ipc-posix-name-prefix "apple.cfprefs."))`)
	}
}

// sbplReadOps are what reading and executing a file takes.
const sbplReadOps = "file-read* file-test-existence file-map-executable"

func (p seatbeltPlan) reads(w *sbplWriter) {
	if p.Profile != ProfileStrict {
		w.section("reading: the whole host, but for what is denied below")
		w.line("(allow " + sbplReadOps + ")")
		return
	}
	w.section("reading (--profile strict): the system, the writable roots and the read-only grants")
	dirs := slices.Concat(strictReadable, p.SystemReadable, p.Writable, p.ReadOnly, []string{p.TempDir})
	filters := []string{`(literal "/")`}
	for _, d := range sortedUnique(dirs) {
		filters = append(filters, "(subpath "+sbplString(d)+")")
	}
	w.rule("allow", sbplReadOps, filters)
	w.comment("the symlinks /etc, /tmp and /var, and the directories on the way to what is visible")
	meta := []string{`(literal "/etc")`, `(literal "/tmp")`, `(literal "/var")`}
	var parents []string
	for _, d := range slices.Concat(strictReadable, p.SystemReadable, p.Writable, p.ReadOnly, []string{p.TempDir}) {
		for a := path.Dir(d); a != "/"; a = path.Dir(a) {
			parents = append(parents, a)
		}
	}
	for _, a := range sortedUnique(parents) {
		meta = append(meta, "(literal "+sbplString(a)+")")
	}
	w.rule("allow", "file-read-metadata file-test-existence", meta)
}

func (p seatbeltPlan) writes(w *sbplWriter) {
	w.section("writing: the writable roots and the private temporary directory")
	var filters []string
	for _, d := range sortedUnique(append(slices.Clone(p.Writable), p.TempDir)) {
		filters = append(filters, "(subpath "+sbplString(d)+")")
	}
	w.rule("allow", "file-write*", filters)
}

func (p seatbeltPlan) devices(w *sbplWriter) {
	w.section("devices: none of the host's (another terminal's keystrokes, disks), then the few a program needs")
	w.line(`(deny file-read* file-test-existence file-write* file-ioctl (subpath "/dev"))`)
	w.line(`(allow file-read-metadata file-test-existence (literal "/dev"))`)
	w.line(`(allow file-read* file-write-data file-ioctl (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty"))`)
	w.line(`(allow file-read* (literal "/dev/random") (literal "/dev/urandom"))`)
	w.line(`(allow file-read* file-write-data (subpath "/dev/fd") (literal "/dev/stdin") (literal "/dev/stdout") (literal "/dev/stderr"))`)
	w.comment("pseudo-terminals the command opens itself carry the sandbox's extension")
	w.line("(allow pseudo-tty)")
	w.line(`(allow file-read* file-write-data file-ioctl (literal "/dev/ptmx"))`)
	w.line(`(allow file-read* file-write-data file-ioctl (require-all (regex "^/dev/ttys[0-9]+$") (extension "com.apple.sandbox.pty")))`)
	if p.PTY != "" {
		w.comment("the run's own terminal, opened before the sandbox applied")
		w.line("(allow file-read* file-write-data file-ioctl (literal " + sbplString(p.PTY) + "))")
	}
}

// visibility denies the secret locations and --hide paths, and re-exposes
// the explicit grants beneath them. In SBPL the last matching rule wins,
// so rules are written shallowest path first, and at one path the grant
// after the deny (an explicit grant beats a default secret, as on Linux).
func (p seatbeltPlan) visibility(w *sbplWriter) {
	type item struct {
		path  sbplPath
		allow string // the operations an allow re-exposes; "" for a deny
	}
	var items []item
	for _, s := range sortedPaths(slices.Concat(p.Secrets, p.Hide, []sbplPath{{Path: "/.vol", Kind: sbplTree}})) {
		items = append(items, item{path: s})
	}
	grant := func(g, ops string) {
		for _, it := range items {
			if it.allow == "" && pathtree.Within(g, it.path.Path) {
				items = append(items, item{sbplPath{g, sbplTree}, ops})
				return
			}
		}
	}
	for _, g := range p.ReadOnly {
		grant(g, sbplReadOps)
	}
	for _, g := range p.Writable {
		grant(g, sbplReadOps+" file-write*")
	}
	slices.SortStableFunc(items, func(a, b item) int {
		if d := depth(a.path.Path) - depth(b.path.Path); d != 0 {
			return d
		}
		if ad, bd := a.allow == "", b.allow == ""; ad != bd {
			if ad {
				return -1 // at one path, the grant wins
			}
			return 1
		}
		return strings.Compare(a.path.Path, b.path.Path)
	})
	w.section("hidden: credential locations and --hide paths, unreadable and unwritable (/.vol opens files by inode number); deeper rules later")
	for i := 0; i < len(items); {
		j := i + 1
		for j < len(items) && items[j].allow == items[i].allow {
			j++
		}
		var filters []string
		for _, it := range items[i:j] {
			if it.allow == "" {
				filters = append(filters, sbplMatch(it.path)...)
			} else { // allows match exactly, like every allow
				filters = append(filters, "(subpath "+sbplString(it.path.Path)+")")
			}
		}
		if items[i].allow == "" {
			w.rule("deny", sbplReadOps+" file-write*", filters)
		} else {
			w.rule("allow", items[i].allow, filters)
		}
		i = j
	}
}

func (p seatbeltPlan) protected(w *sbplWriter) {
	if len(p.Protected) == 0 {
		return
	}
	w.section("protected: read-only inside the writable roots, existing or not (Git hooks and config, rc files, editor and agent configuration)")
	var filters []string
	for _, s := range sortedPaths(p.Protected) {
		filters = append(filters, sbplMatch(s)...)
	}
	w.rule("deny", "file-write*", filters)
}

// renames keeps denied paths where they are: Seatbelt matches paths, so a
// directory on the way to one, renamed away, would take it out of its
// rule's reach (and could be renamed back after the write). The writable
// roots themselves cannot be moved either. A rename is an unlink of the
// source.
func (p seatbeltPlan) renames(w *sbplWriter) {
	var lits []string
	var nested []string
	for _, s := range slices.Concat(p.Secrets, p.Hide, p.Protected) {
		if s.Kind == sbplGitNested {
			nested = append(nested, s.Path)
		}
		for a := path.Dir(s.Path); a != "/"; a = path.Dir(a) {
			if p.inWritable(a) {
				lits = append(lits, a)
			}
		}
	}
	lits = append(lits, p.Writable...)
	var filters []string
	for _, a := range sortedUnique(lits) {
		filters = append(filters, sbplMatch(sbplPath{a, sbplLiteral})...)
	}
	if len(filters) == 0 {
		return
	}
	w.section("no renaming what leads to a denied path, nor the writable roots")
	w.rule("deny", "file-write-unlink", filters)
	for _, g := range sortedUnique(nested) {
		w.comment("directories of linked worktrees and submodules in " + sbplString(g))
		w.line("(deny file-write-unlink (require-all (vnode-type DIRECTORY) (regex " +
			sbplString(sbplFold(g)+"/("+foldASCII("worktrees")+"|"+foldASCII("modules")+")/.+$") + ")))")
	}
}

func (p seatbeltPlan) inWritable(a string) bool {
	return slices.ContainsFunc(p.Writable, func(r string) bool { return pathtree.Within(a, r) })
}

func (p seatbeltPlan) network(w *sbplWriter) {
	w.section("network: " + string(p.Network))
	w.line("(deny network*)")
	// NetNone stays without TCP/IP, loopback included: unlike Linux's
	// private loopback, macOS's is the host's, with its services on it.
	switch p.Network {
	case NetLoopback:
		w.comment("the loopback is the host's: its services are reachable")
		w.line("(allow system-socket (socket-domain AF_INET) (socket-domain AF_INET6))")
		w.line(`(allow network-bind (local ip "localhost:*"))`)
		w.line(`(allow network-inbound (local ip "localhost:*"))`)
		w.line(`(allow network-outbound (remote ip "localhost:*"))`)
	case NetHost:
		w.line("(allow system-socket (socket-domain AF_INET) (socket-domain AF_INET6))")
		w.line(`(allow network-bind (local ip "*:*"))`)
		w.line(`(allow network-inbound (local ip "*:*"))`)
		w.line(`(allow network-outbound (remote ip "*:*"))`)
		w.comment("name resolution")
		w.line("(allow network-outbound (remote unix-socket (subpath " + sbplString(sbplResolverSocket) + ")))")
	}
	w.comment("Unix sockets only inside the private temporary directory: the host's (ssh-agent, docker, ...) stay out of reach")
	tmp := sbplString(p.TempDir)
	w.line("(allow system-socket (socket-domain AF_UNIX))")
	w.line("(allow network-bind network-inbound (local unix-socket (subpath " + tmp + ")))")
	w.line("(allow network-outbound (remote unix-socket (subpath " + tmp + ")))")
}

// sbplMatch is the filters that match a denied path in any spelling, each
// after a comment naming the path.
func sbplMatch(s sbplPath) []string {
	re := sbplFold(s.Path)
	switch s.Kind {
	case sbplTree:
		re += "(/.*)?$"
	case sbplLiteral:
		re += "$"
	case sbplAnyDepth:
		names := make([]string, len(anyDepthNames))
		for i, n := range anyDepthNames {
			names[i] = foldASCII(n)
		}
		re += "/(.*/)?(" + strings.Join(names, "|") + ")(/.*)?$"
	case sbplGitNested:
		var names []string
		for _, f := range gitDirNames() {
			n := foldASCII(f.Name)
			if f.Dir {
				n += "(/.*)?"
			}
			names = append(names, n)
		}
		re += "/(" + foldASCII(gitWorktrees) + "|" + foldASCII(gitModules) + ")/(.+/)?(" + strings.Join(names, "|") + ")$"
	}
	return []string{"; " + sbplString(s.Path) + sbplKindNote[s.Kind], "(regex " + sbplString(re) + ")"}
}

var sbplKindNote = map[sbplPathKind]string{sbplLiteral: "", sbplTree: " and beneath", sbplGitNested: ": worktrees' and submodules' Git files",
	sbplAnyDepth: ": editor, agent, package manager and hook runner configuration at any depth"}

// sbplFold is the anchored regular expression of path p (no end anchor) in
// every spelling the file system accepts for it: the data-volume prefix,
// any ASCII case, and any name where p has non-ASCII bytes (Unicode
// normalization and case are the file system's business) or control
// characters.
func sbplFold(p string) string {
	var b strings.Builder
	b.WriteString("^(" + darwinDataVolume + ")?")
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c >= 0x80:
			for i+1 < len(p) && p[i+1] >= 0x80 {
				i++
			}
			b.WriteString("[^/]+")
		case c < 0x20 || c == 0x7f:
			b.WriteString("[^/]")
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
			b.WriteString(foldASCII(string(c)))
		case strings.IndexByte(`\.+*?()|[]{}^$`, c) >= 0:
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// foldASCII matches s in any ASCII case (s has no regex metacharacters
// other than dots, which it escapes).
func foldASCII(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		switch {
		case 'a' <= c && c <= 'z':
			b.WriteString("[" + string(c) + string(c-'a'+'A') + "]")
		case 'A' <= c && c <= 'Z':
			b.WriteString("[" + string(c-'A'+'a') + string(c) + "]")
		case c == '.':
			b.WriteString(`\.`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// sbplString quotes s as an SBPL (TinyScheme) string literal: backslash and
// double quote are escaped, so are the control characters that would break
// the line or the reader (\n, \t, \r, others as \xHH); every other byte,
// UTF-8 included, stands for itself.
func sbplString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if c < 0x20 || c == 0x7f {
				fmt.Fprintf(&b, `\x%02x`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

type sbplWriter struct{ b strings.Builder }

func (w *sbplWriter) line(s string)    { w.b.WriteString(s + "\n") }
func (w *sbplWriter) comment(s string) { w.line("; " + s) }
func (w *sbplWriter) section(s string) { w.line("\n; " + s) }

// rule writes (action ops filter...), one filter (or comment) a line.
func (w *sbplWriter) rule(action, ops string, filters []string) {
	w.line("(" + action + " " + ops)
	for _, f := range filters {
		w.line("  " + f)
	}
	w.line(")")
}

func sortedUnique(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}

func sortedPaths(s []sbplPath) []sbplPath {
	s = slices.Clone(s)
	slices.SortFunc(s, func(a, b sbplPath) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return int(a.Kind) - int(b.Kind)
	})
	return slices.Compact(s)
}

// darwinSecretLocations are credential stores under a macOS home, besides
// secretTable's (which Linux and macOS share).
var darwinSecretLocations = []string{
	"Library/Keychains", "Library/Cookies", "Library/Safari", "Library/Mail", "Library/Messages",
	"Library/Application Support/Google/Chrome", "Library/Application Support/Chromium",
	"Library/Application Support/BraveSoftware", "Library/Application Support/Microsoft Edge",
	"Library/Application Support/Firefox", "Library/Application Support/Arc",
	"Library/Application Support/com.apple.TCC", "Library/Group Containers/2BUA8C4S2C.com.1password",
}

// darwinSystemSecrets are the system's own, besides systemSecrets (mapped
// to /private/etc).
var darwinSystemSecrets = []string{
	"/private/etc/master.passwd", "/private/var/db/dslocal", "/private/var/db/SystemKey",
	"/Library/Keychains", "/private/var/root",
}

// seatbeltSecrets are the credential locations to deny for these homes,
// whether they exist or not.
func seatbeltSecrets(homes []string) []sbplPath {
	var out []sbplPath
	for _, h := range homes {
		for _, s := range secretTable {
			if s.homeSecret() {
				out = append(out, sbplPath{path.Join(h, s.Path), sbplTree})
			}
		}
		for _, s := range darwinSecretLocations {
			out = append(out, sbplPath{path.Join(h, s), sbplTree})
		}
	}
	for _, e := range secretTable {
		if e.homeSecret() {
			continue
		}
		s := e.Path
		if r, ok := strings.CutPrefix(s, "/etc/"); ok {
			s = "/private/etc/" + r
		}
		out = append(out, sbplPath{s, sbplTree})
	}
	for _, s := range darwinSystemSecrets {
		out = append(out, sbplPath{s, sbplTree})
	}
	return sortedPaths(out)
}

// darwinSystemDirs may not be writable roots on macOS, besides systemDirs;
// darwinSystemTrees may not contain one, besides systemTrees.
var (
	darwinSystemDirs  = []string{"/System", "/Library", "/Applications", "/Users", "/Volumes", "/private", "/private/var", "/private/tmp", "/opt/homebrew", "/cores"}
	darwinSystemTrees = []string{"/System", "/Library", "/private/etc", "/private/var/db", "/private/var/root"}
)

// checkSeatbeltRoots applies forgebox's refusals to the writable roots
// (workspace first) and the grants: Linux's, macOS's system directories,
// and the conflicts the profile cannot express.
func checkSeatbeltRoots(ws string, writable, readOnly, hide, homes, secrets []string) error {
	for _, w := range append([]string{ws}, writable...) {
		what, check := "--rw", checkWritable
		if w == ws {
			what, check = "workspace", checkWorkspace
		}
		if slices.Contains(darwinSystemDirs, w) {
			return invalidf("refusing %s %s: it is a system directory", what, w)
		}
		for _, t := range darwinSystemTrees {
			if pathtree.Within(w, t) {
				return invalidf("refusing %s %s: it is inside the system directory %s", what, w, t)
			}
		}
		if err := check(w, homes, secrets); err != nil {
			return err
		}
	}
	for _, g := range slices.Concat(writable, readOnly) {
		if pathtree.Within(g, "/dev") {
			return invalidf("cannot grant %s: /dev is managed by the sandbox", g)
		}
		if slices.Contains(readOnly, g) && slices.Contains(writable, g) {
			return invalidf("%s is granted both read-only and read-write", g)
		}
		if slices.Contains(hide, g) {
			return invalidf("%s is both granted and hidden", g)
		}
	}
	return nil
}

// protectedSBPL lists what stays read-only inside writable roots: the
// protected names at each root, and the Git files of each repository (a
// worktree directory; every root counts as one, with a .git or not).
// hooks are core.hooksPath directories inside the roots. Unlike Linux, where
// only what exists can be mounted read-only, a path rule holds a missing
// name too: nothing is watched or quarantined on macOS, it is refused.
func protectedSBPL(roots, repos, hooks []string) []sbplPath {
	var out []sbplPath
	for _, r := range roots {
		for _, f := range protectedFiles {
			out = append(out, sbplPath{path.Join(r, f), sbplLiteral})
		}
		for _, d := range protectedDirs {
			out = append(out, sbplPath{path.Join(r, d), sbplTree})
		}
		out = append(out, sbplPath{r, sbplAnyDepth})
	}
	for _, repo := range sortedUnique(slices.Concat(roots, repos)) {
		g := path.Join(repo, ".git")
		out = append(out, sbplPath{g, sbplLiteral}, sbplPath{g, sbplGitNested})
		for _, rel := range protectedGit {
			kind := sbplLiteral
			if rel == ".git/hooks" {
				kind = sbplTree
			}
			out = append(out, sbplPath{path.Join(repo, rel), kind})
		}
	}
	for _, h := range hooks {
		out = append(out, sbplPath{h, sbplTree})
	}
	return sortedPaths(out)
}

// Bounds of the look for nested repositories (the Linux guard's, whose
// scan lives in protect_linux.go).
const (
	seatbeltScanDepth = 2
	seatbeltScanDirs  = 200
)

var seatbeltScanSkip = []string{"node_modules", ".cache", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache",
	".pytest_cache", ".gradle", ".npm", ".cargo", ".rustup", "target", ".terraform"}

// seatbeltProtected finds what protectedSBPL needs on the host: nested
// repositories (two levels down, and the submodules .gitmodules names),
// core.hooksPath directories (of submodules' Git directories too, as on
// Linux), and the targets of protected names that are symlinks into a
// writable root. It reads and never writes.
func seatbeltProtected(roots []string) (paths []sbplPath, warnings []string) {
	var repos, hooks []string
	budget := seatbeltScanDirs
	inRoots := func(p string) bool {
		return slices.ContainsFunc(roots, func(r string) bool { return pathtree.Within(p, r) })
	}
	for _, r := range roots {
		found := []string{r}
		type dir struct {
			path  string
			depth int
		}
		queue := []dir{{r, 0}}
		for len(queue) > 0 && budget > 0 {
			d := queue[0]
			queue, budget = queue[1:], budget-1
			entries, _ := os.ReadDir(d.path)
			for _, e := range entries {
				full := filepath.Join(d.path, e.Name())
				switch {
				case e.Name() == ".git" && d.depth > 0:
					found = append(found, d.path)
				case e.IsDir() && d.depth < seatbeltScanDepth && !slices.Contains(seatbeltScanSkip, e.Name()) && !slices.Contains(roots, full):
					queue = append(queue, dir{full, d.depth + 1})
				}
			}
		}
		if len(queue) > 0 {
			warnings = append(warnings, fmt.Sprintf("stopped looking for nested Git repositories after %d directories; repositories below %s are not protected", seatbeltScanDirs, queue[0].path))
		}
		found = append(found, submodulePaths(r)...)
		// The profile's rules hold every Git file of the table at any
		// depth (protectedSBPL); what lies elsewhere is core.hooksPath,
		// of the repository and of its submodules.
		for _, repo := range found {
			_ = walkGitDir(filepath.Join(repo, ".git"), repo, func(_ string, _ int, paths []gitProtected) error {
				for _, p := range paths {
					if p.HooksPath && inRoots(p.Path) {
						hooks = append(hooks, p.Path)
					}
				}
				return nil
			})
		}
		repos = append(repos, found...)
	}
	paths = protectedSBPL(roots, repos, hooks)
	for _, p := range paths {
		if p.Kind == sbplGitNested {
			continue
		}
		if st, err := os.Lstat(p.Path); err != nil || st.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		// Writing through the link reaches its target, which Seatbelt
		// sees; replacing the link is refused by the link's own rule.
		if t, err := filepath.EvalSymlinks(p.Path); err == nil && inRoots(t) {
			paths = append(paths, sbplPath{t, p.Kind})
		}
	}
	return sortedPaths(paths), warnings
}

// seatbeltLimits decides the limits of a macOS run. macOS has nothing that
// caps a process tree: no cgroups; RLIMIT_NPROC counts every process of the
// user (a desktop session has hundreds), so it bounds nothing about the
// sandbox; RLIMIT_AS is not enforced for memory; there is no CPU quota. So
// every limit is reported with mechanism none, and an explicit one refuses
// the run unless bestEffort, as on Linux.
func seatbeltLimits(l Limits, ramBytes int64, cpus int, bestEffort bool) (d cgroup.Decision, missing []string, err error) {
	if err := l.check(); err != nil {
		return d, nil, err
	}
	want, explicit := l.resolve(cgroup.Host{MemoryBytes: ramBytes, CPUs: cpus})
	none := func(v int64, why string) cgroup.Enforcement[int64] {
		if v <= 0 {
			return cgroup.Enforcement[int64]{Mechanism: cgroup.MechanismNone, Reason: "no limit requested"}
		}
		return cgroup.Enforcement[int64]{Value: v, Mechanism: cgroup.MechanismNone, Reason: why}
	}
	d.Memory = none(want.MemoryBytes, "macOS has no cgroups; RLIMIT_AS is not enforced by macOS, and would cap each process's address space, not the tree's memory")
	d.Pids = none(want.Pids, "macOS has no cgroups; RLIMIT_NPROC counts every process of the user, not the sandbox's tree, so it is no task limit")
	d.CPUs = cgroup.Enforcement[float64]{Value: want.CPUs, Mechanism: cgroup.MechanismNone, Reason: "macOS has no CPU quota for a process tree"}
	if want.CPUs <= 0 {
		d.CPUs = cgroup.Enforcement[float64]{Mechanism: cgroup.MechanismNone, Reason: "no limit requested"}
	}
	for _, x := range []struct {
		set          bool
		layer, since string
	}{
		{explicit.MemoryBytes > 0, "memory limit (--memory)", d.Memory.Reason},
		{explicit.Pids > 0, "task limit (--pids)", d.Pids.Reason},
		{explicit.CPUs > 0, "CPU limit (--cpus)", d.CPUs.Reason},
	} {
		switch {
		case !x.set:
		case !bestEffort:
			return d, nil, &UnavailableError{Layer: x.layer, Reason: x.since}
		default:
			missing = append(missing, fmt.Sprintf("%s (%s)", x.layer, x.since))
		}
	}
	return d, missing, nil
}

// seatbeltNetwork says whether the network mode can run: macOS has no
// network namespaces, so --net loopback gets the host's loopback, with the
// host's services on it. That is a missing layer: refused unless
// bestEffort, which reports it.
func seatbeltNetwork(n Network, bestEffort bool) (missing []string, err error) {
	if n == NetAllow {
		return nil, errAllowlistUnavailable("macOS")
	}
	if n != NetLoopback {
		return nil, nil
	}
	const layer, why = "private loopback (--net loopback)", "macOS has no network namespaces: the loopback the command may use is the host's, with every service listening on it"
	if !bestEffort {
		return nil, &UnavailableError{Layer: layer, Reason: why}
	}
	return []string{layer + " (" + why + ")"}, nil
}

// errAllowlistUnavailable refuses --net allow where the proxy has no
// private network to listen in: whoever shares the loopback could use it.
// Not even with --best-effort, which drops protections, not permissions.
func errAllowlistUnavailable(system string) error {
	return &UnavailableError{Layer: "network allowlist (--net allow)",
		Reason: "forgebox's allowlist proxy listens in the command's own network namespace, which " + system + " does not have; use --net none, or --net host"}
}

// findProgram looks name up as execvp would, in the PATH list path, with
// relative names taken from dir; a file the sandbox cannot read (visible
// says, given its canonical path) is not there, as on Linux where it is
// outside the view. Not found is ENOENT; found but not executable is
// EACCES; a path with a slash that the sandbox cannot read is EPERM.
func findProgram(name, pathList, dir string, visible func(string) bool) (string, error) {
	try := func(p string) error {
		st, err := os.Stat(p)
		switch {
		case err != nil:
			return syscall.ENOENT
		case !visible(canonicalOr(p)):
			return syscall.EPERM
		case st.IsDir() || st.Mode().Perm()&0o111 == 0:
			return syscall.EACCES
		}
		return nil
	}
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		return name, try(name)
	}
	err := error(syscall.ENOENT)
	for _, d := range filepath.SplitList(pathList) {
		if d == "" {
			d = "."
		}
		p := d + "/" + name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		switch e := try(p); e {
		case nil:
			return p, nil
		case syscall.EACCES:
			err = e
		}
	}
	return "", err
}

func canonicalOr(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// readableIn reports whether the profile of p lets the command read the
// (canonical) file f: exec needs that.
func (p seatbeltPlan) readableIn(f string) bool {
	visible := p.Profile != ProfileStrict
	if !visible {
		for _, d := range slices.Concat(strictReadable, p.SystemReadable, p.Writable, p.ReadOnly, []string{p.TempDir}) {
			visible = visible || pathtree.Within(f, d)
		}
	}
	hiddenAt, grantAt := -1, -1
	for _, s := range slices.Concat(p.Secrets, p.Hide) {
		if pathtree.Within(strings.ToLower(f), strings.ToLower(s.Path)) {
			hiddenAt = max(hiddenAt, depth(s.Path))
		}
	}
	for _, g := range slices.Concat(p.ReadOnly, p.Writable) {
		if pathtree.Within(f, g) {
			grantAt = max(grantAt, depth(g))
		}
	}
	return visible && (hiddenAt < 0 || grantAt >= hiddenAt)
}

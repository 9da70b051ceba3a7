package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/forgebox/forgebox/cgroup"
)

const (
	sbHome = "/Users/u"
	sbWS   = "/Users/u/proj"
	sbTmp  = "/private/var/folders/ab/cdef/T/forgebox-run-42"
)

func sbBasePlan(prof Profile, net Network) seatbeltPlan {
	p := seatbeltPlan{Profile: prof, Network: net, TempDir: sbTmp, Secrets: seatbeltSecrets([]string{sbHome})}
	if prof != ProfileReadOnly {
		p.Writable = []string{sbWS}
		p.Protected = protectedSBPL(p.Writable, nil, nil)
	}
	return p
}

// The profile is what Seatbelt enforces; people review it, so it is kept as
// golden text (go test -update rewrites testdata/sbpl).
func TestSBPLGolden(t *testing.T) {
	odd := "/Users/u/W\u00f6rk \"quoted\" back\\slash\nline\ttab"
	tests := []struct {
		name string
		plan func() seatbeltPlan
	}{
		{"workspace-none", func() seatbeltPlan { return sbBasePlan(ProfileWorkspace, NetNone) }},
		{"workspace-loopback", func() seatbeltPlan { return sbBasePlan(ProfileWorkspace, NetLoopback) }},
		{"workspace-host", func() seatbeltPlan { return sbBasePlan(ProfileWorkspace, NetHost) }},
		{"readonly-none", func() seatbeltPlan { return sbBasePlan(ProfileReadOnly, NetNone) }},
		{"strict-none", func() seatbeltPlan {
			p := sbBasePlan(ProfileStrict, NetNone)
			p.SystemReadable = []string{"/Applications/Xcode.app"}
			return p
		}},
		{"grants-hide-pty", func() seatbeltPlan {
			p := sbBasePlan(ProfileWorkspace, NetNone)
			p.Writable = []string{sbWS, "/Users/u/.cache/go-build"}
			p.ReadOnly = []string{"/Users/u/.ssh/known_hosts", "/opt/data"}
			p.Hide = []sbplPath{{"/Users/u/proj/secrets", sbplTree}, {"/opt/data/private", sbplTree}}
			p.Protected = protectedSBPL(p.Writable, []string{sbWS + "/vendor/lib"}, []string{sbWS + "/.githooks"})
			p.PTY = "/dev/ttys004"
			return p
		}},
		{"strict-grants", func() seatbeltPlan {
			p := sbBasePlan(ProfileStrict, NetHost)
			p.ReadOnly = []string{"/Users/u/.ssh/known_hosts", "/Users/u/go"}
			return p
		}},
		{"odd-paths", func() seatbeltPlan {
			p := sbBasePlan(ProfileWorkspace, NetNone)
			p.Writable = []string{odd}
			p.Protected = protectedSBPL(p.Writable, nil, nil)
			p.Hide = []sbplPath{{odd + "/.env", sbplLiteral}}
			return p
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.plan()
			got, err := buildSBPL(p)
			if err != nil {
				t.Fatalf("buildSBPL: %v", err)
			}
			forms := parseSBPL(t, got)
			checkSBPL(t, p, forms)
			golden(t, filepath.Join("testdata", "sbpl", tt.name+".sb"), got)
		})
	}
}

// checkSBPL asserts what every profile must do, whatever the plan: the
// order the precedence rule needs, and every path of the plan present.
func checkSBPL(t *testing.T, p seatbeltPlan, forms []sbplForm) {
	t.Helper()
	if len(forms) < 2 || forms[0].head() != "version" || forms[1].String() != "(deny default)" {
		t.Fatalf("profile does not start with (version 1)(deny default): %v", forms[:min(2, len(forms))])
	}
	index := func(pred func(sbplForm) bool) []int {
		var out []int
		for i, f := range forms {
			if pred(f) {
				out = append(out, i)
			}
		}
		return out
	}
	has := func(f sbplForm, action, op string) bool {
		return f.head() == action && slices.Contains(f.atoms(), op)
	}
	writeAllows := index(func(f sbplForm) bool {
		return has(f, "allow", "file-write*") && slices.Contains(f.strings(), p.TempDir)
	})
	readAllow := index(func(f sbplForm) bool {
		return has(f, "allow", "file-read*") && f.strings() == nil || has(f, "allow", "file-read*") && slices.Contains(f.strings(), "/usr")
	})
	if len(writeAllows) != 1 || len(readAllow) != 1 {
		t.Fatalf("want one broad write allow and one read allow, got %v and %v", writeAllows, readAllow)
	}
	broad := max(writeAllows[0], readAllow[0])
	// Every deny of files comes after the broad allows: the last
	// matching rule decides.
	for _, i := range index(func(f sbplForm) bool {
		return f.head() == "deny" && slices.ContainsFunc(f.atoms(), func(a string) bool { return strings.HasPrefix(a, "file-") })
	}) {
		if i < broad {
			t.Errorf("form %d (%s) denies files before the broad allows (form %d): it would be overridden", i, forms[i], broad)
		}
	}
	// Every secret, hidden and protected path is denied by a regex that
	// matches it.
	var regexes []*regexp.Regexp
	for _, f := range forms {
		if f.head() != "deny" {
			continue
		}
		for _, re := range f.regexes() {
			regexes = append(regexes, regexp.MustCompile(re))
		}
	}
	for _, s := range slices.Concat(p.Secrets, p.Hide, p.Protected) {
		target := s.Path
		if s.Kind == sbplGitNested {
			target += "/modules/sub/hooks/pre-commit"
		}
		if !slices.ContainsFunc(regexes, func(re *regexp.Regexp) bool { return re.MatchString(target) }) {
			t.Errorf("no deny matches %q", target)
		}
	}
	// The writable roots and the temporary directory appear verbatim.
	all := strings.Join(slices.Concat(forms[writeAllows[0]].strings()), "\x00")
	for _, w := range append(slices.Clone(p.Writable), p.TempDir) {
		if !strings.Contains(all, w) {
			t.Errorf("writable %q missing from the write allow %s", w, forms[writeAllows[0]])
		}
	}
}

func TestSBPLString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/plain/path", `"/plain/path"`},
		{"/with space", `"/with space"`},
		{`/q"uote`, `"/q\"uote"`},
		{`/back\slash`, `"/back\\slash"`},
		{"/new\nline", `"/new\nline"`},
		{"/tab\tcr\r", `"/tab\tcr\r"`},
		{"/ctl\x01\x1f\x7f", `"/ctl\x01\x1f\x7f"`},
		{"/unicode/Wörk/日本", `"/unicode/Wörk/日本"`},
		{`/"\"`, `"/\"\\\""`},
		{"", `""`},
	}
	for _, tt := range tests {
		got := sbplString(tt.in)
		if got != tt.want {
			t.Errorf("sbplString(%q) = %s, want %s", tt.in, got, tt.want)
		}
		if back := readSBPLString(t, got); back != tt.in {
			t.Errorf("reading sbplString(%q) back gives %q", tt.in, back)
		}
	}
}

func TestSBPLFold(t *testing.T) {
	tests := []struct {
		path    string
		kind    sbplPathKind
		match   []string
		noMatch []string
	}{
		{"/Users/u/.ssh", sbplTree,
			[]string{"/Users/u/.ssh", "/Users/u/.ssh/id_ed25519", "/users/U/.SSH/id", "/System/Volumes/Data/Users/u/.ssh/x"},
			[]string{"/Users/u/.sshx", "/Users/u/xssh", "/Users/u/.ss", "/private/Users/u/.ssh", "/Users/u/a/.ssh"}},
		{"/Users/u/proj/.envrc", sbplLiteral,
			[]string{"/Users/u/proj/.envrc", "/Users/u/proj/.ENVRC", "/Users/U/Proj/.EnvRc"},
			[]string{"/Users/u/proj/.envrc/x", "/Users/u/proj/.envrc2", "/Users/u/proj/xenvrc"}},
		// Non-ASCII names match in any normalization (and more).
		{"/Users/jos\u00e9/.aws", sbplTree,
			[]string{"/Users/jos\u00e9/.aws/credentials", "/Users/jose\u0301/.aws", "/Users/jos\u00c9/.AWS"},
			[]string{"/Users/jos/.aws", "/Users/jos\u00e9/x/.aws"}},
		{"/Users/u/a+b (c)[d]{e}^$|?*\\", sbplLiteral,
			[]string{"/Users/u/a+b (c)[d]{e}^$|?*\\", "/users/u/A+B (C)[D]{E}^$|?*\\"},
			[]string{"/Users/u/aab (c)[d]{e}^$|?*\\", "/Users/u/a+b c[d]{e}^$|?*\\"}},
		{"/Users/u/new\nline", sbplLiteral, []string{"/Users/u/new\nline", "/Users/u/newXline"}, []string{"/Users/u/new/line"}},
		{"/Users/u/proj/.git", sbplGitNested,
			[]string{"/Users/u/proj/.git/modules/a/hooks/post-checkout", "/Users/u/proj/.git/modules/a/b/config",
				"/Users/u/proj/.GIT/Worktrees/wt/gitdir", "/Users/u/proj/.git/worktrees/wt/commondir", "/Users/u/proj/.git/modules/a/hooks"},
			[]string{"/Users/u/proj/.git/config", "/Users/u/proj/.git/modules/a/objects/ab/cdef", "/Users/u/proj/.git/hooks/pre-commit",
				"/Users/u/proj/.git/modules/a/confign"}},
	}
	for _, tt := range tests {
		m := sbplMatch(sbplPath{tt.path, tt.kind})
		re := regexp.MustCompile(readSBPLString(t, strings.TrimSuffix(strings.TrimPrefix(m[1], "(regex "), ")")))
		for _, s := range tt.match {
			if !re.MatchString(s) {
				t.Errorf("the deny of %q (kind %d) does not match %q: %s", tt.path, tt.kind, s, re)
			}
		}
		for _, s := range tt.noMatch {
			if re.MatchString(s) {
				t.Errorf("the deny of %q (kind %d) matches %q: %s", tt.path, tt.kind, s, re)
			}
		}
	}
}

func TestBuildSBPLRejects(t *testing.T) {
	for name, mutate := range map[string]func(*seatbeltPlan){
		"relative root":   func(p *seatbeltPlan) { p.Writable = []string{"proj"} },
		"unclean secret":  func(p *seatbeltPlan) { p.Secrets = append(p.Secrets, sbplPath{"/Users/u/../x", sbplTree}) },
		"NUL in a path":   func(p *seatbeltPlan) { p.ReadOnly = []string{"/a\x00b"} },
		"no temp dir":     func(p *seatbeltPlan) { p.TempDir = "" },
		"unknown network": func(p *seatbeltPlan) { p.Network = "lan" },
		"unknown profile": func(p *seatbeltPlan) { p.Profile = "open" },
	} {
		p := sbBasePlan(ProfileWorkspace, NetNone)
		mutate(&p)
		if _, err := buildSBPL(p); err == nil {
			t.Errorf("buildSBPL(%s) = nil error, want a refusal", name)
		}
	}
}

// Missing protected names are covered as well as existing ones: a rule
// holds a path that does not exist yet.
func TestProtectedSBPL(t *testing.T) {
	got := protectedSBPL([]string{"/w", "/c"}, []string{"/w/sub"}, []string{"/w/.githooks"})
	want := map[sbplPath]bool{
		{"/w/.envrc", sbplLiteral}: true, {"/c/.bashrc", sbplLiteral}: true, {"/w/.vscode", sbplTree}: true,
		{"/w/.git", sbplLiteral}: true, {"/w/.git", sbplGitNested}: true, {"/w/.git/hooks", sbplTree}: true,
		{"/w/.git/config", sbplLiteral}: true, {"/c/.git/commondir", sbplLiteral}: true,
		{"/w/sub/.git/hooks", sbplTree}: true, {"/w/sub/.git/config", sbplLiteral}: true, {"/w/.githooks", sbplTree}: true,
	}
	for w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("protectedSBPL lacks %+v", w)
		}
	}
	if slices.Contains(got, sbplPath{"/w/sub/.envrc", sbplLiteral}) {
		t.Errorf("protectedSBPL protects rc files of a nested repository, which Linux does not")
	}
}

func TestSeatbeltProtected(t *testing.T) {
	root := t.TempDir()
	mk := func(rel, content string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if content != "" {
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		} else if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mk(".git/config", "[core]\n\thooksPath = .githooks\n")
	mk("vendor/lib/.git", "")       // depth 2: found
	mk("a/b/deep/.git", "")         // depth 3: not looked for
	mk("node_modules/pkg/.git", "") // skipped
	mk(".gitmodules", "[submodule \"x\"]\n\tpath = third/party/x\n")
	mk("dotfiles/envrc", "export A=1\n")
	if err := os.Symlink(filepath.Join(root, "dotfiles/envrc"), filepath.Join(root, ".envrc")); err != nil {
		t.Fatal(err)
	}
	got, warnings := seatbeltProtected([]string{root})
	if len(warnings) != 0 {
		t.Errorf("warnings: %v", warnings)
	}
	for _, w := range []sbplPath{
		{root + "/.git/hooks", sbplTree}, {root + "/.githooks", sbplTree},
		{root + "/vendor/lib/.git/hooks", sbplTree}, {root + "/third/party/x/.git/config", sbplLiteral},
		{root + "/.envrc", sbplLiteral}, {root + "/dotfiles/envrc", sbplLiteral},
	} {
		if !slices.Contains(got, w) {
			t.Errorf("seatbeltProtected lacks %+v", w)
		}
	}
	for _, p := range got {
		if strings.Contains(p.Path, "/deep/") || strings.Contains(p.Path, "node_modules") {
			t.Errorf("seatbeltProtected went where the Linux scan does not: %+v", p)
		}
	}
}

func TestCheckSeatbeltRoots(t *testing.T) {
	homes := []string{sbHome}
	secrets := []string{"/Users/u/.ssh", "/Users/u/.config/gh"}
	tests := []struct {
		name         string
		ws           string
		rw, ro, hide []string
		ok           bool
	}{
		{"a project", sbWS, nil, nil, nil, true},
		{"rw beside it", sbWS, []string{"/Users/u/.cache/go-build"}, []string{"/opt/data"}, []string{"/opt/x"}, true},
		{"the home", sbHome, nil, nil, nil, false},
		{"/Users", "/Users", nil, nil, nil, false},
		{"inside /System", "/System/Library/x", nil, nil, nil, false},
		{"inside /Library", "/Library/WebServer", nil, nil, nil, false},
		{"/private/var", "/private/var", nil, nil, nil, false},
		{"inside a secret", "/Users/u/.ssh/keys", nil, nil, nil, false},
		{"rw of the home", sbWS, []string{sbHome}, nil, nil, false},
		{"rw inside a secret", sbWS, []string{"/Users/u/.config/gh/x"}, nil, nil, false},
		{"grant in /dev", sbWS, nil, []string{"/dev/disk0"}, nil, false},
		{"rw and ro", sbWS, []string{"/opt/a"}, []string{"/opt/a"}, nil, false},
		{"granted and hidden", sbWS, nil, []string{"/opt/a"}, []string{"/opt/a"}, false},
		{"a scratch workspace", "/private/var/folders/ab/cd/T/forgebox-doctor-1", nil, nil, nil, true},
	}
	for _, tt := range tests {
		writable := append([]string{tt.ws}, tt.rw...)
		err := checkSeatbeltRoots(tt.ws, writable, tt.ro, tt.hide, homes, secrets)
		if (err == nil) != tt.ok {
			t.Errorf("checkSeatbeltRoots(%s) = %v, want ok=%v", tt.name, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("checkSeatbeltRoots(%s) = %v, not ErrInvalid", tt.name, err)
		}
	}
}

func TestSeatbeltLimits(t *testing.T) {
	const gib = 1 << 30
	d, missing, err := seatbeltLimits(Limits{}, 16*gib, 8, false)
	if err != nil || len(missing) != 0 {
		t.Fatalf("defaults: %v, %v; want them reported, not refused", err, missing)
	}
	if d.Memory.Value != 8*gib || d.Pids.Value != cgroup.DefaultPidsMin || d.CPUs.Value != 0 {
		t.Errorf("defaults = %+v", d)
	}
	for _, m := range []cgroup.Mechanism{d.Memory.Mechanism, d.Pids.Mechanism, d.CPUs.Mechanism} {
		if m != cgroup.MechanismNone {
			t.Errorf("a limit enforced by %q on macOS", m)
		}
	}
	if len(d.Rlimits) != 0 {
		t.Errorf("rlimits %v: none is honest on macOS", d.Rlimits)
	}
	for _, tt := range []struct {
		l     Limits
		layer string
	}{
		{Limits{MemoryBytes: gib}, "memory limit (--memory)"},
		{Limits{Pids: 64}, "task limit (--pids)"},
		{Limits{CPUs: 1.5}, "CPU limit (--cpus)"},
	} {
		_, _, err := seatbeltLimits(tt.l, 16*gib, 8, false)
		var un *UnavailableError
		if !errors.As(err, &un) || un.Layer != tt.layer {
			t.Errorf("seatbeltLimits(%+v) = %v, want UnavailableError for %s", tt.l, err, tt.layer)
		}
		_, missing, err := seatbeltLimits(tt.l, 16*gib, 8, true)
		if err != nil || len(missing) != 1 || !strings.HasPrefix(missing[0], tt.layer) {
			t.Errorf("best effort: seatbeltLimits(%+v) = %v, %v", tt.l, missing, err)
		}
	}
	if _, _, err := seatbeltLimits(Limits{MemoryBytes: NoLimit, Pids: NoLimit}, gib, 1, false); err != nil {
		t.Errorf("no limits: %v", err)
	}
	if _, _, err := seatbeltLimits(Limits{MemoryBytes: 10}, gib, 1, true); !errors.Is(err, ErrInvalid) {
		t.Errorf("a 10-byte limit: %v, want ErrInvalid", err)
	}
}

func TestSeatbeltNetwork(t *testing.T) {
	for _, n := range []Network{NetNone, NetHost} {
		if m, err := seatbeltNetwork(n, false); err != nil || m != nil {
			t.Errorf("seatbeltNetwork(%s) = %v, %v", n, m, err)
		}
	}
	var un *UnavailableError
	if _, err := seatbeltNetwork(NetLoopback, false); !errors.As(err, &un) {
		t.Errorf("loopback without --best-effort: %v, want UnavailableError", err)
	}
	if m, err := seatbeltNetwork(NetLoopback, true); err != nil || len(m) != 1 {
		t.Errorf("loopback with --best-effort: %v, %v", m, err)
	}
	// The allowlist is refused even with --best-effort: degrading it
	// would widen or silently change what the command reaches.
	for _, best := range []bool{false, true} {
		if _, err := seatbeltNetwork(NetAllow, best); !errors.As(err, &un) {
			t.Errorf("allow (best effort %v): %v, want UnavailableError", best, err)
		}
	}
}

func TestFindProgram(t *testing.T) {
	dir := t.TempDir()
	bin1, bin2 := filepath.Join(dir, "bin1"), filepath.Join(dir, "bin2")
	for _, d := range []string{bin1, bin2, filepath.Join(dir, "bin2", "adir")} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(bin1, "noexec"), nil, 0o644)
	os.WriteFile(filepath.Join(bin2, "noexec"), nil, 0o644)
	os.WriteFile(filepath.Join(bin2, "tool"), nil, 0o755)
	os.WriteFile(filepath.Join(bin1, "both"), nil, 0o644)
	os.WriteFile(filepath.Join(bin2, "both"), nil, 0o755)
	os.WriteFile(filepath.Join(dir, "local"), nil, 0o755)
	hidden := filepath.Join(dir, "hidden")
	os.MkdirAll(hidden, 0o755)
	os.WriteFile(filepath.Join(hidden, "tool"), nil, 0o755)
	os.WriteFile(filepath.Join(hidden, "only"), nil, 0o755)
	path := hidden + ":" + bin1 + ":" + bin2
	tests := []struct {
		name, want string
		errno      syscall.Errno
	}{
		{"tool", filepath.Join(bin2, "tool"), 0},
		{"both", filepath.Join(bin2, "both"), 0},
		{"noexec", "", syscall.EACCES},
		{"missing", "", syscall.ENOENT},
		{"adir", "", syscall.EACCES},
		{"./local", filepath.Join(dir, "local"), 0},
		{filepath.Join(bin2, "tool"), filepath.Join(bin2, "tool"), 0},
		{"./missing", "", syscall.ENOENT},
		{"only", "", syscall.ENOENT},
		{"./hidden/only", "", syscall.EPERM},
	}
	for _, tt := range tests {
		got, err := findProgram(tt.name, path, dir, func(f string) bool { return !strings.Contains(f, "hidden") })
		var errno syscall.Errno
		errors.As(err, &errno)
		if errno != tt.errno || (err == nil && got != tt.want) {
			t.Errorf("findProgram(%q) = %q, %v; want %q, %v", tt.name, got, err, tt.want, tt.errno)
		}
	}
}

func TestReadableIn(t *testing.T) {
	ws := sbBasePlan(ProfileWorkspace, NetNone)
	ws.ReadOnly = []string{"/Users/u/.ssh/bin"}
	strict := sbBasePlan(ProfileStrict, NetNone)
	tests := []struct {
		plan seatbeltPlan
		file string
		want bool
	}{
		{ws, "/usr/bin/git", true},
		{ws, "/Users/u/go/bin/tool", true},
		{ws, "/Users/u/.aws/helper", false},
		{ws, "/Users/u/.AWS/helper", false},
		{ws, "/Users/u/.ssh/bin/x", true},
		{strict, "/usr/bin/git", true},
		{strict, "/Users/u/proj/run.sh", true},
		{strict, "/Users/u/go/bin/tool", false},
		{strict, "/opt/homebrew/bin/node", true},
	}
	for _, tt := range tests {
		if got := tt.plan.readableIn(tt.file); got != tt.want {
			t.Errorf("readableIn(%s, %s) = %v, want %v", tt.plan.Profile, tt.file, got, tt.want)
		}
	}
}

// A small SBPL reader, enough to check that a profile is well formed: the
// reader of TinyScheme, which SBPL is, for strings, comments, lists and
// atoms.

type sbplForm struct {
	atom   string // an atom, or a string when str is set
	str    bool
	list   []sbplForm
	isList bool
}

func (f sbplForm) head() string {
	if !f.isList || len(f.list) == 0 {
		return ""
	}
	return f.list[0].atom
}

// atoms are the form's direct atoms (the operations of a rule).
func (f sbplForm) atoms() []string {
	var out []string
	for _, x := range f.list {
		if !x.isList && !x.str {
			out = append(out, x.atom)
		}
	}
	return out
}

// strings are every string anywhere in the form.
func (f sbplForm) strings() []string {
	var out []string
	for _, x := range f.list {
		switch {
		case x.str:
			out = append(out, x.atom)
		case x.isList:
			out = append(out, x.strings()...)
		}
	}
	return out
}

// regexes are the arguments of the (regex "...") filters in the form.
func (f sbplForm) regexes() []string {
	var out []string
	for _, x := range f.list {
		if x.isList && x.head() == "regex" && len(x.list) == 2 && x.list[1].str {
			out = append(out, x.list[1].atom)
		} else if x.isList {
			out = append(out, x.regexes()...)
		}
	}
	return out
}

func (f sbplForm) String() string {
	switch {
	case f.str:
		return sbplString(f.atom)
	case !f.isList:
		return f.atom
	}
	var parts []string
	for _, x := range f.list {
		parts = append(parts, x.String())
	}
	return "(" + strings.Join(parts, " ") + ")"
}

func parseSBPL(t *testing.T, src string) []sbplForm {
	t.Helper()
	r := &sbplReader{src: src}
	var forms []sbplForm
	for {
		r.skip()
		if r.pos >= len(r.src) {
			return forms
		}
		f, err := r.form()
		if err != nil {
			t.Fatalf("profile does not parse at byte %d: %v\n%s", r.pos, err, src)
		}
		if !f.isList {
			t.Fatalf("top-level atom %s in the profile", f)
		}
		forms = append(forms, f)
	}
}

func readSBPLString(t *testing.T, lit string) string {
	t.Helper()
	r := &sbplReader{src: lit}
	f, err := r.form()
	if err != nil || !f.str || r.pos != len(lit) {
		t.Fatalf("%s is not one string literal: %v", lit, err)
	}
	return f.atom
}

type sbplReader struct {
	src string
	pos int
}

func (r *sbplReader) skip() {
	for r.pos < len(r.src) {
		switch c := r.src[r.pos]; {
		case c == ';':
			for r.pos < len(r.src) && r.src[r.pos] != '\n' {
				r.pos++
			}
		case c == ' ' || c == '\n' || c == '\t':
			r.pos++
		default:
			return
		}
	}
}

func (r *sbplReader) form() (sbplForm, error) {
	r.skip()
	if r.pos >= len(r.src) {
		return sbplForm{}, fmt.Errorf("unexpected end")
	}
	switch r.src[r.pos] {
	case '(':
		r.pos++
		f := sbplForm{isList: true}
		for {
			r.skip()
			if r.pos >= len(r.src) {
				return f, fmt.Errorf("unclosed list")
			}
			if r.src[r.pos] == ')' {
				r.pos++
				return f, nil
			}
			x, err := r.form()
			if err != nil {
				return f, err
			}
			f.list = append(f.list, x)
		}
	case ')':
		return sbplForm{}, fmt.Errorf("unexpected )")
	case '"':
		r.pos++
		var b strings.Builder
		for r.pos < len(r.src) {
			c := r.src[r.pos]
			r.pos++
			switch c {
			case '"':
				return sbplForm{atom: b.String(), str: true}, nil
			case '\n':
				return sbplForm{}, fmt.Errorf("raw newline in a string")
			case '\\':
				if r.pos >= len(r.src) {
					return sbplForm{}, fmt.Errorf("dangling backslash")
				}
				e := r.src[r.pos]
				r.pos++
				switch e {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				case 'r':
					b.WriteByte('\r')
				case '"', '\\':
					b.WriteByte(e)
				case 'x':
					if r.pos+2 > len(r.src) {
						return sbplForm{}, fmt.Errorf("short \\x escape")
					}
					v, err := strconv.ParseUint(r.src[r.pos:r.pos+2], 16, 8)
					if err != nil {
						return sbplForm{}, err
					}
					b.WriteByte(byte(v))
					r.pos += 2
				default:
					return sbplForm{}, fmt.Errorf("unknown escape \\%c", e)
				}
			default:
				b.WriteByte(c)
			}
		}
		return sbplForm{}, fmt.Errorf("unterminated string")
	}
	start := r.pos
	for r.pos < len(r.src) && !strings.ContainsRune(" \n\t()\";", rune(r.src[r.pos])) {
		r.pos++
	}
	return sbplForm{atom: r.src[start:r.pos]}, nil
}

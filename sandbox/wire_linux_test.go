package sandbox

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The parent and the C child must agree on every wire constant.
func TestWireConstantsMatchC(t *testing.T) {
	if !childLinked {
		t.Skip("built without cgo: no C child to compare with")
	}
	goSide := []int{msgSpec, msgReady, msgError, msgExit, msgView, tagFlags, tagUIDOut, tagGIDOut, tagUIDIn, tagGIDIn,
		tagArg, tagEnv, tagCwd, tagPath, tagMount, tagWinsize, tagAltArg0, tagSlots, tagRunFlags,
		flagNewNet, flagIsolate, runFlagPTY,
		opClone, opAttach, opSetattr, opTmpfs, opMkdir, opMkfile, opSymlink, opHide,
		opFlagRecursive, opFlagDir, syncFD, maxFrame, 48, tagFDs, tagRule, tagSeccomp,
		tagRlimit, fdLandlock, fdCgroup, fdJoinShift, maxJoin,
		tagProxy, readyPidfd, readyMaster, readyProxy,
		tagSeccompNotify, readyNotify, opFlagLink, opOverlay}
	for i, want := range goSide {
		if got := wireConstantC(i); got != want {
			t.Errorf("wire constant %d: C has %d, Go has %d", i, got, want)
		}
	}
	if wireConstantC(len(goSide)) != -1 {
		t.Error("the C table has more constants than this test checks")
	}
}

// The names and values the two sides share, read from the C sources
// themselves rather than through the linked table above: this also runs
// without cgo, and it covers the strings (the hidden verb, the step names)
// and every constant of init_linux.h, not only those the table lists.
func TestWireNamesMatchC(t *testing.T) {
	defs := cHeaderConstants(t, "init_linux.h")
	shared := map[string]any{
		"FB_VERB":      ChildVerb,
		"FB_SYNC_FD":   syncFD,
		"FB_MAX_FRAME": maxFrame,

		"FB_MSG_SPEC": msgSpec, "FB_MSG_READY": msgReady, "FB_MSG_ERROR": msgError, "FB_MSG_EXIT": msgExit, "FB_MSG_VIEW": msgView,

		"FB_TAG_FLAGS": tagFlags, "FB_TAG_UID_OUT": tagUIDOut, "FB_TAG_GID_OUT": tagGIDOut, "FB_TAG_UID_IN": tagUIDIn,
		"FB_TAG_GID_IN": tagGIDIn, "FB_TAG_ARG": tagArg, "FB_TAG_ENV": tagEnv, "FB_TAG_CWD": tagCwd, "FB_TAG_PATH": tagPath,
		"FB_TAG_MOUNT": tagMount, "FB_TAG_WINSIZE": tagWinsize, "FB_TAG_ALT_ARG0": tagAltArg0, "FB_TAG_SLOTS": tagSlots,
		"FB_TAG_RUN_FLAGS": tagRunFlags, "FB_TAG_FDS": tagFDs, "FB_TAG_RULE": tagRule, "FB_TAG_SECCOMP": tagSeccomp,
		"FB_TAG_RLIMIT": tagRlimit, "FB_TAG_PROXY_PORT": tagProxy,
		"FB_TAG_SECCOMP_NOTIFY": tagSeccompNotify,

		"FB_FLAG_NEWNET": flagNewNet, "FB_FLAG_ISOLATE": flagIsolate, "FB_RUN_PTY": runFlagPTY,

		"FB_FD_LANDLOCK": fdLandlock, "FB_FD_CGROUP": fdCgroup, "FB_FD_JOIN_SHIFT": fdJoinShift, "FB_MAX_JOIN": maxJoin,
		"FB_READY_PIDFD": readyPidfd, "FB_READY_MASTER": readyMaster, "FB_READY_PROXY": readyProxy,
		"FB_READY_NOTIFY": readyNotify,

		"FB_OP_CLONE": opClone, "FB_OP_ATTACH": opAttach, "FB_OP_SETATTR": opSetattr, "FB_OP_TMPFS": opTmpfs,
		"FB_OP_MKDIR": opMkdir, "FB_OP_MKFILE": opMkfile, "FB_OP_SYMLINK": opSymlink, "FB_OP_HIDE": opHide,
		"FB_OP_OVERLAY":    opOverlay,
		"FB_OPF_RECURSIVE": opFlagRecursive, "FB_OPF_DIR": opFlagDir, "FB_OPF_LINK": opFlagLink, "FB_OPF_KEEP": opFlagKeep, "FB_OPF_REQUIRED": opFlagRequired,
		"FB_MOUNT_FIXED": mountRecordFixed(t),

		"FB_SIG_KILL_TREE": int(sigKillTree),
		// Not constants of this package, but the C constructor acts on
		// them: `forgebox run` (cmd/forgebox) is the verb it preforks for,
		// and integration tests turn the prefork off by this variable.
		"FB_RUN_VERB":       "run",
		"FB_NO_PREFORK_ENV": "FORGEBOX_NO_PREFORK",
	}
	// The C side's own: the staging tmpfs is made and detached in the
	// child; the parent never names it.
	cOnly := []string{"FB_STAGE", "FB_STAGE_DIR", "FB_STAGE_FILE", "FB_STAGE_CACHE"}

	for name, c := range defs {
		want, ok := shared[name]
		if !ok {
			if !slices.Contains(cOnly, name) {
				t.Errorf("init_linux.h defines %s = %v, which this test does not compare: add its Go twin", name, c)
			}
			continue
		}
		if fmt.Sprint(c) != fmt.Sprint(want) {
			t.Errorf("%s: C has %v, Go has %v", name, c, want)
		}
	}
	for name := range shared {
		if _, ok := defs[name]; !ok {
			t.Errorf("init_linux.h no longer defines %s", name)
		}
	}

	// The steps of the error frame. The list is the stable set agents may
	// see; a new or renamed step in C must be added here on purpose.
	steps := []string{"capabilities", "cgroup", "cwd", "exec", "fds", "hostname", "landlock", "loopback",
		"mounts", "namespaces", "network proxy", "no-new-privs", "rlimits", "seccomp", "session", "spec",
		"start", "terminal", "undo"}
	got := cSteps(t)
	if !slices.Equal(got, steps) {
		t.Errorf("steps the C child reports = %q, want %q", got, steps)
	}
	for _, s := range []string{stepExec, stepNamespaces, stepMounts} {
		if !slices.Contains(got, s) {
			t.Errorf("the parent branches on step %q, which the C child never reports", s)
		}
	}

	// The verb the constructor preforks for is one cmd/forgebox
	// dispatches (to its run).
	main, err := os.ReadFile("../cmd/forgebox/main.go")
	if err != nil {
		t.Fatal(err)
	}
	if verb := fmt.Sprint(defs["FB_RUN_VERB"]); !regexp.MustCompile(`(?m)^\s*case\s+[^:\n]*"` + regexp.QuoteMeta(verb) + `"[^:\n]*:`).Match(main) {
		t.Errorf("cmd/forgebox/main.go does not dispatch the verb %q (FB_RUN_VERB)", verb)
	}

	// The mount attributes Go puts in mount ops, which the C side tests
	// by its own names.
	child := cHeaderConstants(t, "child_linux.h")
	for name, want := range map[string]int{"FB_MOUNT_ATTR_RDONLY": attrRdonly, "FB_MOUNT_ATTR_NOSUID": attrNosuid,
		"FB_MOUNT_ATTR_NODEV": attrNodev, "FB_MOUNT_ATTR_NOEXEC": attrNoexec} {
		if c, ok := child[name]; !ok || c != want {
			t.Errorf("child_linux.h: %s = %v, Go has %d", name, c, want)
		}
	}
}

// cHeaderConstants reads the #defines and enum values of a C header:
// integers (decimal, hex, a << b) and strings (literals, concatenated with
// earlier string macros).
func cHeaderConstants(t *testing.T, file string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	src := regexp.MustCompile(`(?s)/\*.*?\*/`).ReplaceAllString(string(b), "")
	defs := map[string]any{}
	eval := func(name, expr string) {
		expr = strings.TrimSpace(expr)
		if strings.HasPrefix(expr, "(") && strings.HasSuffix(expr, ")") {
			expr = expr[1 : len(expr)-1]
		}
		if strings.Contains(expr, `"`) {
			var s strings.Builder
			for _, tok := range regexp.MustCompile(`"[^"]*"|FB_\w+`).FindAllString(expr, -1) {
				if v, ok := defs[tok].(string); ok {
					s.WriteString(v)
				} else if strings.HasPrefix(tok, `"`) {
					s.WriteString(strings.Trim(tok, `"`))
				} else {
					t.Fatalf("%s: %s is not an earlier string macro", name, tok)
				}
			}
			defs[name] = s.String()
			return
		}
		v := 0
		for i, part := range strings.Split(expr, "<<") {
			n, err := strconv.ParseInt(strings.TrimRight(strings.TrimSpace(part), "UL"), 0, 64)
			if err != nil {
				t.Fatalf("%s = %s: cannot read %q", name, expr, part)
			}
			if i == 0 {
				v = int(n)
			} else {
				v <<= n
			}
		}
		defs[name] = v
	}
	for _, m := range regexp.MustCompile(`(?m)^#define\s+(FB_\w+)\s+(.+)$`).FindAllStringSubmatch(src, -1) {
		eval(m[1], m[2])
	}
	for _, m := range regexp.MustCompile(`\b(FB_\w+)\s*=\s*([^,}\n]+)`).FindAllStringSubmatch(src, -1) {
		eval(m[1], m[2])
	}
	if len(defs) == 0 {
		t.Fatalf("no constants found in %s", file)
	}
	return defs
}

// cSteps lists the step names the child's fb_fail calls pass, sorted.
func cSteps(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*_linux.c")
	if err != nil || len(files) == 0 {
		t.Fatalf("no C sources: %v", err)
	}
	call := regexp.MustCompile(`\bfb_fail\(\s*[^,]+,\s*([^,]+),`)
	lit := regexp.MustCompile(`"([^"]*)"`)
	var steps []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range call.FindAllStringSubmatch(string(b), -1) {
			if strings.Contains(m[1], "const char") {
				continue // the definition
			}
			names := lit.FindAllStringSubmatch(m[1], -1)
			if len(names) == 0 {
				t.Errorf("%s: fb_fail with a step that is not a literal: %s", f, m[1])
			}
			for _, n := range names {
				if !slices.Contains(steps, n[1]) {
					steps = append(steps, n[1])
				}
			}
		}
	}
	slices.Sort(steps)
	return steps
}

// mountRecordFixed is the size of an encoded mount op before its strings,
// measured on the encoder's output.
func mountRecordFixed(t *testing.T) int {
	t.Helper()
	s := childSpec{Mounts: []mountOp{{Op: opTmpfs}}}
	b, err := s.encodeView()
	if err != nil {
		t.Fatal(err)
	}
	for p := 5; p+6 <= len(b); {
		tag, n := binary.LittleEndian.Uint16(b[p:]), int(binary.LittleEndian.Uint32(b[p+2:]))
		if tag == tagMount {
			return n - 2*(2+1) // two empty strings: u16 length and a NUL each
		}
		p += 6 + n
	}
	t.Fatal("no mount record in the encoded view")
	return 0
}

package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/forgebox/forgebox"

// layers is the direction of imports (STYLE.md, "The house"): each
// forgebox package and the forgebox packages it may import. A leaf
// (policy, history, landlock, seccomp, cgroup, ...) imports none, so a
// lower package cannot reach up into the launcher or the CLI, and the CLI
// and the agent share one run path instead of a leaf growing a second.
// A package missing from the table fails the test: place it on purpose.
var layers = map[string][]string{
	"cmd/forgebox": {"agent", "caches", "cgroup", "files", "history", "netproxy", "policy", "probe", "runner", "sandbox", "selftest", "session", "undo"},
	"agent":        {"files", "policy", "sandbox", "session", "undo"},
	// One run from request to outcome: judge, ask, launch, record.
	"runner":   {"history", "netproxy", "policy", "sandbox", "undo"},
	"selftest": {"caches", "cgroup", "probe", "sandbox"}, // attacks the launcher from outside; the CLI renders it
	"sandbox":  {"caches", "cgroup", "conpty_windows", "landlock", "netproxy", "seccomp", "undo"},

	"caches":         nil,
	"cgroup":         nil,
	"conpty_windows": nil,
	"files":          nil,
	"history":        nil,
	"landlock":       nil,
	"netproxy":       nil,
	"policy":         nil,
	"probe":          nil,
	"seccomp":        nil,
	"session":        nil,
	"undo":           nil, // the undo store: records, commit, restore (sandbox commits, the CLI undoes)

	"shellquote": nil,
	"pathtree":   nil,
	"gitkeys":    nil,
	"rmtree":     nil,

	"bench":                {"integration/everyday", "bench/pairs"}, // drives the built binary from outside
	"bench/pairs":          nil,                                     // interleaved pairs of commands, for the bench and the launch budget
	"integration":          {"integration/everyday", "bench/pairs"}, // black-box: runs the built binary
	"integration/everyday": nil,                                     // tiny projects for the integration tests and the bench
	"integration/agents":   nil,                                     // real agent clients against the built binary (make agents-test)
	"integration/probe":    {"probe"},
	"integration/vm":       nil,
	"integration/vm/guest": nil,
}

// base are tiny leaves of one idea each (shell quoting, lexical path
// containment, the Git config key rule, removing a tree its modes protect) that every package may import: they import nothing of
// forgebox's themselves.
var base = []string{"shellquote", "pathtree", "gitkeys", "rmtree"}

// testLayers are the edges only a package's tests may add on top of
// layers. Each is a test that checks a leaf against the sandbox's own
// rule rather than a copy of it; none is a cycle, as sandbox imports no
// package that imports it back.
var testLayers = map[string][]string{
	"files": {"sandbox"}, // nested_linux_test.go: the file tools protect what sandbox.Protected protects
}

// The import graph differs per OS (sandbox imports conpty_windows only on
// Windows, seccomp only with cgo on Linux), so each build is checked.
var builds = []struct{ goos, cgo string }{
	{"linux", "1"}, {"linux", "0"}, {"darwin", "0"}, {"windows", "0"},
}

func TestImportDirection(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to list the imports with: %v", err)
	}
	root := filepath.Join("..", "..")
	for _, b := range builds {
		t.Run(b.goos+"/cgo="+b.cgo, func(t *testing.T) {
			for _, p := range listImports(t, gobin, root, b.goos, b.cgo) {
				allowed, known := layers[p.pkg]
				if !known {
					t.Errorf("package %s is not in the layers table: add it with the forgebox packages it may import", p.pkg)
					continue
				}
				for _, dep := range p.imports {
					if !slices.Contains(allowed, dep) && !slices.Contains(base, dep) {
						t.Errorf("%s imports %s, want only %v", p.pkg, dep, allowed)
					}
				}
				for _, dep := range p.testImports {
					if !slices.Contains(allowed, dep) && !slices.Contains(base, dep) && !slices.Contains(testLayers[p.pkg], dep) && dep != p.pkg {
						t.Errorf("tests of %s import %s, want only %v (+ tests: %v)", p.pkg, dep, allowed, testLayers[p.pkg])
					}
				}
			}
		})
	}
}

type pkgImports struct {
	pkg                  string
	imports, testImports []string
}

// listImports runs go list for one build and keeps the forgebox imports,
// relative to the module path.
func listImports(t *testing.T, gobin, root, goos, cgo string) []pkgImports {
	t.Helper()
	const format = `{{.ImportPath}}|{{join .Imports " "}}|{{join .TestImports " "}} {{join .XTestImports " "}}`
	cmd := exec.Command(gobin, "list", "-e", "-f", format, "./...")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS="+goos, "CGO_ENABLED="+cgo)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("GOOS=%s go list: %v\n%s", goos, err, stderr.Bytes())
	}
	var pkgs []pkgImports
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "|")
		if len(fields) != 3 {
			t.Fatalf("go list line %q: want 3 fields", sc.Text())
		}
		pkgs = append(pkgs, pkgImports{
			pkg:         strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/"),
			imports:     ours(fields[1]),
			testImports: ours(fields[2]),
		})
	}
	if len(pkgs) == 0 {
		t.Fatalf("GOOS=%s go list: no packages", goos)
	}
	return pkgs
}

func ours(list string) []string {
	var deps []string
	for _, imp := range strings.Fields(list) {
		if rest, ok := strings.CutPrefix(imp, module+"/"); ok {
			deps = append(deps, rest)
		}
	}
	return deps
}

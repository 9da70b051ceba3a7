package sandbox

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Every field of Enforced is named in newEnforced, so that a field added
// to the struct is decided once for every OS instead of being left out by
// one of them (the best-effort report once lost the profile that way).
func TestNewEnforcedSetsEveryField(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "enforced.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var named []string
	ast.Inspect(f, func(n ast.Node) bool {
		fn, ok := n.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "newEnforced" {
			return true
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			if id, ok := lit.Type.(*ast.Ident); !ok || id.Name != "Enforced" {
				return true
			}
			for _, el := range lit.Elts {
				if kv, ok := el.(*ast.KeyValueExpr); ok {
					named = append(named, kv.Key.(*ast.Ident).Name)
				}
			}
			return false
		})
		return false
	})
	if len(named) == 0 {
		t.Fatal("no Enforced literal found in newEnforced")
	}
	typ := reflect.TypeOf(Enforced{})
	for i := range typ.NumField() {
		if name := typ.Field(i).Name; !slices.Contains(named, name) {
			t.Errorf("newEnforced does not set Enforced.%s: decide its value for every OS there", name)
		}
	}
}

// The lists of a fresh report are empty, not nil, so that JSON says []
// rather than null, except where null means something: omitted fields and
// SeccompDenied (no filter loaded).
func TestNewEnforcedListsAreEmpty(t *testing.T) {
	e := reflect.ValueOf(newEnforced(ProfileWorkspace, NetNone, false))
	typ := e.Type()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Type.Kind() != reflect.Slice || strings.HasSuffix(f.Tag.Get("json"), ",omitempty") || f.Name == "SeccompDenied" {
			continue
		}
		if e.Field(i).IsNil() {
			t.Errorf("newEnforced(...).%s = nil; want an empty list", f.Name)
		}
	}
}

// withoutSandbox keeps what is applied to the process itself and drops
// what the sandbox proper gave.
func TestWithoutSandbox(t *testing.T) {
	e := newEnforced(ProfileStrict, NetNone, true)
	e.Namespaces = append(e.Namespaces, "user")
	e.ReadOnlyRoot, e.Proxy = true, "10.0.0.1:3128"
	e.Writable, e.Hidden, e.Protected = []string{"/w"}, []string{"/h"}, []string{"/w/.git/config"}
	e.Watched = []string{"/w/.envrc"}
	e.LandlockABI, e.Seccomp, e.SeccompDenied = 6, true, []string{"ptrace"}
	e.UnixSockets, e.NoNewPrivs, e.Capabilities = UnixSocketsRefused, true, "none"
	e.Missing = []string{"the cpu limit"}

	got := e.withoutSandbox("namespaces (refused)")
	if got.Sandbox || got.ReadOnlyRoot || got.Proxy != "" || got.Network != NetHost {
		t.Errorf("withoutSandbox: sandbox %v, read-only root %v, proxy %q, network %q; want false, false, \"\", host",
			got.Sandbox, got.ReadOnlyRoot, got.Proxy, got.Network)
	}
	for name, l := range map[string][]string{"Namespaces": got.Namespaces, "Writable": got.Writable, "Hidden": got.Hidden,
		"Sockets": got.Sockets, "Protected": got.Protected, "PrivateDirs": got.PrivateDirs} {
		if l == nil || len(l) != 0 {
			t.Errorf("withoutSandbox: %s = %#v; want []", name, l)
		}
	}
	if got.Profile != ProfileStrict || !got.PTY || got.LandlockABI != 6 || !got.Seccomp || !slices.Equal(got.SeccompDenied, []string{"ptrace"}) ||
		got.UnixSockets != UnixSocketsRefused || !got.NoNewPrivs || got.Capabilities != "none" || !slices.Equal(got.Watched, []string{"/w/.envrc"}) {
		t.Errorf("withoutSandbox dropped what the process keeps: %+v", got)
	}
	if want := []string{"namespaces (refused)", "the cpu limit"}; !slices.Equal(got.Missing, want) {
		t.Errorf("withoutSandbox: Missing = %q; want %q", got.Missing, want)
	}
}

package caches

import (
	"path"
	"strings"
)

// Entry is one cache directory of the table.
type Entry struct {
	// Name is the directory under a workspace's cache, and what
	// forgebox reports.
	Name string
	// Tools says whose cache it is, for people.
	Tools string
	// Default is the directory relative to the home.
	Default string
	// Env are variables that move it, in order of precedence: the first
	// one set (to an absolute path) wins, with Suffix joined to it. GOPATH
	// may be a list; its first element counts.
	Env []EnvPath
	// Redirect says how to point the tool at the private cache when the
	// host directory is missing (no lower directory, and no mount point
	// can be made in the read-only home): NAME=%s, where %s is replaced by
	// the private cache's path inside the sandbox; a NAME+=%s form
	// appends to the variable, space-separated. Empty: nothing can, and
	// the tool finds its cache read-only.
	Redirect string
	// OnlyRedirect entries are never mounted over an existing host
	// directory: they exist for the missing case only (CARGO_HOME, which
	// holds configuration and installed binaries besides the caches).
	OnlyRedirect bool
}

// EnvPath is a variable naming a cache directory, or its parent.
type EnvPath struct {
	Name, Suffix string
}

// Table lists the caches a sandboxed command may write privately. The
// subdirectories of ~/.cache (Go's build cache, pip, uv, Yarn 1, pnpm's
// metadata cache, ...) come with the first entry.
var Table = []Entry{
	{Name: "xdg-cache", Tools: "~/.cache: go build, pip, uv, yarn v1, pnpm metadata, ...", Default: ".cache",
		Env: []EnvPath{{"XDG_CACHE_HOME", ""}}, Redirect: "XDG_CACHE_HOME=%s"},
	{Name: "go-build", Tools: "Go build cache when GOCACHE moves it", Env: []EnvPath{{"GOCACHE", ""}},
		Redirect: "GOCACHE=%s"},
	{Name: "go-mod", Tools: "Go module cache", Default: "go/pkg/mod",
		Env: []EnvPath{{"GOMODCACHE", ""}, {"GOPATH", "pkg/mod"}}, Redirect: "GOMODCACHE=%s"},
	{Name: "npm", Tools: "npm", Default: ".npm", Env: []EnvPath{{"npm_config_cache", ""}}, Redirect: "npm_config_cache=%s"},
	{Name: "pnpm-store", Tools: "pnpm content-addressable store", Default: ".local/share/pnpm/store",
		Env: []EnvPath{{"npm_config_store_dir", ""}}, Redirect: "npm_config_store_dir=%s"},
	{Name: "yarn-berry", Tools: "Yarn 2+ global cache", Default: ".yarn/berry/cache",
		Env: []EnvPath{{"YARN_GLOBAL_FOLDER", "cache"}}, Redirect: "YARN_GLOBAL_FOLDER=%s"},
	{Name: "cargo-registry", Tools: "Cargo registry", Default: ".cargo/registry", Env: []EnvPath{{"CARGO_HOME", "registry"}}},
	{Name: "cargo-git", Tools: "Cargo git checkouts", Default: ".cargo/git", Env: []EnvPath{{"CARGO_HOME", "git"}}},
	{Name: "cargo-home", Tools: "Cargo, when there is no ~/.cargo at all", Default: ".cargo",
		Env: []EnvPath{{"CARGO_HOME", ""}}, Redirect: "CARGO_HOME=%s", OnlyRedirect: true},
	{Name: "maven", Tools: "Maven local repository", Default: ".m2/repository",
		Redirect: "MAVEN_OPTS+=-Dmaven.repo.local=%s"},
	{Name: "gradle-caches", Tools: "Gradle caches", Default: ".gradle/caches", Env: []EnvPath{{"GRADLE_USER_HOME", "caches"}}},
	{Name: "gradle-dists", Tools: "Gradle wrapper distributions", Default: ".gradle/wrapper/dists",
		Env: []EnvPath{{"GRADLE_USER_HOME", "wrapper/dists"}}},
}

// Placement is where one entry's cache is, for one run.
type Placement struct {
	Entry
	// Path is the host directory (absolute, clean); it may not exist.
	Path string
}

// Locate resolves the table against the command's environment (get) and
// home. An entry whose directory cannot be named (no home, a relative
// variable, GOCACHE=off) is left out.
func Locate(get func(string) string, home string) []Placement {
	var out []Placement
	for _, e := range Table {
		if p := e.locate(get, home); p != "" {
			out = append(out, Placement{Entry: e, Path: p})
		}
	}
	return out
}

func (e Entry) locate(get func(string) string, home string) string {
	for _, v := range e.Env {
		val := get(v.Name)
		if v.Name == "GOPATH" {
			val, _, _ = strings.Cut(val, ":")
		}
		if val == "" {
			continue
		}
		if !path.IsAbs(val) {
			return "" // the tool would resolve it against its own cwd: not ours to guess
		}
		return path.Join(val, v.Suffix)
	}
	if e.Default == "" || home == "" || !path.IsAbs(home) {
		return ""
	}
	return path.Join(home, e.Default)
}

// Redirection is the environment assignment that points the tool at dir,
// given the environment (get); ok is false when the entry has none.
func (e Entry) Redirection(dir string, get func(string) string) (name, value string, ok bool) {
	if e.Redirect == "" {
		return "", "", false
	}
	name, format, _ := strings.Cut(e.Redirect, "=")
	value = strings.ReplaceAll(format, "%s", dir)
	if n, appendTo := strings.CutSuffix(name, "+"); appendTo {
		name = n
		if current := get(name); current != "" {
			value = current + " " + value
		}
	}
	return name, value, true
}

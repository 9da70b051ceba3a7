package sandbox

import "slices"

// Paths that let a command plant something the user's own tools run later.
// When they exist they are mounted read-only. When they are missing, the
// run may not keep them: they are checked once the process tree is dead,
// and whatever the run created there is moved aside (quarantined) and
// reported (quarantine_linux.go, tree_linux.go).
//
// A name is protected at the workspace root only when nothing reads it
// below the root, and at every depth when its consumer finds it wherever
// the user happens to work (direnv on cd, an editor opened on a
// subdirectory, an agent started there, git discovering a nested
// repository). Build files that the user runs on purpose (Makefile,
// package.json scripts) are not protected: see docs/security-model.md.
var (
	// Read by a login or interactive shell from the home directory only;
	// protected at the root for a workspace that is used as one.
	protectedFiles = []string{".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zprofile", ".zshenv",
		// Below: every depth (anyDepthNames).
		".envrc", ".mcp.json", ".npmrc", ".yarnrc.yml", ".pre-commit-config.yaml",
		"lefthook.yml", ".lefthook.yml", "lefthook-local.yml"}
	protectedDirs = []string{".vscode", ".idea", ".claude", ".forgebox", ".devcontainer", ".cursor", ".gemini",
		".codex", ".husky", ".cargo"}
	// protectedGit are what Git executes or follows from the workspace's
	// own Git directory (gitDirFiles, protected there and in nested ones).
	protectedGit = func() []string {
		var out []string
		for _, f := range gitDirFiles {
			out = append(out, ".git/"+f.Name)
		}
		return out
	}()
)

// anyDepthNames are the protected names whose consumer reads them in any
// directory, each for a reason (docs/security-model.md):
//   - .envrc: direnv loads it on cd into that directory.
//   - .mcp.json, .claude/, .gemini/, .codex/, .cursor/: an agent started in
//     a subdirectory reads its project configuration there (MCP servers it
//     starts, hooks it runs).
//   - .vscode/, .idea/, .devcontainer/: an editor opened on a subdirectory
//     runs its tasks, run configurations and initializeCommand (the last
//     on the host).
//   - .npmrc (script-shell, node-options), .yarnrc.yml (yarnPath),
//     .cargo/ (build.rustc-wrapper, target runners): the package manager
//     reads the nearest one above the directory it runs in, and runs what
//     it names on an ordinary install or build.
//   - .pre-commit-config.yaml, lefthook*.yml, .husky/: the hook runner the
//     user installed runs what they declare on the next commit.
//   - .forgebox/: forgebox's own workspace configuration.
var anyDepthNames = []string{".envrc", ".mcp.json", ".npmrc", ".yarnrc.yml", ".pre-commit-config.yaml",
	"lefthook.yml", ".lefthook.yml", "lefthook-local.yml",
	".vscode", ".idea", ".claude", ".forgebox", ".devcontainer", ".cursor", ".gemini", ".codex", ".husky", ".cargo"}

// gitInner are the entries of a Git directory that make Git run a program
// or read another directory: protected in every repository, at any depth.
var gitInner = func() []string {
	var out []string
	for _, f := range gitDirFiles {
		out = append(out, f.Name)
	}
	return append(out, gitModules, gitWorktrees)
}()

// ProtectedNames are the workspace-relative paths (slash-separated) the
// sandbox keeps read-only in the workspace root, existing or not.
func ProtectedNames() []string {
	out := append(append([]string{}, protectedFiles...), protectedDirs...)
	return append(out, protectedGit...)
}

// Protected reports whether rel, a path below a writable root given as its
// components, is or lies inside a path the sandbox protects, and which.
// It is the one definition every surface applies: the post-run check of
// the sandbox and the MCP file tools, which act outside it. A ".git" entry
// itself is protected at every depth: making, replacing or moving one is
// making or redirecting a repository.
func Protected(rel []string) (string, bool) {
	for i, c := range rel {
		switch {
		case c == ".git" && i == len(rel)-1:
			return joinRel(rel[:i+1]), true
		case c == ".git" && slices.Contains(gitInner, rel[i+1]):
			return joinRel(rel[:i+2]), true
		case slices.Contains(anyDepthNames, c):
			return joinRel(rel[:i+1]), true
		case i == 0 && (slices.Contains(protectedFiles, c) || slices.Contains(protectedDirs, c)):
			return c, true
		}
	}
	return "", false
}

// protectedEntry reports whether an entry called name, in a directory
// depth levels below a writable root, is itself protected (not only
// something inside it).
func protectedEntry(name string, depth int) bool {
	return name == ".git" || slices.Contains(anyDepthNames, name) ||
		depth == 0 && (slices.Contains(protectedFiles, name) || slices.Contains(protectedDirs, name))
}

func joinRel(comps []string) string {
	out := ""
	for i, c := range comps {
		if i > 0 {
			out += "/"
		}
		out += c
	}
	return out
}

package sandbox

// Paths that let a command plant something the user's own tools run later.
// When they exist they are mounted read-only. When they are missing at the
// workspace root, the run may not keep them: they are checked once the
// process tree is dead, and whatever the run created there is moved aside
// (quarantined) and reported (quarantine_linux.go).
var (
	protectedFiles = []string{".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zprofile", ".zshenv", ".envrc", ".mcp.json"}
	protectedDirs  = []string{".vscode", ".idea", ".claude", ".forgebox", ".devcontainer", ".cursor", ".gemini"}
	// protectedGit are what Git executes or follows from the workspace's
	// own Git directory (gitDir protects them there and in nested ones).
	protectedGit = []string{".git/hooks", ".git/config", ".git/config.worktree", ".git/commondir"}
)

// ProtectedNames are the workspace-relative paths (slash-separated) the
// sandbox keeps read-only in the workspace root, existing or not: file
// tools that act outside the sandbox must keep them read-only too.
func ProtectedNames() []string {
	out := append(append([]string{}, protectedFiles...), protectedDirs...)
	return append(out, protectedGit...)
}

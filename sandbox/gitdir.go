package sandbox

import (
	"os"
	"path/filepath"
)

// What Git executes or follows from a Git directory, the one rule every
// OS protects (protect_linux.go mounts it read-only, protect_windows.go
// denies it to the run's SID, sbpl.go writes it into the profile).
var (
	// gitDirFiles are protected in every Git directory: a .git, a bare
	// repository, a submodule's (the workspace repository's config is a
	// private copy on Linux instead: gitconfig_copy_linux.go). Hooks run
	// programs; config names more
	// (core.fsmonitor, filters, core.hooksPath); commondir points Git at
	// another directory's config. Hold: missing, the name is held so that
	// nothing appears there during the run (a placeholder on Linux,
	// watched on Windows; a path rule on macOS holds every name anyway).
	gitDirFiles = []gitDirFile{
		{Name: "hooks", Dir: true, Hold: true},
		{Name: "config"},
		{Name: "config.worktree"},
		{Name: "commondir", Hold: true},
	}
	// gitWorktreeFiles are protected in each worktrees/<name>/ of a Git
	// directory: they decide which repository, and config, a linked
	// worktree uses.
	gitWorktreeFiles = []string{"commondir", "gitdir", "config.worktree"}
)

// Where a Git directory keeps its linked worktrees' and its submodules'
// Git directories; how deep submodules' are followed.
const (
	gitWorktrees   = "worktrees"
	gitModules     = "modules"
	gitModulesDeep = 3
)

// gitDirFile is an entry of gitDirFiles.
type gitDirFile struct {
	Name      string
	Dir, Hold bool
}

// gitProtected is a path to protect in or from a Git directory.
type gitProtected struct {
	Path string
	// File is the gitDirFiles entry Path is, in the Git directory itself;
	// nil for a linked worktree's file or the core.hooksPath directory.
	File *gitDirFile
	// HooksPath: the core.hooksPath directory, wherever it is (the caller
	// protects it when it lies in a writable root).
	HooksPath bool
}

// walkGitDir calls fn for the Git directory dir (level 0) and the
// submodules' Git directories below it (modules/*, gitModulesDeep levels
// down, symlinks not followed), with the paths each needs protected,
// existing or not. worktree is dir's worktree, against which a relative
// core.hooksPath is resolved ("" for a bare or submodule Git directory).
// It reads the file system and never writes.
func walkGitDir(dir, worktree string, fn func(dir string, level int, paths []gitProtected) error) error {
	return walkGitDirAt(dir, worktree, 0, fn)
}

func walkGitDirAt(dir, worktree string, level int, fn func(string, int, []gitProtected) error) error {
	var paths []gitProtected
	for i := range gitDirFiles {
		paths = append(paths, gitProtected{Path: filepath.Join(dir, gitDirFiles[i].Name), File: &gitDirFiles[i]})
	}
	if hp := gitHooksPath(filepath.Join(dir, "config"), worktree); hp != "" {
		paths = append(paths, gitProtected{Path: hp, HooksPath: true})
	}
	for _, name := range subdirs(filepath.Join(dir, gitWorktrees)) {
		for _, f := range gitWorktreeFiles {
			paths = append(paths, gitProtected{Path: filepath.Join(dir, gitWorktrees, name, f)})
		}
	}
	if err := fn(dir, level, paths); err != nil {
		return err
	}
	if level >= gitModulesDeep {
		return nil
	}
	for _, name := range subdirs(filepath.Join(dir, gitModules)) {
		if err := walkGitDirAt(filepath.Join(dir, gitModules, name), "", level+1, fn); err != nil {
			return err
		}
	}
	return nil
}

// subdirs lists the directories in dir, symlinks left out.
func subdirs(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// gitDirNames are the names gitDirFiles and gitWorktreeFiles protect, once
// each, in order.
func gitDirNames() []gitDirFile {
	out := append([]gitDirFile{}, gitDirFiles...)
	for _, n := range gitWorktreeFiles {
		seen := false
		for _, f := range out {
			seen = seen || f.Name == n
		}
		if !seen {
			out = append(out, gitDirFile{Name: n})
		}
	}
	return out
}

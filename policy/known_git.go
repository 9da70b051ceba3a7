package policy

import (
	"strings"
)

// gitAlias is an alias defined with git -c alias.NAME=VALUE.
type gitAlias struct {
	name  string
	value string
	arg   Arg
}

// judgeGit looks through git's global options (-C, -c, --git-dir, ...)
// to the subcommand, then judges that. What git loses for good (uncommitted
// work, untracked files, stashes, the remote's history) is dangerous; what
// the reflog can undo is a safe write.
func judgeGit(j *judge, c *Command) {
	args := c.Rest()
	var aliases []gitAlias
	elsewhere := ""
	i := 0
	for i < len(args) && args[i].Static && strings.HasPrefix(args[i].Value, "-") {
		v := args[i].Value
		i++
		name, val, glued := strings.Cut(v, "=")
		switch name {
		case "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix", "--list-cmds", "--attr-source":
		case "--exec-path":
			if glued {
				j.add(Caution, 5, "git --exec-path=%s changes where git finds its programs", val)
			}
			continue
		default:
			continue // --no-pager, -P, --bare, --literal-pathspecs, ...
		}
		arg := Arg{Value: val, Static: true, IfEmpty: val}
		if !glued {
			if i >= len(args) {
				break
			}
			arg = args[i]
			i++
		}
		if !arg.Static {
			j.add(Caution, 5, "git %s is given a value computed at run time (%s)", name, arg.Value)
		}
		switch name {
		case "-C", "--git-dir", "--work-tree":
			if p := j.place(arg); p != PlaceWorkspace && p != PlaceWorkspaceRoot && p != PlaceGitDir && p != PlaceTemp && p != PlaceTempRoot {
				elsewhere = arg.Value
			}
			if name == "-C" {
				// git -C DIR works in DIR: the paths after it are read there.
				j.ctx = j.ctx.chdirTo(arg)
			}
		case "-c":
			key, value, _ := strings.Cut(arg.Value, "=")
			if strings.HasPrefix(strings.ToLower(key), "alias.") {
				aliases = append(aliases, gitAlias{name: key[len("alias."):], value: value, arg: arg})
				continue
			}
			j.gitConfig(key, value, arg.Static, "git -c")
		case "--config-env":
			if key, _, _ := strings.Cut(arg.Value, "="); gitCommandKey(key, "!") {
				j.add(Caution, 5, "git --config-env sets %s, a command git runs, from the environment", key)
			}
		}
	}
	if i >= len(args) {
		j.add(ReadOnly, 0, "git without a command prints its usage")
		return
	}
	sub, rest := args[i], args[i+1:]
	if !sub.Static {
		j.add(Caution, 5, "git runs a subcommand computed at run time (%s)", sub.Value)
		return
	}
	for _, al := range aliases {
		if al.name != sub.Value {
			if strings.HasPrefix(al.value, "!") {
				j.add(Caution, 5, "git -c alias.%s defines a shell command", al.name)
				j.shell(al.value[1:], al.arg.Static, "git alias "+al.name)
			}
			continue
		}
		if code, ok := strings.CutPrefix(al.value, "!"); ok {
			j.add(Caution, 5, "git -c alias.%s runs a shell command", al.name)
			if len(rest) > 0 {
				code += " " + quoteArgv((&Command{Args: rest}).Argv())
			}
			j.shell(code, al.arg.Static && allStatic(rest), "git alias "+al.name)
			return
		}
		j.add(ReadOnly, 0, "git runs the alias %s", al.name)
		expanded := append(staticArgs(append([]string{"git"}, strings.Fields(al.value)...)...), rest...)
		j.argv(expanded, "git alias "+al.name)
		return
	}
	start := len(j.findings)
	gitCommand(j, sub.Value, rest)
	if elsewhere != "" {
		// Undo keeps the workspace, not the repository elsewhere.
		for k := range j.findings[start:] {
			j.findings[start+k].Undoable = false
		}
		for _, f := range j.findings[start:] {
			if f.Category != ReadOnly && f.Category != Interactive && f.Risk > 0 {
				j.add(Caution, 4, "git works on a repository outside the workspace (%s)", elsewhere)
				break
			}
		}
	}
}

// gitCommandKey reports whether a configuration key names a command git
// runs (or, for hooksPath and include, a place it takes code from).
func gitCommandKey(key, value string) bool {
	k := strings.ToLower(key)
	switch k {
	case "core.sshcommand", "core.pager", "core.editor", "core.fsmonitor", "core.askpass", "core.gitproxy", "core.hookspath",
		"sequence.editor", "diff.external", "gpg.program", "credential.helper", "web.browser", "uploadpack.packobjectshook",
		"include.path", "core.alternaterefscommand", "sendemail.sendmailcmd", "merge.tool", "diff.tool":
		return true
	}
	first, _, _ := strings.Cut(k, ".")
	last := k[strings.LastIndexByte(k, '.')+1:]
	switch first {
	case "alias":
		return strings.HasPrefix(value, "!")
	case "pager":
		return value != "" && value != "true" && value != "false"
	case "includeif":
		return true
	case "protocol":
		return last == "allow" && strings.EqualFold(value, "always")
	}
	switch last {
	case "clean", "smudge", "process", "textconv", "command", "driver", "program", "helper", "receivepack", "uploadpack", "cmd", "proxycommand":
		return first != "core" && first != "user"
	}
	return false
}

// gitConfig judges a configuration value set for one command (git -c,
// git clone -c): one that names a command runs that command.
func (j *judge) gitConfig(key, value string, static bool, how string) {
	if !gitCommandKey(key, value) {
		return
	}
	k := strings.ToLower(key)
	switch {
	case k == "core.hookspath":
		j.add(Caution, 5, "%s core.hooksPath makes git run hooks from %s", how, value)
	case k == "include.path" || strings.HasPrefix(k, "includeif."):
		j.add(Caution, 5, "%s %s loads git configuration from %s", how, key, value)
	case strings.HasPrefix(k, "protocol."):
		j.add(Caution, 5, "%s %s allows transports that run commands (ext::)", how, key)
	default:
		j.add(Caution, 5, "%s %s sets a command git runs", how, key)
		if value = strings.TrimPrefix(value, "!"); value != "" && k != "merge.tool" && k != "diff.tool" {
			j.shell(value, static, how+" "+key)
		}
	}
}

// gitCommand judges one git subcommand and its arguments.
func gitCommand(j *judge, sub string, args []Arg) {
	switch sub {
	case "status", "log", "diff", "show", "rev-parse", "ls-files", "ls-tree", "blame", "annotate", "describe", "shortlog",
		"cat-file", "rev-list", "name-rev", "merge-base", "show-ref", "show-branch", "for-each-ref", "count-objects", "fsck",
		"whatchanged", "cherry", "range-diff", "diff-tree", "diff-files", "diff-index", "check-ignore", "check-attr",
		"check-mailmap", "check-ref-format", "var", "help", "version", "verify-commit", "verify-tag", "verify-pack",
		"request-pull", "get-tar-commit-id", "column", "fmt-merge-msg", "interpret-trailers", "patch-id", "stripspace",
		"ls-remote", "grep", "show-index", "merge-tree", "diff-pairs", "last-modified":
		gitRead(j, sub, args)
	case "push":
		gitPush(j, args)
	case "reset":
		gitReset(j, args)
	case "clean":
		gitClean(j, args)
	case "checkout":
		gitCheckout(j, args)
	case "switch":
		s := scan(args, flags{short: "cC", long: " create force-create orphan conflict "})
		if s.has("-f", "--discard-changes") || s.abbrev("force", 5) {
			j.add(Dangerous, 6, "git switch --discard-changes throws away uncommitted changes, which git cannot restore")
			j.undoable()
			return
		}
		j.add(SafeWrite, 2, "git switch changes branches; git refuses when uncommitted work would be lost")
	case "restore":
		gitRestore(j, args)
	case "stash":
		gitStash(j, args)
	case "branch":
		gitBranch(j, args)
	case "tag":
		gitTag(j, args)
	case "remote":
		s := scan(args, flags{short: "tm", long: " track master mirror "})
		if len(s.ops) == 0 || s.ops[0].Value == "show" || s.ops[0].Value == "get-url" {
			j.add(ReadOnly, 0, "git remote lists the remotes")
			return
		}
		if s.ops[0].Value == "update" {
			j.add(SafeWrite, 2, "git remote update fetches from the remotes")
			return
		}
		j.add(Caution, 3, "git remote %s changes where the repository fetches and pushes", s.ops[0].Value)
	case "config":
		gitConfigCommand(j, args)
	case "commit":
		gitCommit(j, args)
	case "add", "stage":
		s := scan(args, flags{long: " chmod pathspec-from-file "})
		if s.has("-p", "--patch", "-i", "--interactive", "-e", "--edit") {
			j.add(Interactive, 1, "interactive: git add %s asks about each change", "-p")
			return
		}
		j.add(SafeWrite, 2, "git add stages changes")
	case "fetch":
		gitRemoteCommand(j, sub, args)
		j.add(SafeWrite, 2, "git fetch downloads from the remote")
	case "pull":
		gitRemoteCommand(j, sub, args)
		j.reach(Caution, 3, "git pull merges the remote's changes into the working tree")
	case "clone":
		gitClone(j, args)
	case "merge":
		j.add(SafeWrite, 2, "git merge joins another branch's history")
	case "cherry-pick":
		s := scan(args, flags{short: "mX", long: " mainline strategy strategy-option "})
		if s.has("-e", "--edit") {
			j.add(Interactive, 1, "interactive: git cherry-pick -e opens an editor")
		}
		j.add(SafeWrite, 2, "git cherry-pick applies commits")
	case "revert":
		s := scan(args, flags{short: "mX", long: " mainline strategy strategy-option "})
		if !s.has("--no-edit", "-n", "--no-commit", "--abort", "--quit", "--skip") {
			j.add(Interactive, 1, "interactive: git revert opens an editor for the message (use --no-edit)")
		}
		j.add(SafeWrite, 2, "git revert records a commit that undoes another")
	case "rebase":
		gitRebase(j, args)
	case "init":
		s := scan(args, flags{short: "b", long: " template separate-git-dir object-format ref-format initial-branch shared "})
		if t, ok := s.val("--template"); ok {
			j.add(Caution, 5, "git init --template copies hooks from %s", t)
		}
		j.add(SafeWrite, 2, "git init creates a repository")
		for _, a := range s.ops {
			j.write(a, "git init")
		}
	case "filter-branch", "filter-repo":
		j.add(Dangerous, 7, "git %s rewrites the repository's whole history", sub)
		j.undoable()
	case "update-ref":
		s := scan(args, flags{short: "m"})
		switch {
		case s.has("-d"):
			j.add(Dangerous, 6, "git update-ref -d deletes a ref: the commits only it reached may be lost")
			j.undoable()
		case s.has("--stdin"):
			j.add(Caution, 5, "git update-ref --stdin changes refs read from its input")
		default:
			j.add(Caution, 4, "git update-ref moves a ref directly; the commits it pointed to may be lost")
			j.undoable()
		}
	case "reflog":
		if len(args) > 0 && (args[0].Value == "expire" || args[0].Value == "delete" || args[0].Value == "drop") {
			j.add(Dangerous, 6, "git reflog %s deletes the record that lets lost commits be recovered", args[0].Value)
			j.undoable()
			return
		}
		j.add(ReadOnly, 0, "git reflog shows where refs have been")
	case "gc":
		s := scan(args, flags{})
		if p, ok := s.val("--prune"); ok && (p == "now" || p == "all") {
			j.add(Caution, 5, "git gc --prune=%s deletes unreachable objects: the last copy of lost commits", p)
			j.undoable()
			return
		}
		j.add(SafeWrite, 2, "git gc packs the repository")
	case "prune":
		j.add(Caution, 5, "git prune deletes unreachable objects: the last copy of lost commits")
		j.undoable()
	case "rm":
		s := scan(args, flags{long: " pathspec-from-file "})
		if s.has("-f", "--force") {
			j.add(Caution, 4, "git rm -f removes files even with uncommitted changes")
			j.undoable()
			return
		}
		j.add(SafeWrite, 2, "git rm removes tracked files (their last commit keeps them)")
	case "worktree":
		gitWorktree(j, args)
	case "submodule":
		gitSubmodule(j, args)
	case "bisect":
		if len(args) > 1 && args[0].Value == "run" {
			j.argv(args[1:], "git bisect run")
		}
		j.add(SafeWrite, 2, "git bisect checks out commits to search")
	case "apply":
		s := scan(args, flags{short: "pC", long: " exclude include directory whitespace build-fake-ancestor "})
		if s.has("--check", "--stat", "--numstat", "--summary") && !s.has("--apply") {
			j.add(ReadOnly, 0, "git apply --check only tests the patch")
			return
		}
		if s.has("--unsafe-paths") {
			j.add(Caution, 4, "git apply --unsafe-paths may write outside the repository")
		}
		j.add(SafeWrite, 2, "git apply patches files")
	case "archive", "format-patch", "bundle", "notes", "mv", "am", "sparse-checkout", "maintenance", "repack", "rerere",
		"lfs", "hash-object", "pack-refs", "commit-graph", "multi-pack-index", "read-tree", "write-tree", "commit-tree",
		"update-index", "mktag", "mktree", "symbolic-ref", "fast-import", "fast-export", "replay", "backfill":
		s := scan(args, flags{short: "o", long: " output output-directory "})
		if out, ok := s.val("-o", "--output", "--output-directory"); ok {
			j.write(staticArg(out), "git "+sub)
		}
		if sub == "lfs" && len(s.ops) > 0 && s.ops[0].Value == "prune" {
			j.add(Caution, 3, "git lfs prune deletes local LFS objects")
			return
		}
		j.add(SafeWrite, 2, "git %s writes to the repository", sub)
	case "replace":
		j.add(Caution, 4, "git replace makes git show other objects in place of some")
	case "mergetool":
		j.add(Interactive, 2, "interactive: git mergetool opens a merge tool for each conflict")
	case "difftool":
		j.add(Interactive, 1, "interactive: git difftool opens a diff tool")
	case "gui", "citool", "gitk":
		j.add(Interactive, 1, "interactive: git %s opens a window", sub)
	case "instaweb", "daemon":
		j.add(Caution, 4, "git %s serves the repository over the network", sub)
	case "send-email", "imap-send":
		j.add(Caution, 5, "git %s sends mail", sub)
	case "credential", "credential-store", "credential-cache":
		j.add(Caution, 5, "git %s reads or changes stored credentials", sub)
	case "hook":
		j.add(Caution, 3, "git hook runs a repository hook")
	default:
		j.add(Caution, 3, "git %s is an extension or an alias forgebox does not know", sub)
	}
}

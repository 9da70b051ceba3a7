package policy

import (
	"strings"

	"github.com/forgebox/forgebox/gitkeys"
)

// gitRead judges the reading subcommands, minding the few options that
// write a file or run a pager command.
func gitRead(j *judge, sub string, args []Arg) {
	s := scan(args, flags{short: "O", long: " output "})
	if out, ok := s.val("--output"); ok {
		j.write(staticArg(out), "git "+sub+" --output")
	}
	if sub == "grep" {
		if _, ok := s.val("-O", "--open-files-in-pager"); ok {
			j.add(Interactive, 1, "interactive: git grep -O opens the files in a pager")
		}
	}
	if sub == "ls-remote" {
		j.add(ReadOnly, 1, "git ls-remote lists the remote's refs")
		return
	}
	j.add(ReadOnly, 0, "git %s only reads the repository", sub)
}

// gitPush: a push that can delete or rewrite the remote's branches is
// dangerous; --force-with-lease and --force-if-includes refuse to
// overwrite work they have not seen, so they are ordinary pushes.
func gitPush(j *judge, args []Arg) {
	s := scan(args, flags{short: "o", long: " repo receive-pack exec push-option "})
	forced, deletes, mirror, prune, dry, lease := false, false, false, false, false, false
	for _, o := range s.opts {
		switch {
		case o.short == 'f':
			forced = true
		case o.short == 'd':
			deletes = true
		case o.short == 'n':
			dry = true
		case o.short != 0:
		case strings.HasPrefix("force-with-lease", o.long) && len(o.long) > len("force") ||
			strings.HasPrefix("force-if-includes", o.long) && len(o.long) > len("force"):
			lease = true
		case strings.HasPrefix(o.long, "force") || strings.HasPrefix("force", o.long) && len(o.long) >= 2:
			forced = true
		case strings.HasPrefix("delete", o.long) && len(o.long) >= 3:
			deletes = true
		case strings.HasPrefix("mirror", o.long) && len(o.long) >= 2:
			mirror = true
		case strings.HasPrefix("prune", o.long) && len(o.long) >= 3:
			prune = true
		case strings.HasPrefix("dry-run", o.long) && len(o.long) >= 2:
			dry = true
		case o.long == "receive-pack" || o.long == "exec":
			j.add(Caution, 5, "git push --%s runs %s on the remote", o.long, o.val)
		}
	}
	if len(s.ops) > 1 {
		for _, r := range s.ops[1:] {
			switch v := r.Value; {
			case strings.HasPrefix(v, "+"):
				forced = true
			case len(v) > 1 && v[0] == ':':
				deletes = true
			case !r.Static:
				j.add(Caution, 5, "git push pushes a refspec computed at run time (%s)", v)
			}
		}
	}
	switch {
	case dry:
		j.add(ReadOnly, 1, "git push --dry-run only shows what it would push")
	case forced:
		j.reach(Dangerous, 7, "git push --force rewrites the remote branch's history")
	case deletes:
		j.reach(Dangerous, 7, "git push --delete deletes branches on the remote")
	case mirror:
		j.reach(Dangerous, 7, "git push --mirror makes the remote a copy of this repository, deleting what it lacks")
	case prune:
		j.reach(Dangerous, 7, "git push --prune deletes remote branches that have no local counterpart")
	case lease:
		j.reach(Caution, 4, "git push --force-with-lease overwrites the remote branch only if it has not moved since the last fetch")
	default:
		j.reach(Caution, 4, "git push publishes commits to the remote")
	}
}

func gitReset(j *judge, args []Arg) {
	s := scan(args, flags{long: " pathspec-from-file "})
	switch {
	case s.has("--hard"):
		j.add(Dangerous, 6, "git reset --hard discards uncommitted changes, which git cannot restore")
		j.undoable()
	case s.has("--keep", "--merge"):
		j.add(Caution, 3, "git reset %s moves HEAD and updates the working tree", "--keep")
	case s.has("-p", "--patch"):
		j.add(Interactive, 1, "interactive: git reset -p asks about each hunk")
	default:
		j.add(SafeWrite, 2, "git reset moves HEAD or unstages; the working tree is kept")
	}
}

func gitClean(j *judge, args []Arg) {
	s := scan(args, flags{short: "e", long: " exclude "})
	ignored := s.has("-x", "-X")
	switch {
	case s.has("-n") || s.abbrev("dry-run", 1):
		j.add(ReadOnly, 0, "git clean -n only lists what it would delete")
	case s.has("-i") || s.abbrev("interactive", 1):
		j.add(Interactive, 2, "interactive: git clean -i asks what to delete")
	case s.has("-f") || s.abbrev("force", 1):
		if ignored {
			j.add(Dangerous, 6, "git clean -fx deletes untracked and ignored files, which git cannot restore")
			j.undoable()
			return
		}
		j.add(Dangerous, 6, "git clean -f deletes untracked files, which git cannot restore")
		j.undoable()
	default:
		j.add(Caution, 3, "git clean deletes untracked files where clean.requireForce is off")
	}
}

// gitCheckout: switching branches is safe (git refuses to lose work);
// checking out paths overwrites their uncommitted changes without asking.
func gitCheckout(j *judge, args []Arg) {
	s := scan(args, flags{short: "bBU", long: " orphan conflict pathspec-from-file "})
	switch {
	case s.has("-p", "--patch"):
		j.add(Interactive, 1, "interactive: git checkout -p asks about each hunk")
		return
	case s.has("-f") || s.abbrev("force", 2):
		j.add(Dangerous, 6, "git checkout -f throws away uncommitted changes, which git cannot restore")
		j.undoable()
		return
	case s.has("--pathspec-from-file"):
		j.add(Dangerous, 6, "git checkout overwrites uncommitted changes to the listed paths")
		j.undoable()
		return
	case s.has("-b", "-B", "--orphan"):
		j.add(SafeWrite, 2, "git checkout -b creates and switches to a branch")
		return
	}
	paths := s.ops
	switch {
	case s.dd >= 0:
		paths = s.ops[s.dd:]
	case len(s.ops) == 1 && !pathLike(s.ops[0]):
		paths = nil
	case len(s.ops) > 1:
		paths = s.ops[1:]
	}
	if len(paths) == 0 {
		j.add(SafeWrite, 2, "git checkout switches branches; git refuses when uncommitted work would be lost")
		return
	}
	j.add(Dangerous, 6, "git checkout %s overwrites uncommitted changes to it, which git cannot restore", quote(paths[0]))
	j.undoable()
}

// pathLike guesses whether a lone checkout operand is a path rather than
// a branch: ".", a relative or absolute path, a glob, or a file name with
// an extension (release-1.0 and feature/x stay branches).
func pathLike(a Arg) bool {
	v := a.Value
	if !a.Static || a.Glob || v == "." || v == ".." || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") || strings.HasPrefix(v, "/") || strings.HasPrefix(v, ":") {
		return true
	}
	base := v[strings.LastIndexByte(v, '/')+1:]
	dot := strings.LastIndexByte(base, '.')
	if dot <= 0 || dot == len(base)-1 {
		return false
	}
	ext := base[dot+1:]
	if len(ext) > 5 {
		return false
	}
	for _, r := range ext {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

func gitRestore(j *judge, args []Arg) {
	s := scan(args, flags{short: "s", long: " source conflict pathspec-from-file "})
	staged := s.has("-S", "--staged")
	worktree := s.has("-W", "--worktree")
	switch {
	case s.has("-p", "--patch"):
		j.add(Interactive, 2, "interactive: git restore -p asks about each hunk")
	case staged && !worktree:
		j.add(SafeWrite, 2, "git restore --staged unstages changes; the working tree is kept")
	default:
		j.add(Dangerous, 6, "git restore discards uncommitted changes in the working tree, which git cannot restore")
		j.undoable()
	}
}

func gitStash(j *judge, args []Arg) {
	s := scan(args, flags{short: "m", long: " message pathspec-from-file "})
	verb := "push"
	if len(s.ops) > 0 {
		verb = s.ops[0].Value
	}
	switch verb {
	case "list", "show":
		j.add(ReadOnly, 0, "git stash %s only reads", verb)
	case "drop", "clear":
		j.add(Dangerous, 6, "git stash %s deletes stashed changes, which git cannot restore", verb)
		j.undoable()
	case "push", "save", "apply", "pop", "branch", "create", "store":
		if s.has("-p", "--patch") {
			j.add(Interactive, 1, "interactive: git stash -p asks about each hunk")
			return
		}
		j.add(SafeWrite, 2, "git stash %s saves or reapplies changes", verb)
	default:
		j.add(SafeWrite, 2, "git stash saves changes")
	}
}

func gitBranch(j *judge, args []Arg) {
	s := scan(args, flags{short: "ut", long: " set-upstream-to contains no-contains merged no-merged points-at sort format column color abbrev "})
	force := s.has("-f") || s.abbrev("force", 3)
	switch {
	case s.has("-D") || force && (s.has("-d") || s.abbrev("delete", 3)):
		j.add(Dangerous, 6, "git branch -D deletes a branch even if it is not merged: its commits may be lost")
		j.undoable()
	case s.has("-d") || s.abbrev("delete", 3):
		j.add(Caution, 3, "git branch -d deletes a merged branch")
	case s.has("-M", "-C") || force && len(s.ops) > 0:
		j.add(Caution, 3, "git branch %s overwrites an existing branch", "-f")
	case s.has("--edit-description"):
		j.add(Interactive, 1, "interactive: git branch --edit-description opens an editor")
	case s.has("-m", "-c", "--move", "--copy", "-u", "--set-upstream-to", "--unset-upstream", "--track", "-t"):
		j.add(SafeWrite, 2, "git branch renames, copies or sets the upstream of a branch")
	case len(s.ops) == 0 || s.has("-l", "--list", "-a", "-r", "--all", "--remotes", "--show-current", "--contains", "--merged", "--no-merged", "--points-at"):
		j.add(ReadOnly, 0, "git branch lists branches")
	default:
		j.add(SafeWrite, 2, "git branch creates a branch")
	}
}

func gitTag(j *judge, args []Arg) {
	s := scan(args, flags{short: "mFu", long: " message file contains no-contains merged no-merged points-at sort format color cleanup local-user "})
	switch {
	case s.has("-d", "--delete"):
		j.add(Caution, 3, "git tag -d deletes a tag")
	case s.has("-v", "--verify", "-l", "--list") || len(s.ops) == 0:
		j.add(ReadOnly, 0, "git tag lists or verifies tags")
	case s.has("-f", "--force"):
		j.add(Caution, 3, "git tag -f moves an existing tag")
	default:
		if s.has("-a", "-s", "-u", "--annotate", "--sign", "--local-user") && !s.has("-m", "-F", "--message", "--file") {
			j.add(Interactive, 1, "interactive: git tag -a without -m opens an editor")
		}
		j.add(SafeWrite, 2, "git tag creates a tag")
	}
}

// gitConfigCommand: reading the configuration is harmless; setting a key
// that names a command plants code git runs later.
func gitConfigCommand(j *judge, args []Arg) {
	s := scan(args, flags{short: "f", long: " file blob type default comment value "})
	ops := s.ops
	verb := ""
	if len(ops) > 0 {
		switch ops[0].Value {
		case "get", "set", "unset", "list", "edit", "rename-section", "remove-section":
			verb, ops = ops[0].Value, ops[1:]
		}
	}
	switch {
	case s.has("-e", "--edit") || verb == "edit":
		j.add(Interactive, 2, "interactive: git config --edit opens an editor")
		return
	case verb == "get" || verb == "list" || s.has("-l", "--list", "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool"):
		j.add(ReadOnly, 0, "git config reads the configuration")
		return
	case verb == "" && len(ops) < 2 && !s.has("--unset", "--unset-all", "--rename-section", "--remove-section", "--add", "--replace-all"):
		j.add(ReadOnly, 0, "git config reads the configuration")
		return
	}
	switch {
	case s.has("--system"):
		j.add(Dangerous, 7, "git config --system changes the configuration of every user")
	case s.has("--global"):
		j.add(Caution, 4, "git config --global changes the user's git configuration")
	case ordinaryGitKey(s, verb, ops):
		j.add(SafeWrite, 1, "git config sets %s, an ordinary key of the repository's configuration", ops[0].Value)
		return
	default:
		j.add(Caution, 3, "git config changes the repository's configuration")
	}
	if f, ok := s.val("-f", "--file"); ok {
		j.write(staticArg(f), "git config --file")
	}
	if len(ops) > 0 {
		value := ""
		if len(ops) > 1 {
			value = ops[1].Value
		}
		if gitCommandKey(ops[0].Value, value) || strings.HasPrefix(strings.ToLower(ops[0].Value), "alias.") && value == "" {
			j.add(Caution, 5, "git config %s makes git run a command later", ops[0].Value)
		}
	}
}

// gitCommit: the message is data, whatever it says; a commit without one
// opens an editor.
func gitCommit(j *judge, args []Arg) {
	s := scan(args, flags{short: "mFCct", long: " message file reuse-message reedit-message template author date fixup squash trailer cleanup pathspec-from-file "})
	msg := s.has("-m", "--message", "-F", "--file", "-C", "--reuse-message", "--no-edit")
	if f, ok := s.val("--fixup"); ok && !strings.HasPrefix(f, "amend:") && !strings.HasPrefix(f, "reword:") {
		msg = true
	}
	editor := s.has("-e", "--edit", "-c", "--reedit-message", "-t", "--template")
	switch {
	case s.has("-p", "--patch", "--interactive"):
		j.add(Interactive, 2, "interactive: git commit -p asks about each hunk")
	case !msg || editor:
		j.add(Interactive, 2, "interactive: git commit without -m opens an editor")
	}
	if s.has("-n", "--no-verify") {
		j.add(Caution, 3, "git commit --no-verify skips the repository's commit hooks")
	}
	if s.has("--amend") {
		j.add(SafeWrite, 2, "git commit --amend replaces the last commit")
		return
	}
	j.add(SafeWrite, 2, "git commit records a commit")
}

// gitRemoteCommand judges the options of fetch and pull that run a
// program on the other side.
func gitRemoteCommand(j *judge, sub string, args []Arg) {
	s := scan(args, flags{short: "oj", long: " upload-pack depth deepen shallow-since shallow-exclude refmap server-option jobs negotiation-tip recurse-submodules-default strategy strategy-option "})
	if p, ok := s.val("--upload-pack"); ok {
		j.add(Caution, 5, "git %s --upload-pack runs %s on the remote", sub, p)
	}
	if len(s.ops) > 0 && strings.HasPrefix(s.ops[0].Value, "ext::") {
		j.add(Caution, 5, "git %s from an ext:: remote runs a command", sub)
	}
}

func gitClone(j *judge, args []Arg) {
	s := scan(args, flags{short: "obucj", long: " origin branch upload-pack config reference reference-if-able separate-git-dir depth " +
		"shallow-since shallow-exclude jobs template filter server-option bundle-uri ref-format revision "})
	j.reach(Caution, 3, "git clone downloads a repository")
	for _, o := range s.opts {
		switch {
		case o.short == 'u' || o.long == "upload-pack":
			j.add(Caution, 5, "git clone --upload-pack runs %s on the remote", o.val)
		case o.short == 'c' || o.long == "config":
			key, value, _ := strings.Cut(o.val, "=")
			j.gitConfig(key, value, true, "git clone -c")
		case o.long == "template":
			j.add(Caution, 5, "git clone --template copies hooks from %s", o.val)
		}
	}
	if len(s.ops) > 0 && strings.HasPrefix(s.ops[0].Value, "ext::") {
		j.add(Caution, 5, "git clone from an ext:: URL runs a command")
	}
	if len(s.ops) > 1 {
		j.write(s.ops[1], "git clone")
	}
}

func gitRebase(j *judge, args []Arg) {
	s := scan(args, flags{short: "xsXC", long: " exec strategy strategy-option onto whitespace empty rebase-merges "})
	for _, o := range s.opts {
		if o.short == 'x' || o.long == "exec" {
			j.shell(o.val, true, "git rebase --exec")
		}
	}
	switch {
	case s.has("--abort", "--quit", "--skip", "--continue", "--show-current-patch"):
		j.add(SafeWrite, 2, "git rebase continues or stops a rebase in progress")
	case s.has("-i", "--interactive", "--edit-todo"):
		j.add(Interactive, 2, "interactive: git rebase -i opens an editor with the commit list")
		j.add(Caution, 3, "git rebase rewrites the branch's local history")
	default:
		j.add(Caution, 3, "git rebase rewrites the branch's local history")
	}
}

func gitWorktree(j *judge, args []Arg) {
	s := scan(args, flags{short: "bB", long: " reason orphan expire "})
	verb := ""
	if len(s.ops) > 0 {
		verb = s.ops[0].Value
	}
	switch verb {
	case "list":
		j.add(ReadOnly, 0, "git worktree list only reads")
	case "remove":
		if s.has("-f", "--force") {
			j.add(Dangerous, 6, "git worktree remove --force deletes a working tree with its uncommitted changes")
			return
		}
		j.add(Caution, 3, "git worktree remove deletes a clean working tree")
	case "add":
		j.add(SafeWrite, 2, "git worktree add checks out another working tree")
		if len(s.ops) > 1 {
			j.write(s.ops[1], "git worktree add")
		}
	default:
		j.add(SafeWrite, 2, "git worktree %s changes the working trees", verb)
	}
}

func gitSubmodule(j *judge, args []Arg) {
	s := scan(args, flags{stop: true})
	verb := "status"
	if len(s.ops) > 0 {
		verb = s.ops[0].Value
	}
	switch verb {
	case "status", "summary":
		j.add(ReadOnly, 0, "git submodule %s only reads", verb)
	case "foreach":
		j.add(Caution, 3, "git submodule foreach runs a command in each submodule")
		if rest := scan(s.ops[1:], flags{stop: true}); len(rest.ops) > 0 {
			j.shell(joinArgs(rest.ops), allStatic(rest.ops), "git submodule foreach")
		}
	default:
		j.reach(Caution, 3, "git submodule %s fetches or changes submodules", verb)
	}
}

// ordinaryGitKey reports whether git config sets or unsets one ordinary
// key (gitkeys.Ordinary: user.email, core.autocrlf, branch.*.rebase ...)
// of the repository's own configuration: a change that makes Git run
// nothing and send nothing anywhere, wherever it runs.
func ordinaryGitKey(s scanned, verb string, ops []Arg) bool {
	if s.has("--file", "-f", "--blob", "--worktree", "--add", "--replace-all", "--rename-section", "--remove-section") ||
		(verb != "" && verb != "set" && verb != "unset") || len(ops) == 0 || len(ops) > 2 {
		return false
	}
	for _, o := range ops {
		if !o.Static {
			return false
		}
	}
	key, value := ops[0].Value, ""
	if len(ops) == 2 {
		value = ops[1].Value
	}
	first, last := strings.IndexByte(key, '.'), strings.LastIndexByte(key, '.')
	if first <= 0 || last == len(key)-1 {
		return false
	}
	section, name := strings.ToLower(key[:first]), strings.ToLower(key[last+1:])
	return gitkeys.Classify(section, first != last, name, value) == gitkeys.Ordinary
}

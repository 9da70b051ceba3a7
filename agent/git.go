package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// GitInput is the git tool's arguments.
type GitInput struct {
	Subcommand    string   `json:"subcommand" jsonschema:"the git subcommand, e.g. status, diff, log, add, commit"`
	Args          []string `json:"args,omitempty" jsonschema:"its arguments, one per element (no shell quoting needed)"`
	Directory     string   `json:"directory,omitempty" jsonschema:"the repository directory inside the workspace (default: the workspace)"`
	TimeoutMS     int64    `json:"timeout_ms,omitempty" jsonschema:"kill git after this many milliseconds (default 120000; capped by the server)"`
	IdleTimeoutMS int64    `json:"idle_timeout_ms,omitempty" jsonschema:"kill git after this many milliseconds without output (default: the server's, usually 60000; at most the timeout)"`
}

// gitSubcommands are the subcommands the git tool runs. Left out: those
// that configure git itself (config, which can name programs git runs),
// open an editor or a pager by nature (commit --interactive is refused by
// the environment anyway), or manage other repositories' plumbing.
var gitSubcommands = []string{
	"add", "am", "apply", "bisect", "blame", "branch", "checkout", "cherry-pick", "clean", "clone", "commit",
	"describe", "diff", "fetch", "format-patch", "grep", "init", "log", "ls-files", "ls-tree", "merge",
	"merge-base", "mv", "notes", "pull", "push", "range-diff", "rebase", "reflog", "remote", "reset", "restore",
	"rev-list", "rev-parse", "revert", "rm", "shortlog", "show", "show-ref", "stash", "status", "switch", "tag",
	"worktree",
}

// gitCodeOptions name programs for git to run: refused, whatever the
// subcommand, since a model could smuggle a command past the judge in one.
var gitCodeOptions = []string{"--upload-pack", "--receive-pack", "--exec", "--config", "--template", "--ext-diff"}

// gitEnv makes git non-interactive: no pager, no editor, no prompt for a
// password (a command waiting on one would only time out).
var gitEnv = []string{
	"GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "PAGER=cat", "GIT_EDITOR=false", "GIT_SEQUENCE_EDITOR=false",
	"GIT_ASKPASS=false", "SSH_ASKPASS=false", "GIT_SSH_COMMAND=ssh -o BatchMode=yes",
}

const gitDescription = `Run git non-interactively in the sandbox: no pager, no editor (commit needs -m), no password prompts.
Give the subcommand and its arguments as a list. Risky forms (push --force, reset --hard, clean -f, branch -D, ...) are judged by the policy exactly like the same command in run_shell_command: they may be denied or need a person's approval.
Allowed subcommands: ` + "add, am, apply, bisect, blame, branch, checkout, cherry-pick, clean, clone, commit, describe, diff, fetch, format-patch, grep, init, log, ls-files, ls-tree, merge, merge-base, mv, notes, pull, push, range-diff, rebase, reflog, remote, reset, restore, rev-list, rev-parse, revert, rm, shortlog, show, show-ref, stash, status, switch, tag, worktree."

func (s *server) git(ctx context.Context, req *mcp.CallToolRequest, in GitInput) (*mcp.CallToolResult, any, error) {
	what := strings.Join(append([]string{"git", in.Subcommand}, in.Args...), " ")
	if !slices.Contains(gitSubcommands, in.Subcommand) {
		return s.refuseInput(what, fmt.Sprintf("git %q is not offered by this tool; allowed: %s (for anything else use run_shell_command, which the policy judges)",
			in.Subcommand, strings.Join(gitSubcommands, ", ")))
	}
	for _, a := range in.Args {
		if strings.IndexByte(a, 0) >= 0 {
			return s.refuseInput(what, "an argument contains a NUL byte")
		}
		name, _, _ := strings.Cut(a, "=")
		if slices.Contains(gitCodeOptions, name) || (in.Subcommand == "rebase" && (a == "-x" || strings.HasPrefix(a, "-x"))) {
			return s.refuseInput(what, fmt.Sprintf("git option %s makes git run a program; it is refused here: run the steps with run_shell_command instead, which the policy judges", name))
		}
	}
	argv := append([]string{"git", in.Subcommand}, in.Args...)
	r, notes, err := s.request(Target{Argv: argv}, in.Directory, in.TimeoutMS, in.IdleTimeoutMS)
	if err != nil {
		return s.refuseInput(what, err.Error())
	}
	r.Env = gitEnv
	out, asking := s.runJudged(ctx, req, r, "")
	if asking != nil {
		return asking, nil, nil
	}
	out.Notes = append(out.Notes, notes...)
	return s.commandResult(what, &out), nil, nil
}

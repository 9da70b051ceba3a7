package policy

import "strings"

// assigns judges the NAME=VALUE words before a program.
func (j *judge) assigns(c *Command) {
	for _, a := range c.Assigns {
		j.assign(a)
	}
}

// hijackVars make the program they are set for load or run other code.
var hijackVars = map[string]bool{
	"LD_PRELOAD": true, "LD_LIBRARY_PATH": true, "LD_AUDIT": true, "DYLD_INSERT_LIBRARIES": true,
	"DYLD_LIBRARY_PATH": true, "BASH_ENV": true, "ENV": true, "PROMPT_COMMAND": true, "GIT_SSH_COMMAND": true,
	"GIT_SSH": true, "GIT_EXEC_PATH": true, "GIT_CONFIG_GLOBAL": true, "GIT_CONFIG_SYSTEM": true, "GIT_CONFIG_PARAMETERS": true,
	"GIT_EDITOR": true, "GIT_PAGER": true, "NODE_OPTIONS": true, "PERL5OPT": true, "PYTHONSTARTUP": true, "RUBYOPT": true,
	"PAGER": true, "EDITOR": true, "VISUAL": true, "SHELLOPTS": true, "PS4": true,
}

func (j *judge) assign(a string) {
	name, _, _ := strings.Cut(a, "=")
	name = strings.TrimSuffix(name, "+")
	switch {
	case hijackVars[name]:
		j.add(Caution, 5, "sets %s, which makes the program load or run other code", name)
	case name == "PATH":
		j.add(Caution, 3, "changes PATH, which decides what program a name runs")
	case name == "HISTFILE" || name == "HISTSIZE" || name == "HISTFILESIZE":
		j.add(Caution, 4, "changes %s, which hides the shell's history", name)
	}
}

// write judges a write to a path: a redirection, tee, cp's target.
func (j *judge) write(a Arg, how string) {
	p := j.place(a)
	if p != PlaceUnknown && p != PlaceDevice {
		abs := a.Value
		if rest, ok := strings.CutPrefix(abs, "~/"); ok && j.ctx.Home != "" {
			abs = j.ctx.Home + "/" + rest
		}
		j.writes = append(j.writes, Write{Path: j.ctx.Abs(abs), Place: p})
	}
	switch p {
	case PlaceDevice:
	case PlaceDisk:
		j.add(Forbidden, 10, "%s writes to the device %s: it destroys the file system on it", how, a.Value)
	case PlaceRoot, PlaceSystemRoot, PlaceSystem:
		j.add(Dangerous, 7, "%s writes to the system file %s", how, a.Value)
	case PlaceStartup:
		j.add(Dangerous, 7, "%s writes to %s, which runs or grants access at the next login, shell or git command", how, a.Value)
	case PlaceGitHooks:
		j.add(Dangerous, 7, "%s writes a git hook (%s): code git runs by itself", how, a.Value)
	case PlaceGitDir:
		j.add(Caution, 5, "%s writes inside the repository's .git (%s)", how, a.Value)
	case PlaceWorkspace, PlaceWorkspaceRoot, PlaceTemp, PlaceTempRoot:
		j.add(SafeWrite, 1, "%s writes %s", how, a.Value)
	case PlaceUnknown:
		j.add(Caution, 3, "%s writes to a path computed at run time (%s)", how, a.Value)
	default:
		j.add(Caution, 4, "%s writes outside the workspace (%s, %s)", how, a.Value, p)
	}
}

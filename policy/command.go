package policy

import "strings"

// Arg is one word of a simple command after quote removal and brace
// expansion.
type Arg struct {
	// Value is the word's value. For a dynamic word (one with $VAR, $(...),
	// an arithmetic expansion), it is the word as written.
	Value string
	// Static is true when the value is known before the command runs.
	Static bool
	// Glob is true when the word holds an unquoted *, ? or [ that the shell
	// expands to file names.
	Glob bool
	// Runs names the programs the word's command and process substitutions
	// run ($(curl ...) -> curl): what feeds a shell or eval the word.
	Runs []string
	// IfEmpty is the value the word takes when every variable and command
	// substitution in it expands to nothing ("$DIR/*" -> "/*"); for a static
	// word it is Value.
	IfEmpty string
}

// Text renders the arg as it is matched against rules.
func (a Arg) Text() string { return a.Value }

// Redir is a redirection of a simple command.
type Redir struct {
	Op     string // ">", ">>", "<", "<<", "<<<", "&>", ...
	Fd     string // the explicit descriptor, "2" in 2>file
	Target Arg
	// Write is true when the redirection opens Target for writing.
	Write bool
}

// Stdin is what feeds a command's standard input, when the line says.
type Stdin struct {
	// Doc is the body of a here-document or here-string; DocStatic is true
	// when it holds no expansion.
	Doc       string
	DocStatic bool
	HasDoc    bool
	// From is the command of the previous pipeline stage.
	From *Command
}

// Command is one simple command the line would run, after the wrappers in
// front of it (sudo, env, timeout, ...) were looked through.
type Command struct {
	// Args is the argv; Args[0] is the program as written.
	Args []Arg
	// Name is the program's base name ("git" for /usr/bin/git or \git):
	// what the built-in knowledge is looked up by.
	Name   string
	Redirs []Redir
	Stdin  Stdin
	// Assigns are the NAME=VALUE words before the program.
	Assigns []string
	// Source is the command as written on the line, wrappers included.
	Source string
	// Wrappers lists the wrappers looked through, outermost first.
	Wrappers []string
	// Forms is the command's text at each step of the unwrapping,
	// outermost first; rules are matched against each.
	Forms []string
	// Function is true when the line defines a function of this name.
	Function bool
	// Background is true for cmd &.
	Background bool
	Depth      int
}

// Argv returns the values of the args.
func (c *Command) Argv() []string {
	out := make([]string, len(c.Args))
	for i, a := range c.Args {
		out[i] = a.Value
	}
	return out
}

// Text is the canonical text of the command: its words joined by single
// spaces, as rules see it.
func (c *Command) Text() string { return joinArgs(c.Args) }

func joinArgs(args []Arg) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(a.Value)
	}
	return b.String()
}

// Rest returns the args after the program.
func (c *Command) Rest() []Arg {
	if len(c.Args) < 2 {
		return nil
	}
	return c.Args[1:]
}

// Has reports whether any arg after the program equals one of flags.
func (c *Command) Has(flags ...string) bool {
	for _, a := range c.Rest() {
		for _, f := range flags {
			if a.Value == f {
				return true
			}
		}
	}
	return false
}

// staticArg makes an Arg of a known value.
func staticArg(v string) Arg { return Arg{Value: v, Static: true, IfEmpty: v} }

func staticArgs(vs ...string) []Arg {
	out := make([]Arg, len(vs))
	for i, v := range vs {
		out[i] = staticArg(v)
	}
	return out
}

// full is the command's outermost form followed by its redirections.
func (c *Command) full(forms []string) string {
	var b strings.Builder
	if len(forms) > 0 {
		b.WriteString(forms[0])
	}
	for _, r := range c.Redirs {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(r.Fd + r.Op + " " + r.Target.Value)
	}
	return b.String()
}

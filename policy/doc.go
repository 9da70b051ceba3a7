// Package policy judges a command line before anything runs: it parses the
// line with a real shell parser (mvdan.cc/sh), looks through wrappers and
// nested code to every simple command the line would run, scores each one
// (a category and a risk from 0 to 10), applies the user's allow, ask and
// deny rules, and returns a Decision: allow, ask or deny.
//
// The package is pure: it reads no files, runs nothing and writes nothing.
// Callers pass the configuration as bytes, the paths that matter (the
// workspace, the home directory, the temporary directories) in a Context,
// and the standing approvals as rules.
//
// Guarantees:
//   - Fail closed: a line that does not parse, a construct forgebox cannot
//     judge (a program name computed at run time, nesting deeper than
//     MaxDepth, input over MaxLineBytes or with more than MaxCommands simple
//     commands) is at least "ask", never "allow".
//   - The line takes the strictest judgement of its parts; a rule that
//     allows one simple command never allows another one beside it.
//   - Built-in forbidden commands (rm -rf /, mkfs, a fork bomb, ...) are
//     denied whatever the rules say.
//   - A wrapper's options are read as its manual lists them, so an
//     option's value is never taken for the program; an option no manual
//     lists is read both ways and the line asks at least once.
//   - A configuration from inside the workspace can only tighten the
//     user's: its allow rules are ignored and its thresholds only lowered.
//   - Judging is linear in the input: no line takes more than a few
//     milliseconds (FuzzDecide checks it).
//
// Not guaranteed: the judge reads text, not intent. It does not resolve
// symbolic links, read scripts a command would run, or know what a program
// built in the workspace does; code in an inline interpreter (python -c,
// node -e) is judged by the calls it names, which a determined author can
// hide. The sandbox, not the judge, is the security boundary: the judge
// keeps an agent from destroying what the sandbox must leave writable (the
// workspace, the remote repository) and puts the person in the loop.
package policy

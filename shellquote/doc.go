// Package shellquote renders strings as words for a POSIX shell, so that a
// command forgebox prints (an approval hint, a history line, a wrapped hook
// command) can be pasted into bash, dash or any sh and reach the program as
// the same argv.
//
// Guarantees:
//   - Quote(s) read by sh or bash is exactly the bytes of s, for any s
//     without a NUL byte: spaces, quotes, backslashes, newlines, $, `, !, *,
//     ~, #, unicode and invalid UTF-8 alike. It uses single quotes only, the
//     one quoting that is the same in every POSIX shell (no $'...').
//   - Words made only of ASCII letters, digits and @%+=:,./_- are left bare:
//     people read these lines, and a bare --flag=x is easier to read.
//   - Join quotes its first word when sh or bash would read it as an
//     assignment or a reserved word, so that it names the program to run.
//     Aliases and functions of an interactive shell are not its concern.
//
// Not guaranteed: a NUL byte cannot be carried by argv or by any shell word,
// so a string holding one does not round-trip. Quoting is for the POSIX
// shell family only; cmd.exe and PowerShell read these words differently.
//
// It imports no other forgebox package, so that every package may use it.
package shellquote

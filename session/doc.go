// Package session keeps interactive shells alive between an agent's
// commands: one bash per session on a pseudo-terminal, so the working
// directory, exported variables, functions and an activated virtualenv carry
// over from one Exec to the next, and interactive programs (a REPL, vim,
// less, top) can be driven with Send and watched with Read, which renders
// the screen through a terminal emulator (vt10x).
//
// What it guarantees:
//
//   - Exec knows when a command ends without guessing from output: the shell
//     reports a per-call random nonce and the exit status in escape
//     sequences built at run time (see marker.go), so neither the echo of the
//     typed line nor anything a command prints by accident can end it early,
//     and Output holds only what the command printed.
//   - Output is bounded (head and tail, with a note of what was left out),
//     cleaned of escape sequences, with LF line ends and valid UTF-8, whatever
//     the program wrote.
//   - Nothing printed is lost between calls: a reader goroutine drains the
//     terminal continuously, and what no Exec claims waits for Read.
//   - A hung command costs a timeout, not the session: Exec sends Ctrl-C and
//     reports StillRunning if that does not help.
//   - Close ends the shell and every process of its terminal session
//     (SIGHUP, then SIGKILL after a short grace, including children that
//     ignore SIGHUP or started new process groups), and leaves no goroutine.
//
// What it does not do: it is no sandbox. The shell runs with the caller's
// rights unless Options.Argv wraps it (forgebox run --pty ... -- bash).
// Processes that leave the terminal session and their parent chain (double
// fork and setsid) or change uid escape Close; containing them is the
// sandbox's job (PID namespace, cgroup). The nonce is hidden from output,
// not from the shell: a command that reads the shell's variables can forge a
// marker, which only confuses its own result. Commands that replace or
// unset the helper functions (__fb_begin, __fb_prompt) or PROMPT_COMMAND
// stop Exec from working; Send and Read still do.
//
// Only Linux is supported; elsewhere Start returns errors.ErrUnsupported.
package session

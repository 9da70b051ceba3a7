// Package runner takes one command from request to outcome: it loads the
// judge (the user's and the workspace's configuration, the session's
// approvals), decides, asks a person through an Asker when the decision
// asks (a terminal, an MCP client; nobody), launches the command with
// sandbox.Run, and records it in the history. The command line (forgebox
// run, history rerun), the MCP server and the Claude Code hook all go
// through it, so one decision gets one answer on every surface.
//
// What it guarantees: a command runs only when policy.Decision.Next lets
// it (the one gate: an ask needs an approval, a denial, R4 included,
// never runs); an approval is recorded only by Judge.Approve, which
// refuses what the decision does not offer; approvals and the user's
// configuration are never read from or written into the workspace, where
// the command could plant them; the history's failures never change the
// command's outcome.
//
// What it does not do: it gives no advice (the command line turns causes
// into messages and hints), and it isolates nothing itself: that is
// package sandbox.
package runner

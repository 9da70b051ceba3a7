// Package agents tests forgebox with the real agent clients people use —
// Gemini CLI, Codex, Claude Code and the TypeScript MCP SDK — each started
// from its own configuration, each driven by a stand-in model API on
// 127.0.0.1 that the test scripts, so that no model service is needed and
// every tool call the client makes is known in advance.
//
// The tests are in _linux_test.go files (forgebox serve's sandbox is
// Linux's); they skip when a client is not installed (scripts/setup-agents
// installs them) unless FORGEBOX_REQUIRE_AGENTS=1, which .ci/run sets.
// They prove that the clients reach forgebox's tools and hook and forward
// its results; they do not prove anything about the clients' own tools.
//
// The servers run with --no-undo: the approval scenarios need a command
// the person is asked about every time (git reset --hard on uncommitted
// work), and with undo the judge lets that one through, since forgebox
// undo can take it back (integration/undo_linux_test.go covers undo
// through MCP).
package agents

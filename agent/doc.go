// Package agent holds what forgebox offers programs that drive it: the JSON
// result of a run (the contract for bash-tool backends) and the MCP server
// with its tools (commands, shell sessions, files, git). It renders what
// the sandbox reports and runs commands through the Backend the command
// line gives it; it neither judges commands nor sandboxes them itself.
//
// Guarantees: every result is valid JSON whatever bytes the command wrote;
// field names and error codes are stable.
package agent

// Package agent holds what forgebox offers programs that drive it: the JSON
// result of a run (the contract for bash-tool backends) and, later, the MCP
// server. It renders what the sandbox reports; it does not decide anything.
//
// Guarantees: every result is valid JSON whatever bytes the command wrote;
// field names and error codes are stable.
package agent

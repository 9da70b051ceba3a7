package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// The Claude Code PreToolUse hook's protocol, for its Bash tool: the
// formats of https://code.claude.com/docs/en/hooks (PreToolUse input,
// PreToolUse decision control). forgebox hook claude judges the command
// and answers with these.

// MaxClaudeInput bounds what is read of the hook's input: a command over
// policy.MaxLineBytes is asked about anyway.
const MaxClaudeInput = 1 << 20

// ClaudeInput is what forgebox reads of a PreToolUse hook's input.
type ClaudeInput struct {
	SessionID, Cwd, PermissionMode string
	Tool                           string
	// toolInput is every field of tool_input, kept as it came: updatedInput
	// replaces the whole object, so the fields the hook does not change
	// must go back unchanged.
	ToolInput map[string]json.RawMessage
	Command   string
}

// OtherEventError is input of an event other than PreToolUse: the hook is
// registered in the wrong place.
type OtherEventError struct{ Event string }

func (e *OtherEventError) Error() string {
	return fmt.Sprintf("called for the %s event: register forgebox hook claude under hooks.PreToolUse with the matcher Bash", shorten(e.Event, 40))
}

// ParseClaudeInput reads the hook's input. Keys are matched exactly, as
// Claude Code reads them: encoding/json would also take "Command" for
// "command", and judge another command than the one that runs.
func ParseClaudeInput(data []byte) (ClaudeInput, error) {
	var in ClaudeInput
	if len(data) > MaxClaudeInput {
		return in, fmt.Errorf("the hook input is larger than %d bytes", MaxClaudeInput)
	}
	if !utf8.Valid(data) {
		return in, errors.New("the hook input is not valid UTF-8")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || top == nil {
		if err == nil {
			err = errors.New("it is null")
		}
		return in, fmt.Errorf("the hook input is not a JSON object: %v", err)
	}
	event, err := jsonString(top, "hook_event_name")
	if err != nil {
		return in, err
	}
	if event != "" && event != "PreToolUse" {
		return in, &OtherEventError{Event: event}
	}
	for _, f := range []struct {
		key string
		to  *string
	}{{"session_id", &in.SessionID}, {"cwd", &in.Cwd}, {"permission_mode", &in.PermissionMode}, {"tool_name", &in.Tool}} {
		if *f.to, err = jsonString(top, f.key); err != nil {
			return in, err
		}
	}
	if in.Tool == "" {
		return in, errors.New("the hook input has no tool_name")
	}
	if in.Tool != "Bash" {
		return in, nil
	}
	raw, ok := top["tool_input"]
	if !ok {
		return in, errors.New("the hook input has no tool_input")
	}
	if err := json.Unmarshal(raw, &in.ToolInput); err != nil || in.ToolInput == nil {
		return in, errors.New("the hook input's tool_input is not a JSON object")
	}
	cmd, ok := in.ToolInput["command"]
	if !ok || string(cmd) == "null" {
		return in, errors.New("the hook input's tool_input has no command")
	}
	if err := json.Unmarshal(cmd, &in.Command); err != nil {
		return in, errors.New("the hook input's tool_input.command is not a string")
	}
	return in, nil
}

// jsonString is the string at key, "" when it is absent or null.
func jsonString(m map[string]json.RawMessage, key string) (string, error) {
	raw, ok := m[key]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("the hook input's %s is not a string", key)
	}
	return s, nil
}

// ClaudeOutput is a PreToolUse hook's answer.
type ClaudeOutput struct {
	SystemMessage string         `json:"systemMessage,omitempty"`
	Specific      ClaudeDecision `json:"hookSpecificOutput"`
}

// ClaudeDecision is the PreToolUse decision control.
type ClaudeDecision struct {
	HookEventName string `json:"hookEventName"`
	Decision      string `json:"permissionDecision"`
	// Reason is shown to the person for allow and ask, to Claude for deny.
	Reason string `json:"permissionDecisionReason,omitempty"`
	// UpdatedInput replaces tool_input whole.
	UpdatedInput map[string]any `json:"updatedInput,omitempty"`
}

// MaxClaudeReason keeps a reason well under the 10,000 characters Claude
// Code shows of a hook's strings.
const MaxClaudeReason = 4000

// ClaudeSays is the answer decision ("allow", "ask", "deny") with its
// reason, cut to MaxClaudeReason.
func ClaudeSays(decision, reason string) ClaudeOutput {
	return ClaudeOutput{Specific: ClaudeDecision{HookEventName: "PreToolUse", Decision: decision, Reason: shorten(reason, MaxClaudeReason)}}
}

// ClaudePrompts reports whether a hook's "ask" reaches a person in
// Claude Code's permission mode: dontAsk denies what would prompt, and
// bypassPermissions skips prompts; an unknown mode is not trusted to ask.
func ClaudePrompts(mode string) bool {
	switch mode {
	case "default", "acceptEdits", "plan", "auto":
		return true
	}
	return false
}

// shorten cuts s to n bytes for a message.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

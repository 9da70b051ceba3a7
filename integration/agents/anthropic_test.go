//go:build linux && agents

package agents

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// anthropic is the Messages API Claude Code speaks (ANTHROPIC_BASE_URL),
// streamed or not.
type anthropic struct{}

type anthropicRequest struct {
	Stream   bool `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// toolSearch is Claude Code's tool that fetches deferred tools (MCP tools,
// unless ENABLE_TOOL_SEARCH=false).
const toolSearch = "ToolSearch"

type anthropicBlock struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

// blocks returns a request's content blocks, in order.
func (req anthropicRequest) blocks() (out []json.RawMessage) {
	for _, m := range req.Messages {
		var blocks []json.RawMessage
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue // a plain string
		}
		out = append(out, blocks...)
	}
	return out
}

// results are the tool results but those of tool searches, which are not
// steps of the script.
func (anthropic) results(body []byte) ([]json.RawMessage, error) {
	var req anthropicRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("messages request: %w", err)
	}
	searches := map[string]bool{}
	var out []json.RawMessage
	for _, raw := range req.blocks() {
		var b anthropicBlock
		json.Unmarshal(raw, &b)
		switch {
		case b.Type == "tool_use" && b.Name == toolSearch:
			searches[b.ID] = true
		case b.Type == "tool_result" && !searches[b.ToolUseID]:
			out = append(out, raw)
		}
	}
	return out, nil
}

// tools are the request's tools. A tool that ToolSearch fetched (its
// result is a tool_reference) is among them from the next request on.
func (anthropic) tools(body []byte) []string {
	var req anthropicRequest
	json.Unmarshal(body, &req)
	var names []string
	for _, t := range req.Tools {
		names = append(names, t.Name)
	}
	return names
}

func (anthropic) searchTool(offered []string) string {
	if slices.Contains(offered, toolSearch) {
		return toolSearch
	}
	return ""
}

// search asks Claude Code's ToolSearch for forgebox's tool by its name.
func (a anthropic) search(w http.ResponseWriter, n int, searchTool, want string) {
	writeAnthropic(w, n, true, searchTool, map[string]any{"query": "select:mcp__forgebox__" + want}, "")
}

func (anthropic) reply(w http.ResponseWriter, r *http.Request, body []byte, n int, tool string, args map[string]any, text string) {
	if strings.HasSuffix(r.URL.Path, "/count_tokens") {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"input_tokens":100}`))
		return
	}
	var req anthropicRequest
	json.Unmarshal(body, &req)
	writeAnthropic(w, n, req.Stream, tool, args, text)
}

// writeAnthropic writes a message calling tool with args or, tool "",
// saying text; streamed as server-sent events or not.
func writeAnthropic(w http.ResponseWriter, n int, stream bool, tool string, args map[string]any, text string) {
	block := map[string]any{"type": "text", "text": text}
	stop := "end_turn"
	if tool != "" {
		block = map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%03d", n), "name": tool, "input": args}
		stop = "tool_use"
	}
	usage := map[string]any{"input_tokens": 100, "output_tokens": 10}
	msg := map[string]any{"id": fmt.Sprintf("msg_%03d", n), "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
		"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(msg)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	event := func(name string, data map[string]any) {
		data["type"] = name
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	}
	start := map[string]any{}
	for k, v := range msg {
		start[k] = v
	}
	start["content"], start["stop_reason"] = []any{}, nil
	event("message_start", map[string]any{"message": start})
	if tool != "" {
		input, _ := json.Marshal(args)
		event("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{"type": "tool_use", "id": block["id"], "name": tool, "input": map[string]any{}}})
		event("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
	} else {
		event("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		event("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "text_delta", "text": text}})
	}
	event("content_block_stop", map[string]any{"index": 0})
	event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 10}})
	event("message_stop", map[string]any{})
}

//go:build linux && agents

package agents

import (
	"encoding/json"
	"fmt"
	"net/http"
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

func (anthropic) results(body []byte) ([]json.RawMessage, error) {
	var req anthropicRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("messages request: %w", err)
	}
	var out []json.RawMessage
	for _, m := range req.Messages {
		var blocks []json.RawMessage
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue // a plain string
		}
		for _, b := range blocks {
			var head struct{ Type string }
			json.Unmarshal(b, &head)
			if head.Type == "tool_result" {
				out = append(out, b)
			}
		}
	}
	return out, nil
}

func (anthropic) tools(body []byte) []string {
	var req anthropicRequest
	json.Unmarshal(body, &req)
	var names []string
	for _, t := range req.Tools {
		names = append(names, t.Name)
	}
	return names
}

func (anthropic) reply(w http.ResponseWriter, r *http.Request, body []byte, n int, tool string, args map[string]any, text string) {
	if strings.HasSuffix(r.URL.Path, "/count_tokens") {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"input_tokens":100}`))
		return
	}
	var req anthropicRequest
	json.Unmarshal(body, &req)
	block := map[string]any{"type": "text", "text": text}
	stop := "end_turn"
	if tool != "" {
		block = map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%03d", n), "name": tool, "input": args}
		stop = "tool_use"
	}
	usage := map[string]any{"input_tokens": 100, "output_tokens": 10}
	msg := map[string]any{"id": fmt.Sprintf("msg_%03d", n), "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
		"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage}
	if !req.Stream {
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

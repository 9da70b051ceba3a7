//go:build linux && agents

package agents

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// responsesAPI is OpenAI's Responses API, streamed, that Codex speaks to a
// model provider configured with wire_api = "responses".
type responsesAPI struct{}

type responsesRequest struct {
	Input []json.RawMessage `json:"input"`
	Tools []json.RawMessage `json:"tools"`
}

func (responsesAPI) results(body []byte) ([]json.RawMessage, error) {
	var req responsesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("responses request: %w", err)
	}
	var out []json.RawMessage
	for _, item := range req.Input {
		var head struct{ Type string }
		json.Unmarshal(item, &head)
		if head.Type == "function_call_output" || head.Type == "custom_tool_call_output" || head.Type == "mcp_tool_call_output" {
			out = append(out, item)
		}
	}
	return out, nil
}

// tools lists the function tools, and those inside a namespace tool as
// namespace__name.
func (responsesAPI) tools(body []byte) []string {
	var req responsesRequest
	json.Unmarshal(body, &req)
	var names []string
	for _, raw := range req.Tools {
		var t struct {
			Type  string `json:"type"`
			Name  string `json:"name"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		json.Unmarshal(raw, &t)
		if t.Type == "tool_search" {
			t.Name = "tool_search"
		}
		names = append(names, t.Name)
		for _, sub := range t.Tools {
			names = append(names, t.Name+"__"+sub.Name)
		}
	}
	// The tools a tool search found come back in the input.
	for _, item := range req.Input {
		var out struct {
			Type  string `json:"type"`
			Tools []struct {
				Type  string `json:"type"`
				Name  string `json:"name"`
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
			} `json:"tools"`
		}
		json.Unmarshal(item, &out)
		if out.Type != "tool_search_output" {
			continue
		}
		for _, t := range out.Tools {
			names = append(names, t.Name)
			for _, sub := range t.Tools {
				names = append(names, t.Name+"__"+sub.Name)
			}
		}
	}
	return names
}

func (responsesAPI) searchTool(offered []string) string {
	for _, name := range offered {
		if name == "tool_search" {
			return name
		}
	}
	return ""
}

// search calls Codex's tool_search, which the client runs ("execution":
// "client") and answers with a tool_search_output of the tools found.
func (responsesAPI) search(w http.ResponseWriter, n int, searchTool, want string) {
	item := map[string]any{"type": "tool_search_call", "id": fmt.Sprintf("ts_%03d", n), "call_id": fmt.Sprintf("call_%03d", n),
		"execution": "client", "status": "completed", "arguments": map[string]any{"query": "forgebox " + want, "limit": 8}}
	writeResponse(w, n, item)
}

func (responsesAPI) reply(w http.ResponseWriter, r *http.Request, body []byte, n int, tool string, args map[string]any, text string) {
	item := map[string]any{"type": "message", "role": "assistant", "id": fmt.Sprintf("msg_%03d", n), "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
	if tool != "" {
		a, _ := json.Marshal(args)
		item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%03d", n), "call_id": fmt.Sprintf("call_%03d", n),
			"name": tool, "arguments": string(a), "status": "completed"}
		// A tool of a namespace (tools() names it namespace__name) is
		// called by its name with its namespace beside it.
		if i := strings.LastIndex(tool, "__"); strings.HasPrefix(tool, "mcp__") && i > len("mcp") {
			item["namespace"], item["name"] = tool[:i], tool[i+2:]
		}
	}
	writeResponse(w, n, item)
}

// writeResponse streams a response of one output item.
func writeResponse(w http.ResponseWriter, n int, item map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	id := fmt.Sprintf("resp_%03d", n)
	event := func(data map[string]any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", data["type"], b)
	}
	event(map[string]any{"type": "response.created", "response": map[string]any{"id": id}})
	event(map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	event(map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	event(map[string]any{"type": "response.completed", "response": map[string]any{"id": id,
		"usage": map[string]any{"input_tokens": 100, "input_tokens_details": nil, "output_tokens": 10, "output_tokens_details": nil, "total_tokens": 110}}})
}

//go:build linux && agents

package agents

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// geminiAPI is the Gemini API's generateContent and streamGenerateContent
// (GOOGLE_GEMINI_BASE_URL) that Gemini CLI speaks.
type geminiAPI struct{}

type geminiRequest struct {
	Contents []struct {
		Role  string            `json:"role"`
		Parts []json.RawMessage `json:"parts"`
	} `json:"contents"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
}

func (geminiAPI) results(body []byte) ([]json.RawMessage, error) {
	var req geminiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("generateContent request: %w", err)
	}
	var out []json.RawMessage
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			var part struct {
				FunctionResponse json.RawMessage `json:"functionResponse"`
			}
			json.Unmarshal(p, &part)
			if part.FunctionResponse != nil {
				out = append(out, p)
			}
		}
	}
	return out, nil
}

func (geminiAPI) tools(body []byte) []string {
	var req geminiRequest
	json.Unmarshal(body, &req)
	var names []string
	for _, t := range req.Tools {
		for _, f := range t.FunctionDeclarations {
			names = append(names, f.Name)
		}
	}
	return names
}

func (geminiAPI) reply(w http.ResponseWriter, r *http.Request, body []byte, n int, tool string, args map[string]any, text string) {
	if strings.HasSuffix(r.URL.Path, ":countTokens") {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"totalTokens":100}`))
		return
	}
	part := map[string]any{"text": text}
	if tool != "" {
		part = map[string]any{"functionCall": map[string]any{"name": tool, "args": args}}
	}
	b, _ := json.Marshal(map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110},
		"modelVersion":  "gemini-2.5-pro",
	})
	if strings.HasSuffix(r.URL.Path, ":streamGenerateContent") {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\r\n\r\n", b)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

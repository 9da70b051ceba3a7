package agent

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/forgebox/forgebox/sandbox"
)

func TestText(t *testing.T) {
	tests := []struct {
		name      string
		c         sandbox.Captured
		text, b64 string
	}{
		{"utf8", sandbox.Captured{Head: []byte("héllo\n"), Total: 7}, "héllo\n", ""},
		{"invalid bytes", sandbox.Captured{Head: []byte("a\xff\xfeb"), Total: 4}, "a\uFFFD\uFFFDb", base64.StdEncoding.EncodeToString([]byte("a\xff\xfeb"))},
		{"nul", sandbox.Captured{Head: []byte("a\x00b"), Total: 3}, "a\x00b", ""},
		{"truncated", sandbox.Captured{Head: []byte("head"), Tail: []byte("tail"), Omitted: 92, Total: 100}, "head\n[forgebox: 92 bytes omitted]\ntail", ""},
	}
	for _, tt := range tests {
		text, b64 := Text(tt.c)
		if text != tt.text || b64 != tt.b64 {
			t.Errorf("Text(%s) = %q, %q; want %q, %q", tt.name, text, b64, tt.text, tt.b64)
		}
	}
}

// Whatever the command printed, the result is valid JSON with stable,
// always-present fields.
func TestFromResultIsValidJSON(t *testing.T) {
	r := &sandbox.Result{ExitCode: 3, Duration: 1500 * time.Microsecond,
		Stdout: sandbox.Captured{Head: []byte{0, 0xff, 0xc3, 'x', '"', '\\', '\n'}, Total: 7}}
	b, err := json.Marshal(FromResult(r))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("result is not valid JSON: %v\n%s", err, b)
	}
	for _, k := range []string{"exit_code", "signal", "timed_out", "duration_ms", "stdout", "stderr", "stdout_bytes",
		"stderr_bytes", "stdout_truncated", "stderr_truncated", "enforced", "warnings", "quarantined"} {
		if _, ok := m[k]; !ok {
			t.Errorf("result lacks %q: %s", k, b)
		}
	}
	if m["signal"] != nil || m["duration_ms"] != 1.5 || !strings.Contains(string(b), `"stdout_base64"`) {
		t.Errorf("result %s: want signal null, duration_ms 1.5 and stdout_base64", b)
	}
}

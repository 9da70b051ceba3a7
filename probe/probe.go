package probe

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
)

// Verdict is the outcome of one operation: whether it succeeded, and if
// not, the errno it failed with (its name, "EROFS"; "errnoN" for one
// without a name here) and the error text. Out is what the operation read
// or counted.
type Verdict struct {
	Op    string   `json:"op"`
	Args  []string `json:"args"`
	OK    bool     `json:"ok"`
	Errno string   `json:"errno,omitempty"`
	Err   string   `json:"err,omitempty"`
	Out   string   `json:"out,omitempty"`
}

// Main attempts each operation in turn and writes one JSON line per
// operation to w, as soon as it is done: an operation that gets the probe
// killed (hog, at a memory limit) leaves the verdicts before it intact.
// Each argument is one operation: its words separated by spaces, or a JSON
// array of strings (Encode) when a word holds spaces. Empty arguments are
// skipped.
func Main(args []string, w io.Writer) error {
	enc := json.NewEncoder(w)
	for _, a := range args {
		words := Split(a)
		if len(words) == 0 {
			continue
		}
		if err := enc.Encode(Do(words[0], words[1:])); err != nil {
			return err
		}
	}
	return nil
}

// Encode turns an operation into one argument for Main that keeps every
// word intact, whatever it holds.
func Encode(op string, args ...string) string {
	b, _ := json.Marshal(append([]string{op}, args...)) // strings always marshal
	return string(b)
}

// Split is the inverse of Encode, and splits any other argument at spaces.
func Split(arg string) []string {
	if strings.HasPrefix(arg, "[") {
		var words []string
		if json.Unmarshal([]byte(arg), &words) == nil {
			return words
		}
	}
	return strings.Fields(arg)
}

// Decode reads the verdicts Main wrote. What is not a verdict is skipped:
// on a pseudo-terminal, lines end in "\r\n", and input the probe pushed
// into its own terminal is echoed among them.
func Decode(out []byte) []Verdict {
	var vs []Verdict
	for _, line := range bytes.Split(out, []byte("\n")) {
		i := bytes.IndexByte(line, '{')
		var v Verdict
		if i < 0 || json.Unmarshal(bytes.TrimSpace(line[i:]), &v) != nil || v.Op == "" {
			continue
		}
		vs = append(vs, v)
	}
	return vs
}

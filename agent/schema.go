package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/forgebox/forgebox/sandbox"
	"github.com/forgebox/forgebox/undo"
)

// addTool adds a tool whose input schema is In's and output schema Out's.
// The input schema is loosened and cleaned for the clients that call it:
//   - unknown properties are accepted (and ignored): clients add their
//     own to every call (Gemini CLI's wait_for_previous), and a schema
//     that forbids them makes every call fail;
//   - a property is of one type, never ["null", T] as Go's slices and
//     pointers infer, which strict validators (the MCP Inspector's)
//     reject; an absent property is the null case, and a null sent for
//     an optional one counts as absent;
//   - a numeric argument with a fixed range (argumentRange) has it in
//     the schema.
//
// The arguments are checked here rather than by the SDK, whose messages
// speak of Go (`type: <invalid reflect.Value> has type "null"`): a wrong
// argument comes back as a tool error the model can act on, naming the
// argument, what was wrong and what is accepted.
func addTool[In, Out any](srv *mcp.Server, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) {
	in, rin := schemaFor[In](t.Name, "input")
	// A tool whose result is text only (a command's: its output reaches
	// the model once, in the text) has no output schema.
	textOnly := reflect.TypeFor[Out]() == reflect.TypeFor[any]()
	var out *jsonschema.Schema
	var rout *jsonschema.Resolved
	if !textOnly {
		out, rout = schemaFor[Out](t.Name, "output")
		t.OutputSchema = out
	}
	t.InputSchema = in
	if t.Annotations != nil && t.Annotations.Title == "" {
		// Clients of the 2025-03-26 protocol read the title here.
		t.Annotations.Title = t.Title
	}
	srv.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args In
		if err := decodeArguments(req.Params.Arguments, in, rin, &args); err != nil {
			msg := fmt.Sprintf("%s: %v", t.Name, err)
			res := textResult(msg, true)
			if textOnly {
				// As a command refused for its input says it in its data.
				res.Meta = mcp.Meta{ResultMeta: map[string]any{"ran": false, "exit_code": sandbox.ExitForgebox,
					"blocked": &Blocked{Layer: "input", Message: msg, Hint: "fix the arguments and call again"}}}
			}
			return res, nil
		}
		res, o, err := h(ctx, req, args)
		if err != nil {
			return textResult(err.Error(), true), nil
		}
		if res == nil {
			res = &mcp.CallToolResult{}
		}
		if res.InputRequests != nil || textOnly {
			// Asking the client for input: no content goes with it.
			return res, nil
		}
		structured, err := encodeOutput(o, rout)
		if err != nil {
			return textResult(fmt.Sprintf("forgebox: the result of %s is malformed: %v; this is forgebox failing, report it to the person", t.Name, err), true), nil
		}
		res.StructuredContent = structured
		if res.Content == nil {
			res.Content = []mcp.Content{&mcp.TextContent{Text: string(structured)}}
		}
		return res, nil
	})
}

// readOnly annotates a tool that changes nothing. Every tool acts on the
// workspace and the local machine only: none is open-world, whatever the
// sandbox's network lets a command reach.
func readOnly() *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
}

// changes annotates a tool that changes the workspace: destructive when it
// may replace or remove what is there (not only add), idempotent when a
// second identical call has no further effect.
func changes(destructive, idempotent bool) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{DestructiveHint: ptr(destructive), IdempotentHint: idempotent, OpenWorldHint: ptr(false)}
}

// schemaFor is T's schema for a tool, with the descriptions of the types
// described here (documentedTypes), and resolved for validation. An input
// schema is loosened and bounded (see addTool).
func schemaFor[T any](tool, which string) (*jsonschema.Schema, *jsonschema.Resolved) {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: documentedTypes()})
	if err == nil && which == "input" {
		loosen(s)
		bound(s)
	}
	var r *jsonschema.Resolved
	if err == nil {
		r, err = s.Resolve(nil)
	}
	if err != nil {
		panic("agent: the " + which + " schema of tool " + tool + ": " + err.Error())
	}
	return s, r
}

// loosen drops additionalProperties: false and nullable unions, at every
// depth.
func loosen(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	s.AdditionalProperties = nil
	if len(s.Types) == 2 && (s.Types[0] == "null" || s.Types[1] == "null") {
		t := s.Types[0]
		if t == "null" {
			t = s.Types[1]
		}
		s.Type, s.Types = t, nil
	}
	for _, p := range s.Properties {
		loosen(p)
	}
	loosen(s.Items)
}

// Bounds of the numeric arguments that have one.
const (
	// maxTimeoutMS is the largest timeout_ms accepted at all, a day: the
	// server then caps it at its own limit (serve --timeout) and says so.
	// Beyond a day the number is a mistake, not a wish.
	maxTimeoutMS = 24 * 60 * 60 * 1000
	// maxWaitMS is the longest shell_read waits for output to settle.
	maxWaitMS = 30000
)

// argumentRange is the range accepted for a numeric argument, by its
// name: an argument means the same in every tool that takes it.
func argumentRange(name string) (lo, hi float64, ok bool) {
	switch name {
	case "timeout_ms", "idle_timeout_ms":
		return 0, maxTimeoutMS, true
	case "wait_ms":
		return 0, maxWaitMS, true
	}
	return 0, 0, false
}

// bound writes the ranges of argumentRange into the schema's top-level
// properties.
func bound(s *jsonschema.Schema) {
	for name, p := range s.Properties {
		if lo, hi, ok := argumentRange(name); ok {
			p.Minimum, p.Maximum = &lo, &hi
		}
	}
}

// encodeOutput is a tool's structured result, checked against its
// schema.
func encodeOutput(o any, r *jsonschema.Resolved) (json.RawMessage, error) {
	b, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	if err := r.Validate(v); err != nil {
		return nil, err
	}
	return b, nil
}

// documentedTypes are the schemas, with a description of each field, of
// the result types whose declarations carry none: the sandbox's, and
// those declared beside the run path in shell.go. A field added there
// without a description here fails TestToolSchemas.
func documentedTypes() map[reflect.Type]*jsonschema.Schema {
	m := map[reflect.Type]*jsonschema.Schema{}
	add := func(t reflect.Type, docs map[string]string) {
		s, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: m})
		if err != nil {
			panic("agent: the schema of " + t.String() + ": " + err.Error())
		}
		for name, d := range docs {
			p := s.Properties[name]
			if p == nil {
				panic("agent: " + t.String() + " has no property " + name + " to describe")
			}
			if p.Description == "" {
				p.Description = d
			}
		}
		m[t] = s
	}
	add(reflect.TypeFor[sandbox.Quarantined](), map[string]string{
		"path":     "the protected path a command created in the workspace (a git hook, an .envrc, editor or agent settings)",
		"moved_to": "where forgebox moved it, so that it does not take effect",
		"why":      "why the path is protected",
		"key":      "for a setting written into a protected file: its name",
		"value":    "for a setting written into a protected file: its value",
	})
	add(reflect.TypeFor[sandbox.Changes](), map[string]string{
		"created":  "files (all but directories) the command created in the workspace",
		"modified": "files it replaced or changed",
		"deleted":  "files it deleted (those in a deleted directory included)",
		"bytes":    "bytes written: the size of the files created or modified",
		"undo_id":  "the undo record that takes the command's changes back (the undo tool, or forgebox undo ID); absent when nothing changed",
	})
	add(reflect.TypeFor[undo.Change](), map[string]string{
		"path":   "a path of the workspace, relative to it",
		"action": "remove (the command created it), restore (it changed or deleted it) or mode (it changed a directory's mode)",
	})
	add(reflect.TypeFor[undo.Conflict](), map[string]string{
		"path": "a path of the workspace changed after the command",
		"why":  "how it changed",
		"kept": "a cache git rewrites by itself (.git/index): the undo overwrites it anyway, keeping the current one in its record",
	})
	return m
}

// decodeArguments checks a call's arguments against the tool's input
// schema and decodes them into v. Only the schema's own properties reach
// v, by their exact names (checkObject drops the others): encoding/json
// would also fill a field from a property spelled in another case, which
// the check never saw.
func decodeArguments(raw json.RawMessage, s *jsonschema.Schema, r *jsonschema.Resolved, v any) error {
	args := map[string]any{}
	if len(raw) > 0 && string(raw) != "null" {
		var got any
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&got); err != nil {
			return fmt.Errorf("the arguments are not valid JSON: %v", err)
		}
		m, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("the arguments must be a JSON object of named parameters (%s), not %s", strings.Join(slices.Sorted(maps.Keys(s.Properties)), ", "), jsonKind(got))
		}
		args = m
	}
	if err := checkObject("", args, s); err != nil {
		return err
	}
	// The check above covers what the schemas of these tools use; the
	// schema's own validation stays as the backstop.
	b, err := json.Marshal(args)
	if err == nil {
		var generic any
		if err = json.Unmarshal(b, &generic); err == nil {
			err = r.Validate(generic)
		}
	}
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		return fmt.Errorf("the arguments do not match the tool's schema: %v", err)
	}
	return nil
}

// checkObject checks the properties of an object argument: a null is
// dropped as absent, and so is a property the schema does not name;
// required ones must be present, and each must be of its type and range.
func checkObject(at string, obj map[string]any, s *jsonschema.Schema) error {
	maps.DeleteFunc(obj, func(name string, v any) bool { return v == nil || s.Properties[name] == nil })
	for _, name := range s.Required {
		if _, ok := obj[name]; !ok {
			return fmt.Errorf("the argument %s is missing: %s", argName(at, name), expected(s.Properties[name]))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(obj)) {
		v, err := checkValue(argName(at, name), obj[name], s.Properties[name])
		if err != nil {
			return err
		}
		obj[name] = v
	}
	return nil
}

// checkValue checks one argument against its schema, and returns it as
// the decoder takes it (a whole number written 1e3 or 5.0 as 1000 or 5).
func checkValue(name string, v any, p *jsonschema.Schema) (any, error) {
	wrong := func() (any, error) {
		return nil, fmt.Errorf("the argument %s is %s: %s", name, jsonKind(v), expected(p))
	}
	switch p.Type {
	case "string":
		if _, ok := v.(string); !ok {
			return wrong()
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return wrong()
		}
	case "integer", "number":
		n, ok := v.(json.Number)
		if !ok {
			return wrong()
		}
		f, err := n.Float64()
		if err != nil {
			return nil, fmt.Errorf("the argument %s is %s, out of range: %s", name, n, expected(p))
		}
		if p.Type == "integer" && f != math.Trunc(f) {
			return nil, fmt.Errorf("the argument %s is %s, not a whole number: %s", name, n, expected(p))
		}
		// 2^63 is the first float64 beyond the int64 the decoder fills.
		if p.Minimum != nil && f < *p.Minimum || p.Maximum != nil && f > *p.Maximum || p.Type == "integer" && (f >= 1<<63 || f < -(1<<63)) {
			return nil, fmt.Errorf("the argument %s is %s, out of range: %s", name, n, expected(p))
		}
		if p.Type == "integer" {
			return json.Number(strconv.FormatInt(int64(f), 10)), nil
		}
	case "array":
		items, ok := v.([]any)
		if !ok {
			return wrong()
		}
		for i, item := range items {
			if p.Items == nil {
				break
			}
			var err error
			if items[i], err = checkValue(fmt.Sprintf("%s[%d]", name, i), item, p.Items); err != nil {
				return nil, err
			}
		}
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return wrong()
		}
		return obj, checkObject(name, obj, p)
	}
	return v, nil
}

func argName(at, name string) string {
	if at == "" {
		return name
	}
	return at + "." + name
}

// expected says what an argument accepts: its type, range and meaning.
func expected(p *jsonschema.Schema) string {
	if p == nil {
		return "see the tool's schema"
	}
	e := "give " + typeName(p)
	if p.Minimum != nil && p.Maximum != nil {
		e += " from " + strconv.FormatFloat(*p.Minimum, 'f', -1, 64) + " to " + strconv.FormatFloat(*p.Maximum, 'f', -1, 64)
	}
	if p.Description != "" {
		e += " (" + p.Description + ")"
	}
	return e
}

// typeName names a schema's type for a message.
func typeName(p *jsonschema.Schema) string {
	switch p.Type {
	case "string":
		return "a string"
	case "boolean":
		return "true or false"
	case "integer":
		return "a whole number"
	case "number":
		return "a number"
	case "array":
		if p.Items == nil {
			return "a list"
		}
		switch p.Items.Type {
		case "string":
			return "a list of strings"
		case "object":
			return "a list of objects with " + strings.Join(slices.Sorted(maps.Keys(p.Items.Properties)), ", ")
		}
		return "a list of " + typeName(p.Items) + " each"
	case "object":
		if len(p.Properties) > 0 {
			return "an object with " + strings.Join(slices.Sorted(maps.Keys(p.Properties)), ", ")
		}
		return "an object"
	}
	return "a value"
}

// jsonKind names what a JSON value is, for a message.
func jsonKind(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return fmt.Sprint(v)
	case json.Number:
		return "the number " + v.String()
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

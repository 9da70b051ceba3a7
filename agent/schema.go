package agent

import (
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addTool adds a tool whose input schema is In's, loosened and cleaned
// for the clients that call it:
//   - unknown properties are accepted (and ignored): clients add their
//     own to every call (Gemini CLI's wait_for_previous), and a schema
//     that forbids them makes every call fail;
//   - a property is of one type, never ["null", T] as Go's slices and
//     pointers infer, which strict validators (the MCP Inspector's)
//     reject; an absent property is the null case.
func addTool[In, Out any](srv *mcp.Server, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		panic("agent: the input schema of tool " + t.Name + ": " + err.Error())
	}
	loosen(s)
	t.InputSchema = s
	mcp.AddTool(srv, t, h)
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

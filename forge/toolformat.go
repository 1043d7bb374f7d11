package forge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// Tool spec formats (ToolsAs).
const (
	ToolsMCP       = "mcp"
	ToolsOpenAI    = "openai"
	ToolsAnthropic = "anthropic"
)

// MCPTool is a ToolSpec as an MCP tool definition (tools/list).
type MCPTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	Annotations  MCPAnnotations  `json:"annotations"`
}

// MCPAnnotations are an MCP tool's behaviour hints.
type MCPAnnotations struct {
	ReadOnlyHint    bool `json:"readOnlyHint"`
	IdempotentHint  bool `json:"idempotentHint"`
	OpenWorldHint   bool `json:"openWorldHint"`
	DestructiveHint bool `json:"destructiveHint"`
}

// OpenAITool is a ToolSpec as an entry of OpenAI's Chat Completions `tools` array.
type OpenAITool struct {
	Type     string         `json:"type"` // "function"
	Function OpenAIFunction `json:"function"`
}

// OpenAIFunction is an OpenAI function tool. Strict is true when the parameters could be written
// in strict mode's subset (every object closed, every property required); a parameter strict
// mode cannot say (a map, a value of any type) keeps the schema as it is, not strict.
type OpenAIFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

// AnthropicTool is a ToolSpec as an entry of Anthropic's Messages `tools` array.
type AnthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// ToolsAs writes specs in format (ToolsMCP, ToolsOpenAI or ToolsAnthropic): a list of
// MCPTool, OpenAITool or AnthropicTool. A call of any of them goes to role.method (POST
// /v1/call/{role}/{method} with the arguments as the body).
func ToolsAs(specs []ToolSpec, format string) (any, error) {
	switch format {
	case ToolsMCP, "":
		out := make([]MCPTool, len(specs))
		for i, t := range specs {
			out[i] = MCPTool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, OutputSchema: OutcomeSchema(t.ResultSchema),
				Annotations: MCPAnnotations{ReadOnlyHint: t.ReadOnly, IdempotentHint: t.Idempotent, OpenWorldHint: t.OpenWorld, DestructiveHint: t.Destructive}}
		}
		return out, nil
	case ToolsOpenAI:
		out := make([]OpenAITool, len(specs))
		for i, t := range specs {
			params, strict := strictSchema(t.InputSchema)
			out[i] = OpenAITool{Type: "function", Function: OpenAIFunction{Name: t.Name, Description: t.Description, Parameters: params, Strict: strict}}
		}
		return out, nil
	case ToolsAnthropic:
		out := make([]AnthropicTool, len(specs))
		for i, t := range specs {
			out[i] = AnthropicTool{Name: t.Name, Description: t.Description, InputSchema: withoutDialect(t.InputSchema)}
		}
		return out, nil
	}
	return nil, fmt.Errorf("tool format %q is unknown: use mcp, openai or anthropic", format)
}

// OutcomeSchema is the JSON Schema of an Outcome whose value has schema value (any value when
// nil): a method tool's MCP outputSchema, since its structured content is the Outcome.
func OutcomeSchema(value json.RawMessage) json.RawMessage {
	if len(value) == 0 || !json.Valid(value) {
		value = json.RawMessage(`{}`)
	}
	return json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"},"value":` + string(value) +
		`,"error":{"type":"object","properties":{"type":{"type":"string"},"class":{"type":"string"},"rule":{"type":"string"},"message":{"type":"string"},"retriable":{"type":"boolean"},"retry_after":{"type":"integer","description":"nanoseconds to wait before the same call may succeed"}}},` +
		`"meta":{"type":"object"}},"required":["ok","meta"]}`)
}

// withoutDialect is schema without its "$schema" keyword (the frameworks take plain schemas).
func withoutDialect(schema json.RawMessage) json.RawMessage {
	s, ok := schemaObject(schema)
	if !ok {
		return schema
	}
	delete(s, "$schema")
	b, _ := json.Marshal(s)
	return b
}

// strictSchema is schema in OpenAI strict mode's form — every object has additionalProperties
// false and requires all its properties (an optional one becomes nullable in Go's decoding
// anyway: a missing field and null decode alike) — and whether that was possible: a map (an
// object of any keys) or a value of any type cannot be said in strict mode, and the schema is
// then returned as it was, without "$schema".
func strictSchema(schema json.RawMessage) (json.RawMessage, bool) {
	s, ok := schemaObject(schema)
	if !ok {
		return schema, false
	}
	delete(s, "$schema")
	orig, _ := json.Marshal(s)
	if !strictNode(s) {
		return orig, false
	}
	b, err := json.Marshal(s)
	if err != nil {
		return orig, false
	}
	return b, true
}

// strictNode rewrites one schema node for strict mode, reporting whether it could.
func strictNode(n map[string]any) bool {
	delete(n, "contentEncoding")
	if alts, ok := n["anyOf"].([]any); ok {
		for _, a := range alts {
			m, ok := a.(map[string]any)
			if !ok || !strictNode(m) {
				return false
			}
		}
		return true
	}
	if _, ok := n["type"]; !ok {
		return false // any value
	}
	if items, ok := n["items"].(map[string]any); ok && !strictNode(items) {
		return false
	}
	if !hasType(n["type"], "object") {
		return true
	}
	if ap, ok := n["additionalProperties"]; ok && ap != false {
		return false // a map: keys not known in advance
	}
	props, _ := n["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
		n["properties"] = props
	}
	required := make([]any, 0, len(props))
	for _, name := range slices.Sorted(maps.Keys(props)) {
		p, ok := props[name].(map[string]any)
		if !ok || !strictNode(p) {
			return false
		}
		required = append(required, name)
	}
	n["additionalProperties"] = false
	n["required"] = required
	return true
}

// schemaObject decodes a JSON Schema object keeping its numbers exactly as written (an int64
// bound would lose digits as a float64).
func schemaObject(schema json.RawMessage) (map[string]any, bool) {
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	var s map[string]any
	if dec.Decode(&s) != nil || s == nil {
		return nil, false
	}
	return s, true
}

func hasType(t any, want string) bool {
	switch v := t.(type) {
	case string:
		return v == want
	case []any:
		for _, e := range v {
			if e == want {
				return true
			}
		}
	}
	return false
}

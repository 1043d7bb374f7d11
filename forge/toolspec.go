package forge

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/artifactforge/forge/registry"
)

// ToolSpec is one method as a tool an agent's model can choose and call: every declared method of
// every role (a method not generated yet is generated on its first call), and the persisted
// methods of roles that declare none. Name, Description and the schemas come from the contract
// (and the declared signature) only, so they are byte-identical across regenerations; what
// changes with the artifact (Lifecycle, Generation) is apart, for MCP's _meta.
type ToolSpec struct {
	Name        string          `json:"name"` // role__method
	Role        string          `json:"role"`
	Method      string          `json:"method"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	// ResultSchema is the JSON Schema of the method's value: the role's deliverable, else the
	// declared signature's result type; nil when unknown.
	ResultSchema json.RawMessage `json:"result_schema,omitempty"`
	// Hints from the role's capabilities: no HTTP and no delegation is read-only; read-only
	// without clock or randomness is idempotent; HTTP is the open world.
	ReadOnly   bool `json:"read_only"`
	Idempotent bool `json:"idempotent"`
	OpenWorld  bool `json:"open_world"`
	// Destructive: it may change the open world (HTTP, not read-only). Every listing (MCP
	// tools/list, ToolsAs) says this one.
	Destructive bool `json:"destructive"`

	// Lifecycle and Generation are the current artifact's ("" and 0: not generated yet).
	Lifecycle  string `json:"lifecycle,omitempty"`
	Generation int    `json:"generation,omitempty"`
}

// ToolName is the tool of role.method: role__method.
func ToolName(role, method string) string { return role + "__" + method }

// ToolSpecs are the tools of role's methods (every role's when role is ""), sorted by name.
func (f *Forge) ToolSpecs(role string) ([]ToolSpec, error) {
	st := f.store
	var roles []*registry.RoleRecord
	if role != "" {
		rec, err := st.Role(role)
		if err != nil {
			return nil, err
		}
		roles = []*registry.RoleRecord{rec}
	} else {
		var err error
		if roles, err = st.Roles(); err != nil {
			return nil, err
		}
	}
	sums, err := st.Summaries()
	if err != nil {
		return nil, err
	}
	return buildToolSpecs(roles, sums, f.decls.parse), nil
}

// declSchemas memoizes the schemas of declared signatures (ToolSpecs runs on every tool-list
// sync; parsing a thousand declarations each time cost most of it).
type declSchemas struct {
	mu sync.Mutex
	m  map[string]declSchema
}

type declSchema struct {
	params, result json.RawMessage
	err            error
}

// maxDeclSchemas bounds the memo; past it, it starts afresh.
const maxDeclSchemas = 1 << 14

func (d *declSchemas) parse(decl string) (params, result json.RawMessage, err error) {
	d.mu.Lock()
	e, ok := d.m[decl]
	d.mu.Unlock()
	if ok {
		return e.params, e.result, e.err
	}
	params, result, err = parseDeclSchemas(decl)
	d.mu.Lock()
	if d.m == nil || len(d.m) >= maxDeclSchemas {
		d.m = map[string]declSchema{}
	}
	d.m[decl] = declSchema{params, result, err}
	d.mu.Unlock()
	return params, result, err
}

func parseDeclSchemas(decl string) (params, result json.RawMessage, err error) {
	sig, err := registry.ParseDecl(decl)
	if err != nil {
		return nil, nil, err
	}
	return sig.ParamsSchema, sig.ResultSchema, nil
}

// BuildToolSpecs are the tools of roles given the store's summaries (a pure function of both).
func BuildToolSpecs(roles []*registry.RoleRecord, sums []registry.Summary) []ToolSpec {
	return buildToolSpecs(roles, sums, parseDeclSchemas)
}

func buildToolSpecs(roles []*registry.RoleRecord, sums []registry.Summary, parse func(string) (json.RawMessage, json.RawMessage, error)) []ToolSpec {
	byKey := map[registry.Key]*registry.Summary{}
	for i := range sums {
		if sums[i].Err == nil {
			byKey[sums[i].Key()] = &sums[i]
		}
	}
	var out []ToolSpec
	for _, rec := range roles {
		methods := make([]string, 0, len(rec.Methods))
		for m := range rec.Methods {
			methods = append(methods, m)
		}
		if len(methods) == 0 {
			// A role that declares no methods: its persisted, healthy, current ones.
			for i := range sums {
				sm := &sums[i]
				if sm.Err == nil && sm.Role == rec.Role && ContractCurrent(rec, sm.ContractFingerprint) &&
					(sm.Lifecycle == registry.Durable || sm.Lifecycle == registry.Blessed) {
					methods = append(methods, sm.Method)
				}
			}
		}
		sort.Strings(methods)
		for _, m := range methods {
			out = append(out, toolSpec(rec, m, byKey[registry.Key{Role: rec.Role, Method: m}], parse))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// toolSpec is role rec's method m as a tool; sm is its artifact's summary (nil: none yet).
func toolSpec(rec *registry.RoleRecord, m string, sm *registry.Summary, parse func(string) (json.RawMessage, json.RawMessage, error)) ToolSpec {
	t := ToolSpec{Name: ToolName(rec.Role, m), Role: rec.Role, Method: m}
	doc := rec.Docs[m]
	decl := rec.Methods[m]
	var params json.RawMessage
	if decl != "" {
		if p, r, err := parse(decl); err == nil {
			params, t.ResultSchema = p, r
		}
	} else if sm != nil && ContractCurrent(rec, sm.ContractFingerprint) {
		decl, params = sm.Decl, sm.ParamsSchema // undeclared: the persisted code's own
	}
	if len(rec.Deliverable) > 0 {
		t.ResultSchema = rec.Deliverable
	}
	// An agent's text reaches other agents' models here: marked as its, and bounded (a role
	// stored before DefineRole bounded it is cut to the same bounds).
	text, paramText, examples := func(s string) string { return s }, doc.Params, doc.Examples
	var d strings.Builder
	if rec.AgentDefined {
		d.WriteString(agentMark(rec))
		text = func(s string) string { return clip(s, MaxAgentText) }
		if len(paramText) > 0 {
			paramText = make(map[string]string, len(doc.Params))
			for p, s := range doc.Params {
				paramText[p] = clip(s, MaxAgentParamText)
			}
		}
		examples = examples[:min(len(examples), MaxAgentExamples)]
	}
	t.InputSchema = describeParams(params, paramText)

	if doc.Description != "" {
		d.WriteString(text(strings.TrimSpace(doc.Description)))
		d.WriteString(" ")
	}
	purpose := text(strings.TrimSpace(rec.Purpose))
	if !strings.HasSuffix(purpose, ".") && !strings.HasSuffix(purpose, "!") && !strings.HasSuffix(purpose, "?") {
		purpose += "."
	}
	fmt.Fprintf(&d, "Method %s of role %s: %s", m, rec.Role, purpose)
	if decl != "" {
		fmt.Fprintf(&d, " Go signature: %s.", decl)
	}
	for _, ex := range examples {
		s := exampleText(ex)
		if rec.AgentDefined {
			s = clip(s, MaxAgentParamText)
		}
		fmt.Fprintf(&d, " Example: %s.", s)
	}
	t.Description = d.String()

	caps := rec.Capabilities
	if caps == nil {
		caps = &registry.Capabilities{}
	}
	t.OpenWorld = caps.HTTP != nil
	t.ReadOnly = caps.HTTP == nil && !caps.Call
	t.Idempotent = t.ReadOnly && !caps.Now && !caps.Rand
	t.Destructive = !t.ReadOnly && t.OpenWorld
	if sm != nil {
		t.Lifecycle, t.Generation = string(sm.Lifecycle), sm.Generation
	}
	return t
}

// describeParams is the args schema params with each parameter's description from the docs;
// an object schema of any args when params is not one.
func describeParams(params json.RawMessage, docs map[string]string) json.RawMessage {
	if len(docs) == 0 && len(params) > 0 && json.Valid(params) {
		return params // nothing to add: as the signature has it
	}
	s, ok := schemaObject(params)
	if !ok || s["type"] != "object" {
		return json.RawMessage(`{"type":"object"}`)
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for name, text := range docs {
			if p, ok := props[name].(map[string]any); ok {
				p["description"] = text
			}
		}
	}
	b, err := json.Marshal(s) // map keys sorted: the same bytes every time
	if err != nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	return b
}

func compactJSON(b json.RawMessage) string {
	out, err := registry.CanonicalJSON(b)
	if err != nil {
		return string(b)
	}
	return string(out)
}

// NoSuchTool says what a client that asked for tool name, which no listing has, should do next:
// the role's methods when name is role__method of a role that declares others, how roles come
// to be when there is no such role, the listing otherwise. mayCall says which roles the client
// may call (nil: every role): of another role it learns nothing, not even that it exists.
func (f *Forge) NoSuchTool(name string, mayCall func(role string) bool) string {
	const list = "tools/list lists every tool"
	role, method, ok := strings.Cut(name, "__")
	if !ok || registry.ValidateName("role", role) != nil || registry.ValidateName("method", method) != nil {
		return fmt.Sprintf("no tool %q: the tools are forge's own (forge_call, forge_roles, ...) and one ROLE__METHOD per declared method of a role; %s", registry.EchoedName(name), list)
	}
	if mayCall != nil && !mayCall(role) { // whether the role exists is not this client's to know
		return fmt.Sprintf("no tool %q: %s", name, list)
	}
	rec, err := f.store.Role(role)
	if err != nil {
		return fmt.Sprintf("no tool %q: there is no role %s; define it with forge_define_role (when the server allows it), or have the operator add it with `forge role add`; %s", name, role, list)
	}
	if len(rec.Methods) == 0 {
		return fmt.Sprintf("no tool %q: role %s declares no methods; call forge_call with role %q and method %q (its first call writes the method), or %s", name, role, role, method, list)
	}
	tools := make([]string, 0, len(rec.Methods))
	for m := range rec.Methods {
		tools = append(tools, ToolName(role, m))
	}
	sort.Strings(tools)
	return fmt.Sprintf("no tool %q: role %s declares no method %s; its tools are %s (a new method goes into its contract: forge_define_role, or `forge role add`); %s", name, role, method, strings.Join(tools, ", "), list)
}

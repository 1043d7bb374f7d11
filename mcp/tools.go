package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/registry"
)

// The per-method tools: one per declared method of every role (forge.ToolSpecs), whether its
// code exists yet or not (its first call generates it, as forge_call does). What a client is told
// of a tool — name, description, input and output schemas, annotations — comes from the contract
// alone and is byte-identical across regenerations; the tool is re-added (and
// notifications/tools/list_changed sent) only when that changes. The artifact's lifecycle and
// generation are in the tool's _meta (MetaLifecycle, MetaGeneration), filled in when the list is
// read, so they are current without a list_changed for every generation.

// _meta keys of a method tool.
const (
	MetaLifecycle  = "forge/lifecycle"  // durable, blessed, candidate, ...; "none" before the first call
	MetaGeneration = "forge/generation" // the current generation; 0 before the first call
	MetaRole       = "forge/role"
	MetaMethod     = "forge/method"
)

// toolState is what a method tool was built from.
type toolState struct {
	key  registry.Key
	told told // what clients are told (without _meta)
	def  *sdk.Tool
}

// told is what a method tool tells clients, comparable.
type told struct {
	description, input, output                string
	readOnly, idempotent, openWorld, destruct bool
}

// same reports whether a and b tell clients the same.
func (a toolState) same(b toolState) bool { return a.key == b.key && a.told == b.told }

// methodTool is spec as an MCP tool (without _meta).
func methodTool(spec forge.ToolSpec) *sdk.Tool {
	openWorld, destructive := spec.OpenWorld, spec.Destructive
	return &sdk.Tool{Name: spec.Name, Description: spec.Description, InputSchema: spec.InputSchema,
		OutputSchema: forge.OutcomeSchema(spec.ResultSchema),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: spec.ReadOnly, IdempotentHint: spec.Idempotent,
			OpenWorldHint: &openWorld, DestructiveHint: &destructive}}
}

// wantTools is the per-method tools the store calls for, by tool name.
func (s *Server) wantTools() (map[string]toolState, error) {
	specs, err := s.f.ToolSpecs("")
	if err != nil {
		return nil, err
	}
	return toolStates(specs), nil
}

func toolStates(specs []forge.ToolSpec) map[string]toolState {
	want := make(map[string]toolState, len(specs))
	for _, spec := range specs {
		t := methodTool(spec)
		a := t.Annotations
		want[spec.Name] = toolState{key: registry.Key{Role: spec.Role, Method: spec.Method}, def: t,
			told: told{t.Description, string(spec.InputSchema), string(t.OutputSchema.(json.RawMessage)), a.ReadOnlyHint, a.IdempotentHint, *a.OpenWorldHint, *a.DestructiveHint}}
	}
	return want
}

// Sync makes the per-method tools match the store's contracts. Changes notify clients
// (tools/list_changed).
func (s *Server) Sync() error {
	want, err := s.wantTools()
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var gone []string
	for name := range s.methods {
		if _, ok := want[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		sort.Strings(gone)
		s.srv.RemoveTools(gone...)
		for _, n := range gone {
			delete(s.methods, n)
		}
	}
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		ts := want[name]
		if cur, ok := s.methods[name]; ok && cur.same(ts) {
			continue
		}
		s.methods[name] = ts
		k := ts.key
		s.srv.AddTool(ts.def, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return s.callMethod(ctx, req, k.Role, k.Method, req.Params.Arguments), nil
		})
	}
	return nil
}

// toolsListMeta fills in the method tools' _meta (lifecycle and generation, as they are now)
// in a tools/list result: copies, so the tools the server holds stay as they were added. A client
// of some roles is listed only their methods' tools (as forge_roles and the role resources hold
// the other roles from it).
func (s *Server) toolsListMeta(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		lr, ok := res.(*sdk.ListToolsResult)
		if err != nil || method != "tools/list" || !ok {
			return res, err
		}
		s.mu.Lock()
		keys := make(map[string]registry.Key, len(s.methods))
		for n, ts := range s.methods {
			keys[n] = ts.key
		}
		s.mu.Unlock()
		sums, serr := s.f.Store().Summaries()
		current := map[registry.Key]*registry.Summary{}
		if serr == nil {
			for i := range sums {
				if sums[i].Err == nil {
					current[sums[i].Key()] = &sums[i]
				}
			}
		}
		ti := tokenOf(req)
		out := *lr
		out.Tools = make([]*sdk.Tool, 0, len(lr.Tools))
		for _, t := range lr.Tools {
			k, isMethod := keys[t.Name]
			if !isMethod {
				out.Tools = append(out.Tools, t)
				continue
			}
			if !mayCall(ti, k.Role) {
				continue
			}
			c := *t
			c.Meta = sdk.Meta{MetaRole: k.Role, MetaMethod: k.Method, MetaLifecycle: "none", MetaGeneration: 0}
			if sm := current[k]; sm != nil {
				c.Meta[MetaLifecycle], c.Meta[MetaGeneration] = string(sm.Lifecycle), sm.Generation
			}
			out.Tools = append(out.Tools, &c)
		}
		return &out, nil
	}
}

// noSuchTool: the SDK answers a tools/call of a name it has no tool for with only `unknown tool
// "x"`; forge says what to call instead (Forge.NoSuchTool).
func (s *Server) noSuchTool(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		var je *jsonrpc.Error
		cr, ok := req.(*sdk.CallToolRequest)
		if err == nil || !ok || cr.Params == nil || !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.HasPrefix(je.Message, "unknown tool") {
			return res, err
		}
		return res, &jsonrpc.Error{Code: je.Code, Message: s.f.NoSuchTool(cr.Params.Name, func(role string) bool { return mayCall(tokenOf(req), role) })}
	}
}

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/sandbox"
)

// Scopes of a client identity's TokenInfo for role definitions (server.Clients.MCP): the client's
// define_roles and redefine_roles.
const (
	DefineScope   = "forge:define_roles"
	RedefineScope = "forge:redefine_roles"
)

// contractSchema is the input schema of forge_define_role and forge_check_contract: a contract
// object, as in a contract file. Its sandbox names are the backends registered in this program
// that an agent may name: not one the operator must opt into (forge refuses it an agent's role).
func contractSchema() json.RawMessage {
	names := []string{""}
	for _, b := range sandbox.Backends() {
		if !b.OptIn {
			names = append(names, b.Name)
		}
	}
	sandboxes, _ := json.Marshal(names)
	return json.RawMessage(`{"type":"object","required":["role","purpose"],"properties":{` +
		`"role":{"type":"string","description":"the role's name: lower-case letters, digits and _ (e.g. text)"},` +
		`"purpose":{"type":"string","description":"what the role's methods are for, in a sentence: the code generator writes from it"},` +
		`"methods":{"type":"object","additionalProperties":{"type":"string"},"description":"method name -> Go signature, e.g. {\"word_count\": \"func WordCount(s string) int\"}; each becomes a tool at once"},` +
		`"docs":{"type":"object","description":"method name -> {description, params: {name: description}, examples: [{args, result}]}: what an agent is told of the tool","additionalProperties":{"type":"object","properties":{` +
		`"description":{"type":"string"},"params":{"type":"object","additionalProperties":{"type":"string"}},"examples":{"type":"array","items":{"type":"object","properties":{"args":{},"result":{}}}}}}},` +
		`"deliverable":{"type":"object","description":"JSON Schema every result must satisfy"},` +
		`"acceptance":{"type":"object","description":"examples [{method, args, expect | expect_error}] and Go tests the code must pass before it is kept"},` +
		`"capabilities":{"type":"object","description":"what the code may use: http {allow: [hosts]}, log, now, rand, call"},` +
		`"sandbox":{"type":"string","enum":` + string(sandboxes) + `,"description":"where the code runs: leave it out for the server's default; one that does not contain hostile code on its own (yaegi) needs limits.isolation \"process\""},` +
		`"limits":{"type":"object","description":"timeout, memory, output, max_depth, max_call_depth, isolation, instance"},` +
		`"failure_policy":{"type":"object"}}}`)
}

// definePolicy is the policy of the request's client: the server's switches, narrowed by the
// client's identity when it has one (over HTTP with client identities).
func (s *Server) definePolicy(req *sdk.CallToolRequest) forge.DefinePolicy {
	if req == nil || req.Extra == nil || req.Extra.TokenInfo == nil {
		return s.o.DefineRoles.For(nil)
	}
	sc := req.Extra.TokenInfo.Scopes
	return s.o.DefineRoles.For(&forge.DefineSwitches{Allow: slices.Contains(sc, DefineScope), Redefine: slices.Contains(sc, RedefineScope)})
}

func (s *Server) addDefineTools() {
	define := func(dryRun bool) sdk.ToolHandler {
		return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			args := req.Params.Arguments
			if len(args) == 0 || string(args) == "null" {
				args = json.RawMessage(`{}`)
			}
			res, err := s.f.DefineRole(clientCtx(ctx, req), args, s.definePolicy(req), dryRun) // its client and the roles it may define
			if err == nil && !dryRun {
				err = s.Sync() // its methods are tools now: list_changed before this answer
			}
			r := jsonResult(res)
			if err != nil {
				class := "caller"
				if !errors.Is(err, forge.ErrDefineRefused) && !errors.Is(err, registry.ErrInvalidContract) {
					class = "extrinsic"
				}
				r.IsError = true
				r.StructuredContent = map[string]any{"ok": false, "role": res.Role, "problems": res.Problems,
					"error": map[string]string{"class": class, "message": err.Error()}}
				r.Content = []sdk.Content{&sdk.TextContent{Text: class + " failure: " + err.Error()}}
			}
			return r, nil
		}
	}
	s.srv.AddTool(&sdk.Tool{Name: "forge_define_role", InputSchema: contractSchema(),
		Description: "Define a role (or change one you defined): the arguments are its contract, as in a contract file. " +
			"Every problem is reported before anything is written; once defined, each declared method is a tool (role__method) " +
			"whose first call writes its code from the contract. Needs the server's permission (--allow-define-roles)."},
		define(false))
	s.srv.AddTool(&sdk.Tool{Name: "forge_check_contract", InputSchema: contractSchema(),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
		Description: "Check a role contract without writing it or paying a model: every problem forge_define_role would refuse it for " +
			"(unknown fields or capabilities, a signature that declares another function than the method's, acceptance examples that do not fit the signature or the deliverable, limits over the operator's maxima)."},
		define(true))
}

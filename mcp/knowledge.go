package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/registry"
)

// Knowledge as tools (issue 24 item 5): forge_recall, forge_record and forge_confirm, thin over
// forge.Forge.Recall, Record and Confirm. The session's client (its TokenInfo over streamable HTTP
// with client identities) is the provenance of what it records, and the roles its scopes name are
// the roles whose prompts its lessons may reach; over stdio the process is one client of every
// role.

var (
	recallSchema = json.RawMessage(`{"type":"object","properties":{` +
		`"query":{"type":"string","description":"what the lessons should be about (words of the task, an error, a role)"},` +
		`"domain":{"type":"string","description":"a role's name, or \"forge\" for lessons about the sandbox; empty: every domain you may read"},` +
		`"min_confidence":{"type":"number","minimum":0,"maximum":1,"description":"leave out lessons below this confidence"},` +
		`"limit":{"type":"integer","minimum":1,"maximum":100,"description":"at most this many lessons (default 8)"}},"required":["query"]}`)
	recordSchema = json.RawMessage(`{"type":"object","properties":{` +
		`"content":{"type":"string","description":"the lesson itself, one or two sentences"},` +
		`"reasoning":{"type":"string","description":"why it is true"},` +
		`"category":{"type":"string","enum":["fact","preference","pattern","correction"],"description":"default pattern"},` +
		`"domain":{"type":"string","description":"a role you may call (the lesson reaches that role's prompts), or \"forge\" (it reaches the prompts of the roles you may call)"}},` +
		`"required":["content","domain"]}`)
	confirmSchema = json.RawMessage(`{"type":"object","properties":{` +
		`"domain":{"type":"string","description":"the lesson's domain"},` +
		`"content":{"type":"string","description":"the lesson's content as recalled (any case)"}},"required":["domain","content"]}`)
)

// clientCtx is the tool call's context naming its client and the roles it may call (every
// role when the session has no TokenInfo).
func clientCtx(ctx context.Context, req *sdk.CallToolRequest) context.Context {
	if req == nil || req.Extra == nil || req.Extra.TokenInfo == nil {
		return ctx
	}
	ti := req.Extra.TokenInfo
	var roles []string
	for _, sc := range ti.Scopes {
		if r, ok := strings.CutPrefix(sc, RoleScope("")); ok {
			roles = append(roles, r)
		}
	}
	return forge.WithClientRoles(forge.WithClient(ctx, ti.UserID), roles)
}

// decodeInto reads a tool's arguments into v.
func decodeInto(req *sdk.CallToolRequest, v any) error {
	if len(req.Params.Arguments) == 0 {
		return errors.New("arguments: an object is required")
	}
	dec := json.NewDecoder(strings.NewReader(string(req.Params.Arguments)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("arguments: %s", registry.JSONErrText(err))
	}
	return nil
}

// knowledgeResult is a tool result for a knowledge request: its value, or its error (a caller
// error for a refused or invalid request).
func knowledgeResult(v any, err error) *sdk.CallToolResult {
	var ke *forge.KnowledgeError
	if errors.As(err, &ke) {
		return &sdk.CallToolResult{IsError: true, StructuredContent: map[string]any{"ok": false, "error": map[string]string{"class": "caller", "kind": ke.Kind, "message": ke.Msg}},
			Content: []sdk.Content{&sdk.TextContent{Text: "caller failure: " + ke.Msg}}}
	}
	if err != nil {
		return errResult(err)
	}
	return jsonResult(v)
}

func (s *Server) addKnowledgeTools() {
	s.srv.AddTool(&sdk.Tool{Name: "forge_recall", InputSchema: recallSchema,
		Description: "Recall the lessons this forge keeps (what earlier generations and agents learned) that match a query: content, reasoning, confidence and provenance. Recalling confirms nothing: call forge_confirm for a lesson that helped."},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var q forge.RecallRequest
			if err := decodeInto(req, &q); err != nil {
				return errResult(err), nil
			}
			ls, err := s.f.Recall(clientCtx(ctx, req), q)
			if ls == nil {
				ls = []forge.Lesson{}
			}
			return knowledgeResult(map[string]any{"ok": true, "lessons": ls}, err), nil
		})
	s.srv.AddTool(&sdk.Tool{Name: "forge_record", InputSchema: recordSchema,
		Description: "Record a lesson you learned, under your client's name. It is offered, quoted as your note, to the generation prompts of the roles you may call (a role's domain: that role only)."},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var r forge.RecordRequest
			if err := decodeInto(req, &r); err != nil {
				return errResult(err), nil
			}
			l, created, err := s.f.Record(clientCtx(ctx, req), r)
			return knowledgeResult(map[string]any{"ok": true, "created": created, "lesson": l}, err), nil
		})
	s.srv.AddTool(&sdk.Tool{Name: "forge_confirm", InputSchema: confirmSchema,
		Description: "Say that a recalled lesson helped: its confidence rises by 0.1 (up to 1.0)."},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var r struct {
				Domain  string `json:"domain"`
				Content string `json:"content"`
			}
			if err := decodeInto(req, &r); err != nil {
				return errResult(err), nil
			}
			l, err := s.f.Confirm(clientCtx(ctx, req), r.Domain, r.Content)
			return knowledgeResult(map[string]any{"ok": true, "lesson": l}, err), nil
		})
}

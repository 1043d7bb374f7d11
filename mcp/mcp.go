// Package mcp is forge's Model Context Protocol server (the official Go SDK), a thin edge over
// package forge for agents: every declared method of every role is a tool of its own, named
// role__method (forge.ToolSpecs: described by its contract's docs, with an inputSchema from its
// declared signature, an outputSchema from its result and annotations from its capabilities;
// its lifecycle in _meta, never in the description), whether or not its code exists yet — the
// first call generates it, as forge_call does for any method; forge_define_role defines a role
// when the server allows it (Options.DefineRoles) and forge_check_contract checks one;
// forge_roles, forge_artifacts and forge_stats read the store; forge_recall, forge_record and
// forge_confirm share lessons (knowledge.go); with Options.OperatorVerbs,
// forge_bless, forge_quarantine, forge_rollback and forge_regen change it. Tool results carry the
// Outcome as structured content, and isError with its class and rule on failure. When the tool
// set or a tool's schema changes (a role defined here or in any process, in watch mode), clients
// receive notifications/tools/list_changed. Serve it over stdio (`forge mcp`) or streamable HTTP
// (`forge serve`, at /mcp; there a plain tool call on a live session is answered in front of the
// SDK, with the answer the SDK would give as a JSON body: fastcall.go).
package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/registry"
)

// Options configure the MCP server.
type Options struct {
	// Version is reported to clients as the server's version.
	Version string
	// OperatorVerbs adds the tools that change artifacts (bless, quarantine, rollback, regen) and
	// those that replay the sample of real calls (replay, diff).
	OperatorVerbs bool
	// DefineRoles are the server's switches for forge_define_role (off unless Allow); where
	// clients have identities, theirs narrow them (scopes DefineScope, RedefineScope).
	DefineRoles forge.DefineSwitches
	// CallTimeout bounds each tool call that runs code (a method, forge_call, the operator
	// verbs: a generation, a replay of a whole sample), as --call-timeout bounds /v1/call; zero:
	// no bound beyond each run's own deadline and the client's cancellation.
	CallTimeout time.Duration
	// MaxSessions bounds the streamable HTTP sessions held at once (DefaultMaxSessions; negative:
	// no bound): an initialize past it ends the session used least recently, whose client's next
	// request gets 404 and initializes again.
	MaxSessions int
}

// DefaultMaxSessions is Options.MaxSessions when it is zero (about 22 KB and two goroutines each).
const DefaultMaxSessions = 1024

// ToolName is the tool of role.method.
func ToolName(role, method string) string { return forge.ToolName(role, method) }

// Server is forge's MCP server. Its tool list follows the store.
type Server struct {
	f   *forge.Forge
	o   Options
	srv *sdk.Server

	// sessionEpoch counts CloseSessions: the HTTP fast path answers no session opened before
	// the last one (fastcall.go).
	sessionEpoch atomic.Uint64

	mu      sync.Mutex
	methods map[string]toolState // tool name -> what it was built from
	sub     *forge.Subscription
	done    chan struct{}
}

// New builds the MCP server for f and starts following store changes (call f.Watch for changes
// made by other processes). Close stops following.
func New(f *forge.Forge, o Options) (*Server, error) {
	if o.Version == "" {
		o.Version = "dev"
	}
	s := &Server{f: f, o: o, methods: map[string]toolState{}, done: make(chan struct{})}
	s.srv = sdk.NewServer(&sdk.Implementation{Name: "forge", Version: o.Version},
		&sdk.ServerOptions{Instructions: "Forge runs role methods written, verified and persisted by a code generator. " +
			"Call a listed role__method tool (its first call writes its code; later calls run it with no model call), or forge_call for a method no contract declares. " +
			"Results carry ok, value, error {type, class, rule, message, retriable} and meta {program_source, provider_calls, ...}.",
			Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{ListChanged: true},
				Resources: &sdk.ResourceCapabilities{Subscribe: true}}, // resources.go
			// The SDK keeps the subscriptions; resources.go's notifications go to them.
			SubscribeHandler:   func(context.Context, *sdk.SubscribeRequest) error { return nil },
			UnsubscribeHandler: func(context.Context, *sdk.UnsubscribeRequest) error { return nil }})
	s.addFixedTools()
	s.addKnowledgeTools() // knowledge.go: forge_recall, forge_record, forge_confirm
	s.addDefineTools()
	s.addResources()
	s.srv.AddReceivingMiddleware(s.toolsListMeta, s.noSuchTool)
	if err := s.Sync(); err != nil {
		return nil, err
	}
	s.sub = f.Subscribe(forge.Filter{ChangesOnly: true})
	go s.follow()
	return s, nil
}

// SDK is the underlying SDK server (to run it on a transport).
func (s *Server) SDK() *sdk.Server { return s.srv }

// Run serves one session over t (e.g. &sdk.StdioTransport{}) until it ends or ctx is done.
func (s *Server) Run(ctx context.Context, t sdk.Transport) error { return s.srv.Run(ctx, t) }

// HTTPHandler is the streamable HTTP transport of this server (the SDK's, with a fast path for
// plain tool calls: fastcall.go).
func (s *Server) HTTPHandler() http.Handler { return newHTTPEdge(s) }

// CloseSessions ends every connected session (a graceful shutdown of `forge serve`: an HTTP
// client's open event stream would otherwise hold the shutdown until its timeout).
func (s *Server) CloseSessions() {
	s.sessionEpoch.Add(1)
	for ss := range s.srv.Sessions() {
		ss.Close()
	}
}

// Close stops following store changes.
func (s *Server) Close() {
	s.sub.Close()
	<-s.done
}

// follow re-syncs the tool list after artifact or role changes (bursts are coalesced).
func (s *Server) follow() {
	defer close(s.done)
	for e := range s.sub.C {
		// Drain what is already queued: one sync for a burst.
		updated := resourcesOf(&e)
		for n := len(s.sub.C); n > 0; n-- {
			e, ok := <-s.sub.C
			if !ok {
				break
			}
			updated = append(updated, resourcesOf(&e)...)
		}
		_ = s.Sync()
		slices.Sort(updated)
		for _, uri := range slices.Compact(updated) {
			_ = s.srv.ResourceUpdated(context.Background(), &sdk.ResourceUpdatedNotificationParams{URI: uri})
		}
	}
}

// Tools lists the per-method tools currently offered.
func (s *Server) Tools() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.methods))
	for n := range s.methods {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// outcomeResult is a tool result carrying the Outcome.
func outcomeResult(o forge.Outcome) *sdk.CallToolResult {
	r := &sdk.CallToolResult{StructuredContent: o, IsError: !o.OK}
	text := string(o.Value)
	if !o.OK && o.Err != nil {
		text = fmt.Sprintf("%s failure (%s, rule %s, retriable %v): %s", o.Err.Class, o.Err.Type, o.Err.Rule, o.Err.Retriable, o.Err.Message)
	}
	if text == "" {
		text = "null"
	}
	r.Content = []sdk.Content{&sdk.TextContent{Text: text}}
	return r
}

// jsonResult is a tool result carrying v.
func jsonResult(v any) *sdk.CallToolResult {
	b, err := json.Marshal(v)
	if err != nil {
		return errResult(err)
	}
	var sc any = v
	if len(b) == 0 || b[0] != '{' {
		sc = map[string]json.RawMessage{"items": b} // structured content must be an object
	}
	return &sdk.CallToolResult{StructuredContent: sc, Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}}
}

func errResult(err error) *sdk.CallToolResult {
	class := "caller"
	if !errors.Is(err, registry.ErrNotFound) && !errors.Is(err, registry.ErrInvalidName) && !strings.Contains(err.Error(), "quarantined") {
		class = "extrinsic"
	}
	return &sdk.CallToolResult{IsError: true, StructuredContent: map[string]any{"ok": false, "error": map[string]string{"class": class, "message": err.Error()}},
		Content: []sdk.Content{&sdk.TextContent{Text: class + " failure: " + err.Error()}}}
}

// Argument schemas of the fixed tools.
var (
	roleMethodSchema = json.RawMessage(`{"type":"object","properties":{"role":{"type":"string"},"method":{"type":"string"}},"required":["role","method"]}`)
	callSchema       = json.RawMessage(`{"type":"object","properties":{"role":{"type":"string","description":"a role from forge_roles"},` +
		`"method":{"type":"string","description":"the method to call; it is written from the role's contract if it does not exist yet"},` +
		`"args":{"type":"object","description":"the method's arguments by parameter name"}},"required":["role","method"]}`)
	rollbackSchema = json.RawMessage(`{"type":"object","properties":{"role":{"type":"string"},"method":{"type":"string"},"gen":{"type":"integer","description":"generation to restore (default: the one before the current)"},` + acceptChangesProp + `},"required":["role","method"]}`)
	statsSchema    = json.RawMessage(`{"type":"object","properties":{"since":{"type":"string","description":"only calls within this age, e.g. 24h or 7d"}}}`)
	emptySchema    = json.RawMessage(`{"type":"object"}`)
)

// acceptChangesProp is the accept_changes property of the tools that promote code.
const acceptChangesProp = `"accept_changes":{"type":"boolean","description":"promote the code even if it changes answers the current code gave to real calls"}`

var (
	regenSchema = json.RawMessage(`{"type":"object","properties":{"role":{"type":"string"},"method":{"type":"string"},` + acceptChangesProp + `},"required":["role","method"]}`)
	liftSchema  = regenSchema
)

type callArgs struct {
	Role   string          `json:"role"`
	Method string          `json:"method"`
	Args   json.RawMessage `json:"args"`
	Gen    int             `json:"gen"`
	From   int             `json:"from"` // forge_diff
	To     int             `json:"to"`
	Since  string          `json:"since"`
	// AcceptChanges: forge_regen promotes code that changes sampled answers (safe regeneration).
	AcceptChanges bool `json:"accept_changes"`
}

func decodeArgs(req *sdk.CallToolRequest) (callArgs, error) {
	var a callArgs
	if len(req.Params.Arguments) > 0 {
		if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
			return a, fmt.Errorf("arguments: %w", err)
		}
	}
	return a, nil
}

// forgeCall is forge_call's handler.
func (s *Server) forgeCall(ctx context.Context, req *sdk.CallToolRequest) *sdk.CallToolResult {
	if role, method, args, ok := plainCallArgs(req.Params.Arguments); ok {
		return s.callMethod(ctx, req, role, method, args)
	}
	a, err := decodeArgs(req)
	if err != nil {
		return errResult(err)
	}
	return s.callMethod(ctx, req, a.Role, a.Method, a.Args)
}

// plainCallArgs reads forge_call's arguments without decoding them when they are plainly what
// decodeArgs would read the same way: an object of role and method (strings with no escape) and
// args, nothing else; false sends them to decodeArgs.
func plainCallArgs(arguments json.RawMessage) (role, method string, args json.RawMessage, ok bool) {
	if !json.Valid(arguments) {
		return "", "", nil, false
	}
	m, ok := members(arguments, "role", "method", "args")
	if !ok {
		return "", "", nil, false
	}
	plain := func(v []byte) (string, bool) {
		if len(v) < 2 || v[0] != '"' || bytes.IndexByte(v, '\\') >= 0 || !utf8.Valid(v) {
			return "", false
		}
		return string(v[1 : len(v)-1]), true
	}
	role, rok := plain(m[0])
	method, mok := plain(m[1])
	return role, method, m[2], rok && mok
}

// callMethod is the handler of role.method's tool with the method's args: req's client calls it,
// with req's progress notifications.
func (s *Server) callMethod(ctx context.Context, req *sdk.CallToolRequest, role, method string, args json.RawMessage) *sdk.CallToolResult {
	ctx, refused := asClient(ctx, req, role)
	if refused != nil {
		return refused
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	return s.callWithProgress(ctx, req, role, method, args)
}

func (s *Server) addFixedTools() {
	s.srv.AddTool(&sdk.Tool{Name: "forge_call", InputSchema: callSchema,
		Description: "Call role.method with args. A method that does not exist yet is written from the role's contract, verified and persisted (provider calls); a persisted one runs with none."},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return s.forgeCall(ctx, req), nil
		})
	s.srv.AddTool(&sdk.Tool{Name: "forge_roles", InputSchema: emptySchema, Description: "List the role contracts: purpose, methods and their signatures."},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			if _, refused := asClient(ctx, req, "*"); refused != nil {
				return refused, nil
			}
			roles, err := s.f.Store().Roles()
			if err != nil {
				return errResult(err), nil
			}
			type row struct {
				Role    string            `json:"role"`
				Purpose string            `json:"purpose"`
				Methods map[string]string `json:"methods,omitempty"`
			}
			out := make([]row, 0, len(roles))
			for _, r := range roles {
				out = append(out, row{r.Role, r.Purpose, r.Methods})
			}
			return jsonResult(map[string]any{"roles": out}), nil
		})
	s.srv.AddTool(&sdk.Tool{Name: "forge_artifacts", InputSchema: emptySchema, Description: "List the persisted methods with their lifecycle and generation."},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			if _, refused := asClient(ctx, req, "*"); refused != nil {
				return refused, nil
			}
			type row struct {
				Role       string `json:"role"`
				Method     string `json:"method"`
				Lifecycle  string `json:"lifecycle,omitempty"`
				Generation int    `json:"generation,omitempty"`
				Error      string `json:"error,omitempty"`
			}
			ls, err := forge.List(s.f.Store()) // the listing of forge ls and /v1/artifacts
			if err != nil {
				return errResult(err), nil
			}
			rows := make([]row, 0, len(ls))
			for _, l := range ls {
				switch {
				case l.Quarantine != nil:
					rows = append(rows, row{Role: l.Role, Method: l.Method, Lifecycle: string(registry.Quarantined), Error: l.Err.Error()})
				case l.Err != nil:
					rows = append(rows, row{Role: l.Role, Method: l.Method, Error: l.Err.Error()})
				default:
					rows = append(rows, row{l.Role, l.Method, string(l.Lifecycle), l.Generation, ""})
				}
			}
			return jsonResult(map[string]any{"artifacts": rows}), nil
		})
	s.srv.AddTool(&sdk.Tool{Name: "forge_stats", InputSchema: statsSchema, Description: "What reuse bought: calls, reuse hit rate, provider calls and tokens, repairs, failures, latency."},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			if _, refused := asClient(ctx, req, "*"); refused != nil {
				return refused, nil
			}
			a, err := decodeArgs(req)
			if err != nil {
				return errResult(err), nil
			}
			var since time.Time
			if a.Since != "" {
				d, err := forge.ParseAge(a.Since)
				if err != nil {
					return errResult(fmt.Errorf("since %v", err)), nil
				}
				since = time.Now().Add(-d)
			}
			st, err := s.f.Stats(since)
			if err != nil {
				return errResult(err), nil
			}
			return jsonResult(st), nil
		})
	if !s.o.OperatorVerbs {
		return
	}
	verb := func(name, desc string, schema json.RawMessage, fn func(ctx context.Context, a callArgs) (any, error)) {
		s.srv.AddTool(&sdk.Tool{Name: name, Description: desc, InputSchema: schema},
			func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				a, err := decodeArgs(req)
				if err != nil {
					return errResult(err), nil
				}
				pctx, end := withProgress(ctx, req) // forge_regen's generation steps
				if s.o.CallTimeout > 0 {
					var cancel context.CancelFunc
					pctx, cancel = context.WithTimeout(pctx, s.o.CallTimeout)
					defer cancel()
				}
				v, err := fn(pctx, a)
				end()
				if err != nil {
					return errResult(err), nil
				}
				if o, ok := v.(forge.Outcome); ok {
					return outcomeResult(o), nil
				}
				return jsonResult(v), nil
			})
	}
	loaded := func(a callArgs) (any, error) {
		art, err := s.f.Store().Load(a.Role, a.Method)
		if err != nil {
			return nil, err
		}
		return map[string]any{"ok": true, "role": a.Role, "method": a.Method, "lifecycle": art.Lifecycle, "generation": art.Generation}, nil
	}
	verb("forge_bless", "Pin role.method's current generation: always executed, never replaced automatically.", roleMethodSchema,
		func(ctx context.Context, a callArgs) (any, error) {
			if err := s.f.BlessContext(ctx, a.Role, a.Method, false); err != nil {
				return nil, err
			}
			return loaded(a)
		})
	verb("forge_quarantine", "Refuse role.method's artifact until it is rolled back or regenerated.", roleMethodSchema,
		func(ctx context.Context, a callArgs) (any, error) {
			if err := s.f.QuarantineContext(ctx, a.Role, a.Method); err != nil {
				return nil, err
			}
			return loaded(a)
		})
	verb("forge_rollback", "Make an earlier kept generation of role.method current again. Code that changes answers real calls got on a blessed artifact (or more than the threshold) is refused unless accept_changes is true.", rollbackSchema,
		func(ctx context.Context, a callArgs) (any, error) {
			if _, err := s.f.RollbackWith(ctx, a.Role, a.Method, a.Gen, forge.PromoteOptions{AcceptChanges: a.AcceptChanges}); err != nil {
				return nil, err
			}
			return loaded(a)
		})
	verb("forge_lift", "Lift an operator's quarantine of role.method once the gate has passed its current code again (the way back from a mistaken quarantine). Code that changes answers real calls got stays quarantined unless accept_changes is true.", liftSchema,
		func(ctx context.Context, a callArgs) (any, error) {
			return s.f.LiftQuarantineWith(ctx, a.Role, a.Method, forge.PromoteOptions{AcceptChanges: a.AcceptChanges}), nil
		})
	verb("forge_regen", "Write role.method's code again from its contract now (provider calls). New code that changes answers real calls got is refused (the answers are shown) unless accept_changes is true.", regenSchema,
		func(ctx context.Context, a callArgs) (any, error) {
			return s.f.RegenerateWith(ctx, a.Role, a.Method, forge.RegenOptions{AcceptChanges: a.AcceptChanges}), nil
		})
	s.addReplayTools(verb) // replay.go
}

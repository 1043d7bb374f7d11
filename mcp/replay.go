package mcp

import (
	"context"
	"encoding/json"
)

// Safe regeneration over MCP: forge_regen takes accept_changes (mcp.go); forge_replay and
// forge_diff replay an artifact's sample of real calls (forge.Forge.ReplaySample, Diff). They are
// operator tools (Options.OperatorVerbs) for the reasons the HTTP endpoints take the admin token:
// they run every sampled input for one request, and show inputs and answers other callers sent.

var (
	replaySchema = json.RawMessage(`{"type":"object","properties":{"role":{"type":"string"},"method":{"type":"string"},` +
		`"gen":{"type":"integer","description":"replay on this kept generation (default: the current one)"}},"required":["role","method"]}`)
	diffSchema = json.RawMessage(`{"type":"object","properties":{"role":{"type":"string"},"method":{"type":"string"},` +
		`"from":{"type":"integer","description":"kept generation to compare from (default: the one before to)"},` +
		`"to":{"type":"integer","description":"kept generation to compare to (default: the current one)"}},"required":["role","method"]}`)
)

type verbFunc func(name, desc string, schema json.RawMessage, fn func(ctx context.Context, a callArgs) (any, error))

func (s *Server) addReplayTools(verb verbFunc) {
	verb("forge_replay", "Replay role.method's sample of real calls (recent inputs with the answers the current generation gave) on a kept generation and report how far the answers agree, with each input whose answer differs. Nothing is stored.", replaySchema,
		func(ctx context.Context, a callArgs) (any, error) {
			r, err := s.f.ReplaySample(ctx, a.Role, a.Method, a.Gen)
			if err != nil {
				return nil, err
			}
			return r, nil
		})
	verb("forge_diff", "Compare two kept generations of role.method (default: the previous and the current one): the unified diff of their code, and their answers on the sample of real calls (same, changed, now_succeeds, now_fails, with both answers). Nothing is stored.", diffSchema,
		func(ctx context.Context, a callArgs) (any, error) {
			d, err := s.f.Diff(ctx, a.Role, a.Method, a.From, a.To)
			if err != nil {
				return nil, err
			}
			return d, nil
		})
}

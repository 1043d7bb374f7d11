package mcp

import (
	"context"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/artifactforge/forge/forge"
)

// withProgress makes a tool call that sent a progress token get a progress notification for each
// step of a generation the call leads (forge.WithProgress): what forge waits for (the model,
// attempt n of m), a re-ask after an answer failed verification, how it ended. Progress counts
// the steps; the total is unknown. The returned func ends the notifications: a generation goes on
// for the other callers after its leader gave up, and its steps are no longer this request's.
func withProgress(ctx context.Context, req *sdk.CallToolRequest) (context.Context, func()) {
	if req == nil || req.Params == nil || req.Session == nil {
		return ctx, func() {}
	}
	tok := req.Params.GetProgressToken()
	if tok == nil {
		return ctx, func() {}
	}
	var mu sync.Mutex
	n, ended := 0.0, false
	pctx := forge.WithProgress(ctx, func(g forge.GenerationStep) {
		mu.Lock()
		defer mu.Unlock()
		if ended {
			return
		}
		n++
		// A notification that cannot be sent (the client went away) changes nothing of the call.
		_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: n, Message: g.Message})
	})
	return pctx, func() {
		mu.Lock()
		defer mu.Unlock()
		ended = true
	}
}

// callWithProgress is s.f.Call with req's progress notifications.
func (s *Server) callWithProgress(ctx context.Context, req *sdk.CallToolRequest, role, method string, args []byte) *sdk.CallToolResult {
	pctx, end := withProgress(ctx, req)
	defer end()
	return outcomeResult(s.f.CallWithin(pctx, s.o.CallTimeout, role, method, args))
}

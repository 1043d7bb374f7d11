package forge

import "context"

type clientKey struct{}

// WithClient returns a context that names the client making the calls and operator actions made
// with it ("cli:alice", an HTTP or MCP client's name): operator actions record it in their event
// line (Event.Who).
func WithClient(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, clientKey{}, name)
}

// ClientFrom returns the client name WithClient put in ctx, or "".
func ClientFrom(ctx context.Context) string {
	if ctx == nil {
		return ""
	}
	s, _ := ctx.Value(clientKey{}).(string)
	return s
}

package forge

import "context"

// A client is who a call is made for: a name that `forge serve` gives each of its configured
// client identities (server.Clients), or any name an embedding program chooses. The forge keys
// its live programs by it: the interpreters, instances and worker processes that served one
// client's calls never serve another's, so package-level state one client's calls leave behind
// (a variable that keeps its last argument) never reaches another client (see RATIONALE,
// "Client identities"). Calls whose context names no client are the client "".
//
// The name travels in the call's context, so that every layer that handles the call (the call
// path, events, operator actions) reads the same one with ClientFrom.

type clientKey struct{}

// WithClient returns ctx naming client as the caller of the calls made with it. An empty name is
// the anonymous client (the one of callers that name none).
func WithClient(ctx context.Context, client string) context.Context {
	return context.WithValue(ctx, clientKey{}, client)
}

// ClientFrom returns the client ctx names (WithClient), or "" when it names none.
func ClientFrom(ctx context.Context) string {
	c, _ := ctx.Value(clientKey{}).(string)
	return c
}

package mcp

import (
	"context"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/artifactforge/forge/forge"
)

// Client identities over streamable HTTP: `forge serve --clients FILE` gives each request the
// client's auth.TokenInfo (server.Clients.MCP): its name as UserID, the roles it may call as
// scopes (RoleScope). A tool call then runs as that client (forge.WithClient: live programs of its
// own) and only on its roles. Over stdio, or over HTTP without clients, there is no TokenInfo and
// nothing is checked: the process or the server is one client.

// RoleScope is the scope that lets a client call role's methods ("*": every role's).
func RoleScope(role string) string { return "forge:role:" + role }

// mayCall reports whether the client ti names may call role ("*": every role); a request with no
// TokenInfo (stdio, HTTP without client identities) may call every role.
func mayCall(ti *auth.TokenInfo, role string) bool {
	return ti == nil || slices.Contains(ti.Scopes, RoleScope("*")) || (role != "*" && slices.Contains(ti.Scopes, RoleScope(role)))
}

// tokenOf is the TokenInfo of a request (nil: none).
func tokenOf(req sdk.Request) *auth.TokenInfo {
	if req == nil || req.GetExtra() == nil {
		return nil
	}
	return req.GetExtra().TokenInfo
}

// asClient returns ctx naming the request's client and nil when it may call role (every role, when
// role is "*": the listings), or the tool result that refuses the call.
func asClient(ctx context.Context, req *sdk.CallToolRequest, role string) (context.Context, *sdk.CallToolResult) {
	if req == nil || req.Extra == nil || req.Extra.TokenInfo == nil {
		return ctx, nil
	}
	ti := req.Extra.TokenInfo
	ctx = forge.WithClient(ctx, ti.UserID)
	if mayCall(ti, role) {
		return ctx, nil
	}
	if role == "*" {
		return ctx, errResult(fmt.Errorf("refused: client %s may call only some roles; the listings over every role need a client with roles \"*\"", ti.UserID))
	}
	return ctx, errResult(fmt.Errorf("refused: client %s may not call role %s; ask the operator to add the role to the client in the clients file", ti.UserID, role))
}

package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/mcp"
	"github.com/artifactforge/forge/registry"
)

// Role definitions over HTTP: POST /v1/roles (body: a contract, as in a contract file) defines a
// role, or changes one, through forge.DefineRole, under the server's switches
// (Options.DefineRoles, `--allow-define-roles`) narrowed by the client's identity (define_roles,
// redefine_roles) where clients are configured; ?dry_run=1 only checks it. GET /v1/roles/{role}
// returns it.

// defineScopes are the MCP scopes of a client's define switches (mcp.DefineScope, RedefineScope).
func defineScopes(d forge.DefineSwitches) []string {
	var out []string
	if d.Allow {
		out = append(out, mcp.DefineScope)
	}
	if d.Redefine {
		out = append(out, mcp.RedefineScope)
	}
	return out
}

// definePolicy is the policy of r's client.
func (s *Server) definePolicy(r *http.Request) forge.DefinePolicy {
	cs := s.o.Clients
	if cs == nil {
		return s.o.DefineRoles.For(nil)
	}
	if s.operator(r) {
		return s.o.DefineRoles.For(&forge.DefineSwitches{Allow: true, Redefine: true}) // the operator
	}
	var id forge.DefineSwitches
	if c := cs.Lookup(bearer(r)); c != nil {
		id = c.define
	}
	return s.o.DefineRoles.For(&id)
}

// defineResponse is POST /v1/roles' body: forge.DefineResult, and the error when refused.
type defineResponse struct {
	forge.DefineResult
	Error *struct {
		Type    string `json:"type"`
		Class   string `json:"class"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

func (s *Server) handleDefineRole(w http.ResponseWriter, r *http.Request) {
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	dryRun := r.URL.Query().Get("dry_run") == "1" || r.URL.Query().Get("dry_run") == "true"
	ctx, cancel := context.WithTimeout(s.clientCtx(r), s.o.CallTimeout)
	defer cancel()
	res, err := s.f.DefineRole(ctx, body, s.definePolicy(r), dryRun)
	out := defineResponse{DefineResult: res}
	status := http.StatusOK
	if err != nil {
		out.Error = &struct {
			Type    string `json:"type"`
			Class   string `json:"class"`
			Message string `json:"message"`
		}{"contract", "caller", err.Error()}
		switch {
		case errors.Is(err, registry.ErrInvalidContract):
			status = http.StatusBadRequest
		case errors.Is(err, forge.ErrDefineRefused):
			status, out.Error.Type = http.StatusForbidden, "refused"
		default:
			status, out.Error.Type, out.Error.Class = http.StatusInternalServerError, "store", "extrinsic"
		}
	}
	writeJSON(w, status, out)
}

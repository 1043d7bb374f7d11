package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/registry"
)

// Resources: forge://roles/{role} is a role's record (its contract, fingerprint, definer) as
// JSON; forge://code/{role}/{method} is the current code of a method (Go source; its generation,
// lifecycle and trigger in _meta). A client that subscribes to one gets
// notifications/resources/updated when it changes in any process (watch mode).

// Resource URI prefixes.
const (
	RolesURI = "forge://roles/"
	CodeURI  = "forge://code/"
)

func (s *Server) addResources() {
	s.srv.AddResourceTemplate(&sdk.ResourceTemplate{Name: "role", URITemplate: RolesURI + "{role}", MIMEType: "application/json",
		Description: "A role's contract as stored: purpose, methods and signatures, docs, acceptance, capabilities, limits; its fingerprint and who defined it."},
		s.readResource)
	s.srv.AddResourceTemplate(&sdk.ResourceTemplate{Name: "code", URITemplate: CodeURI + "{role}/{method}", MIMEType: "text/x-go",
		Description: "The current Go code of role.method (its generation, lifecycle and trigger in _meta); none before its first call."},
		s.readResource)
}

// resourceKey parses a resource URI: the role, and the method for code ("" for a role).
func resourceKey(uri string) (role, method string, ok bool) {
	if r, found := strings.CutPrefix(uri, RolesURI); found && r != "" && !strings.Contains(r, "/") {
		return r, "", true
	}
	if rest, found := strings.CutPrefix(uri, CodeURI); found {
		r, m, cut := strings.Cut(rest, "/")
		return r, m, cut && r != "" && m != "" && !strings.Contains(m, "/")
	}
	return "", "", false
}

func (s *Server) readResource(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	role, method, ok := resourceKey(uri)
	if !ok {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	if ti := req.Extra; ti != nil && ti.TokenInfo != nil {
		sc := ti.TokenInfo.Scopes
		if !slices.Contains(sc, RoleScope("*")) && !slices.Contains(sc, RoleScope(role)) {
			return nil, fmt.Errorf("refused: client %s may not read role %s; ask the operator to add the role to the client in the clients file", ti.TokenInfo.UserID, role)
		}
	}
	st := s.f.Store()
	if method == "" {
		rec, err := st.Role(role)
		if err != nil {
			return nil, notFound(uri, err)
		}
		b, err := json.MarshalIndent(rec, "", "  ")
		if err != nil {
			return nil, err
		}
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
	}
	a, err := st.Load(role, method)
	if err != nil {
		return nil, notFound(uri, err)
	}
	meta := sdk.Meta{MetaLifecycle: string(a.Lifecycle), MetaGeneration: a.Generation}
	if len(a.History) > 0 {
		meta["forge/trigger"] = a.History[0].Trigger
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "text/x-go", Text: a.Code, Meta: meta}}}, nil
}

func notFound(uri string, err error) error {
	if errors.Is(err, registry.ErrNotFound) || errors.Is(err, registry.ErrInvalidName) {
		return sdk.ResourceNotFoundError(uri)
	}
	return err
}

// resourcesOf are the URIs a live change touches.
func resourcesOf(e *forge.LiveEvent) []string {
	switch {
	case e.Artifact != nil:
		return []string{CodeURI + e.Artifact.Role + "/" + e.Artifact.Method}
	case e.Role != "":
		return []string{RolesURI + e.Role}
	}
	return nil
}

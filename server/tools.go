package server

import (
	"net/http"

	"github.com/artifactforge/forge/forge"
)

// GET /v1/tools?format=mcp|openai|anthropic&role=R: the methods as tool definitions for an agent
// loop (forge.ToolsAs); a tool call goes to POST /v1/call/{role}/{method} with its arguments.
func (s *Server) handleTools(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	specs, err := s.f.ToolSpecs(q.Get("role"))
	if err != nil {
		storeErr(w, err)
		return
	}
	v, err := forge.ToolsAs(specs, q.Get("format"))
	if err != nil {
		writeErr(w, http.StatusBadRequest, "args", "format="+q.Get("format")+": "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, v)
}

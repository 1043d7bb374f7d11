package main

import (
	"net/http"

	"github.com/artifactforge/forge/forge"
)

// mcpHTTPHandler is the MCP server over streamable HTTP (nil until the mcp package lands).
func mcpHTTPHandler(f *forge.Forge) http.Handler {
	return http.NotFoundHandler()
}

package main

// The binary ships every sandbox backend, provider and store backend; each registers itself.
import _ "github.com/artifactforge/forge/forge/all"

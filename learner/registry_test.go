package learner_test

import (
	"github.com/artifactforge/forge/learner"
	"github.com/artifactforge/forge/registry"
)

// learner.Docs and registry.Docs have the same method set: a store backend's Knowledge() is a
// learner.Docs, and learner.DirDocs is a registry.Docs (what `forge store migrate` copies between).
var (
	_ learner.Docs  = registry.Docs(nil)
	_ registry.Docs = learner.Docs(nil)
	_ registry.Docs = learner.DirDocs("", nil)
)

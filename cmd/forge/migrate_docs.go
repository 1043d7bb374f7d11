package main

import (
	"path/filepath"

	"github.com/artifactforge/forge/learner"
	"github.com/artifactforge/forge/registry"
)

// knowledgeOf is where b keeps its knowledge documents: b.Knowledge(), or, when that is nil (a
// directory store), the learner's files in LocalDir()/knowledge, with the store's quarantine.
func knowledgeOf(b registry.Backend) registry.Docs {
	if d := b.Knowledge(); d != nil {
		return d
	}
	var q func(string, error) string
	if m, ok := b.(registry.Maintainer); ok {
		q = func(path string, why error) string { return m.QuarantineFile(path, why).MovedTo }
	}
	return learner.DirDocs(filepath.Join(b.LocalDir(), learner.Dir), q)
}

// Package all imports the sandbox backends, code generators (providers) and store backends the
// forge binary ships, so that each registers itself. Package forge names none of them and links
// none: a program that uses the library imports forge plus this set (or the parts it wants):
//
//	import (
//		"github.com/artifactforge/forge/forge"
//		_ "github.com/artifactforge/forge/forge/all"
//	)
//
// A program that imports no backend gets forge.ErrNoSandbox from forge.Open, and one that
// imports no provider gets provider.ErrNotConfigured when code must be generated.
package all

import (
	// Sandbox backends: WebAssembly (the default where a Go toolchain is), the yaegi
	// interpreter (in-process for trusted code, or in worker processes) and native code in
	// locked-down worker processes (opt-in, Linux).
	_ "github.com/artifactforge/forge/sandbox/native"
	_ "github.com/artifactforge/forge/sandbox/wasm"
	_ "github.com/artifactforge/forge/sandbox/yaegi"

	// Code generators, chosen by --provider or $FORGE_PROVIDER.
	_ "github.com/artifactforge/forge/provider/anthropic"
	_ "github.com/artifactforge/forge/provider/command"
	_ "github.com/artifactforge/forge/provider/openai"
	_ "github.com/artifactforge/forge/provider/replay"

	// Store backends beyond the file store: a NATS JetStream fleet (nats://, tls://).
	_ "github.com/artifactforge/forge/registry/nats"
)

// Package forge is Forge's public API and call orchestrator.
//
// Call(ctx, role, method, args) runs a healthy persisted artifact in its sandbox with no provider
// call; otherwise it asks the code generator to write (or repair) the method from the role's
// contract, verifies the answer through the gate (parse, policy, compile, acceptance examples and
// tests, deliverable schema), persists it and runs it. Failures are classified; intrinsic and
// adaptive ones on a persisted artifact are repaired within a budget or regenerated; extrinsic
// ones never count against the artifact. Every call returns a tolerant Outcome and an event:
// live subscribers see each one; the log (events/forge.jsonl) keeps a line per generation,
// repair, failure and operator action, and folds warm successes into one aggregate line per
// artifact and second (Event, Options.EventsPerCall).
//
// This package owns every decision but links no particular sandbox backend, code generator or
// store backend: each registers itself from its package's init (sandbox.Register,
// provider.Register, registry.RegisterBackend) and describes itself there (name, prompt text,
// whether it contains hostile code, availability, cache maintenance). A program imports the set
// it ships; forge/all is the CLI's:
//
//	import (
//		"github.com/artifactforge/forge/forge"
//		_ "github.com/artifactforge/forge/forge/all"
//	)
//
// Without a backend, Open fails with ErrNoSandbox; without a provider, generation fails with
// provider.ErrNotConfigured and persisted artifacts still run.
package forge

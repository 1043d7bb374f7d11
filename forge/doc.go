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
package forge

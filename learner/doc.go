// Package learner is forge's durable memory: short lessons (entries) that outlive the process and
// are recalled into later prompts.
//
// Entries live in Docs, one YAML document per domain (a role's name, or "forge" for lessons about
// the sandbox itself): the store's knowledge/ directory (DirDocs, what Open uses) or a store
// backend's Knowledge() (OpenDocs), e.g. the fleet store's key-value bucket. Every write is a
// read-modify-write of one domain document that no concurrent write can interleave with: for the
// directory, a cross-process flock on <domain>.lock, then temp file, fsync, rename, directory
// fsync, so readers, which take no lock, never see a partial file; for a compare-and-swap Docs, a
// retried swap. A domain document that does not parse is quarantined (Options.Quarantine for Open,
// the Docs' Quarantine otherwise) and that domain starts again empty; the other domains are
// untouched. CopyDocs copies every document from one Docs to another (store migration).
//
// Recall ranks entries by BM25 over their content and reasoning, with confidence breaking ties,
// from an in-memory inverted index rebuilt only when a domain document's bytes change. Record of a content
// that is already there (case-insensitively) confirms it instead of adding a duplicate. Note keeps
// a lesson for this process only; the reflector promotes the noted lessons to disk when the store
// is closed (Close), skipping empty ones and ones already stored.
package learner

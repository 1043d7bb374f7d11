// Package learner is forge's durable memory: short lessons (entries) that outlive the process and
// are recalled into later prompts.
//
// Entries live under the store's knowledge/ directory, one YAML file per domain (a role's name, or
// "forge" for lessons about the sandbox itself). Every write is a locked read-modify-write of one
// domain file (a cross-process flock on <domain>.lock, then temp file, fsync, rename, directory
// fsync), so several processes can record and confirm at once without losing an update, and
// readers, which take no lock, never see a partial file. A domain file that does not parse is moved
// to the store's quarantine (Options.Quarantine) and that domain starts again empty; the other
// domains are untouched.
//
// Recall ranks entries by BM25 over their content and reasoning, with confidence breaking ties,
// from an in-memory inverted index rebuilt only when a domain file changes. Record of a content
// that is already there (case-insensitively) confirms it instead of adding a duplicate. Note keeps
// a lesson for this process only; the reflector promotes the noted lessons to disk when the store
// is closed (Close), skipping empty ones and ones already stored.
package learner

// Package registry is forge's persisted store: role contracts (roles/<role>.json, each with its
// last-good copy roles/<role>.json.good) and method artifacts (tools/<role>/<method>.json) that
// outlive every process.
//
// Every write is durable (temp file in the same directory, fsync, rename, directory fsync) and every
// read-modify-write holds a cross-process lock, so concurrent processes never lose an update and
// readers, which take no lock, never see a partial file. A write touches one role or one artifact.
// A file that does not parse, or whose code or contract does not match its checksum or fingerprint,
// is moved to quarantine/ with a record of why (a role is restored from its last-good copy at once);
// the rest of the store keeps working, and the entry stays pending — Doctor reports it — until an
// operator restores or dismisses it (Restore, Dismiss). A store written by an older forge (one
// registry.json for every role) is migrated on open. Per-call metrics are buffered in memory by a
// Recorder and merged into the artifact files at most once a second.
package registry

// Package registry is forge's persisted store: role contracts (registry.json) and method artifacts
// (tools/<role>/<method>.json) that outlive every process.
//
// Every write is durable (temp file in the same directory, fsync, rename, directory fsync) and every
// read-modify-write holds a cross-process lock, so concurrent processes never lose an update and
// readers, which take no lock, never see a partial file. A file that does not parse, or whose code
// does not match its checksum, is moved to quarantine/ and reported; the rest of the store keeps
// working. Per-call metrics are buffered in memory by a Recorder and merged into the artifact files
// at most once a second.
package registry

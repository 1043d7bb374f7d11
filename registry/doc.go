// Package registry is forge's persisted store: role contracts, method artifacts and what their
// calls did, in a directory that outlives every process.
//
// # Layout (version 2, store.json {"layout": 2})
//
//	store.json              the layout marker, written last by a migration
//	roles/<role>.json       a role's contract and usage count, with its last-good copy <role>.json.good
//	tools/<role>/<m>.json   a method artifact: code, kept generations, lifecycle, counters
//	metrics/<journal>.jsonl append-only metrics journals, one per writing process (journal.go)
//	index/<role>.json       the summary index of a role's artifacts (index.go), a cache
//	quarantine/             damaged files, with why (quarantine.go)
//
// Each piece is keyed like a record — one role, one artifact, one journal record per touched
// artifact and flush, one index per role — so that another backend (a key-value store) can hold
// the same records.
//
// Every write of a role or an artifact is durable (temp file in the same directory, fsync, rename,
// directory fsync) and every read-modify-write holds a cross-process lock, so concurrent processes
// never lose an update and readers, which take no lock, never see a partial file. A write touches
// one role or one artifact. A file that does not parse, or whose code or contract does not match
// its checksum or fingerprint, is moved to quarantine/ with a record of why (a role is restored
// from its last-good copy at once); the rest of the store keeps working, and the entry stays
// pending — Doctor reports it — until an operator restores or dismisses it (Restore, Dismiss).
//
// # Counters: the metrics journal
//
// Per-call outcomes are buffered in memory by a Recorder and appended, at most once a second, to
// the recorder's own journal: one record per touched artifact, one write and one fsync per flush,
// whatever the number of artifacts. Readers (Load, Update, Role, Summaries) merge the journal
// records into what the files hold, so counters, health, the candidate -> durable promotion and
// role usage read as if the files had been rewritten; a promotion is still written to the
// artifact file (it is rare). Compaction folds sealed journals into the files in the background,
// under each file's lock, stamping each file with the highest record of each journal it holds
// (metrics_applied), so a record is applied exactly once even across a crash between folding and
// removing the journal; see journal.go for the crash cases. A crash loses at most the counters of
// the current flush window, never code, contracts or compacted counters.
//
// Each outcome carries the generation that produced it (MetricsRecorder.RecordGen). The counters
// are the method's totals and take every outcome; the recent window, the last failure and the
// candidate -> durable promotion judge the code the artifact runs and take only the outcomes of
// its current generation, however late an outcome of a replaced generation is flushed (both
// backends merge by the same rule: BufferedDelta.ApplyTo).
//
// # The summary index
//
// index/<role>.json lists each artifact's lifecycle, generation, fingerprints, signature (with
// its params schema), newest generation's trigger, counters and times with the stamp of its file;
// `forge ls`, stale, prune, the known-tools listing, the server's /v1/artifacts and the MCP tool
// list read it instead of every artifact file. It is never trusted over the files: entries
// whose stamp differs are read from the file and the index is rewritten; Doctor rebuilds it. An
// index of another format (its header's "format"; the first had none) is rebuilt on read.
//
// # Older stores
//
// A layout-1 store (no store.json: counters only in the artifact files, usage only in the role
// files) is migrated on Open under registry.lock: every layout-1 file is valid in layout 2, so the
// migration writes the index and store.json and no artifact; a crashed migration is run again.
// An older store's registry.json (every role in one file) is moved into roles/ on the way.
//
// # Memory
//
// The store caches the artifacts it loaded or wrote, at most DefaultMaxCached of them (OpenOptions
// MaxCached, SetCacheLimit); one that falls out is read again on its next use. Cached artifacts
// and roles are compared with their files once per revalidation interval (SetRevalidate) by a
// background sweep (sweep.go), so that Lookup and Role, the warm path's reads, answer from memory
// without a system call; a watch (Watch) drops what another process changed at once. LookupPin
// and Relookup (PinLookup) let the forge's warm path check the snapshot it last used without the
// cache's map: a snapshot is marked when it leaves the cache, and its pin then answers false.
package registry

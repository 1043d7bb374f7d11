// Package nats is forge's fleet store on NATS JetStream key-value buckets (issue 13): FleetStore,
// the registry.Backend registered for nats:// and tls:// store URLs, and the foundations it is
// built on. See RATIONALE.md, "Fleet store on NATS (foundations)", "Fleet store: the JetStream
// backend" and "Fleet store operations (fleetops)".
//
//   - FleetStore (fleet.go): OpenFleet, or registry.OpenBackend("nats://HOST:PORT/NAME", o). Reads
//     merge a record with its metrics and are cached; Lookup answers from memory only, and the data
//     bucket's watch drops a cached entry as soon as anyone writes a newer revision (a ChangeAll
//     sets the cache aside, served again only while the store is unreachable). Writes are
//     compare-and-sets on the revision; the generation lock is a lease; the recorder flushes with a
//     MetricsWriter; Knowledge is the knowledge.<domain> table; it is a registry.Importer.
//   - Unreachable server (link.go): the connection's status, and the watch noticing a silent
//     server (then a ping, then a forced reconnection), tell the store when its server is gone;
//     what needs the server then fails at once with ErrUnreachable (after at most a 1 s grace for
//     a reconnection in progress), while Lookup and the set-aside copies keep warm calls going.
//   - Servers: the subpackage embedded runs NATS servers in the process (a single node for
//     `forge serve --nats-embedded DIR` and tests, a loopback cluster for fleet tests); this
//     package, the client, does not link the server in (the default forge binary leaves it out).
//   - Config: ParseURL reads nats://[creds@]HOST:PORT[,...]/NAME?options plus the nats CLI's
//     environment variables; passwords and tokens are Secrets that never print.
//   - Store: the buckets NAME_data (roles.<role>, artifacts.<role>.<method>, knowledge.<domain>),
//     NAME_metrics (<role>.<method>, and ROLE.<role> for a role's usage) and NAME_leases, each as a
//     typed Table with Get (value and revision), Create, Delete at a revision and a compare-and-set
//     Update that retries on conflict with bounded, jittered backoff. Names are escaped into key
//     tokens by EscapeToken.
//   - Metrics: a MetricsWriter per recorder merges its flushed deltas into per-artifact Metrics by
//     compare-and-set, tagged with a flush sequence so that a retried flush counts once (a journal
//     stream with a folder is the alternative for very wide flushes; the stream is created by
//     its first flush or fold, not by opening the store).
//   - Leases: a generation lease per method, a key with a per-key TTL that its holder renews
//     (KeepAlive) and deletes; a crashed holder's lease expires within its TTL.
//   - Watch: the data bucket's writes as Changes (role, artifact, knowledge; revision; deleted),
//     and a ChangeAll whenever the watch may have fallen behind (a lost server or consumer).
package nats

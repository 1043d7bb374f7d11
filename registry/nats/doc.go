// Package nats holds the foundations of forge's fleet store on NATS JetStream key-value buckets
// (issue 13): what a store shared by many machines needs and that does not depend on the file
// store's layout. It is not yet behind the registry's store interface; see RATIONALE.md, "Fleet
// store on NATS (foundations)", for what remains to wire.
//
//   - Servers: StartEmbedded runs a single-node JetStream server in a directory on a loopback port
//     (for `forge serve --nats-embedded DIR` and single-node tests); StartCluster runs an n-node
//     JetStream cluster on loopback whose nodes can be stopped and restarted (for fleet tests).
//   - Config: ParseURL reads nats://[creds@]HOST:PORT[,...]/NAME?options plus the nats CLI's
//     environment variables; passwords and tokens are Secrets that never print.
//   - Store: the buckets NAME_data (roles.<role>, artifacts.<role>.<method>, knowledge.<domain>),
//     NAME_metrics and NAME_leases, each as a typed Table with Get (value and revision), Create,
//     Delete at a revision and a compare-and-set Update that retries on conflict with bounded,
//     jittered backoff. Names are escaped into key tokens by EscapeToken.
//   - Metrics: a MetricsWriter per process merges its flushed deltas into per-artifact Metrics by
//     compare-and-set, tagged with a flush sequence so that a retried flush counts once.
//   - Leases: a generation lease per method, a key with a per-key TTL that its holder renews
//     (KeepAlive) and deletes; a crashed holder's lease expires within its TTL.
//   - Watch: the data bucket's writes as Changes (role, artifact, knowledge; revision; deleted),
//     and a ChangeAll whenever the watch may have fallen behind (a lost server or consumer).
package nats

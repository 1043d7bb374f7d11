package nats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/artifactforge/forge/registry"
)

// Key scheme. Keys are dot-separated tokens so that watches and listings can use subject
// wildcards ("artifacts.<role>.*", "roles.>"); each token is a name escaped by EscapeToken.
//
//	NAME_data     roles.<role>                     RoleRecord (JSON)
//	              artifacts.<role>.<method>        Artifact with its 3-generation history (JSON)
//	              knowledge.<domain>               a learner domain file, as is
//	NAME_metrics  <role>.<method>                  Metrics, merged by compare-and-set
//	NAME_leases   gen.<role>.<method>              a generation lease (per-key TTL)
const (
	rolesPrefix     = "roles."
	artifactsPrefix = "artifacts."
	knowledgePrefix = "knowledge."
)

// Bucket suffixes (NAME + suffix).
const (
	DataBucketSuffix    = "_data"
	MetricsBucketSuffix = "_metrics"
	LeasesBucketSuffix  = "_leases"
)

// MaxValueBytes bounds one stored value (an artifact with its history): the NATS server's
// default max_payload.
const MaxValueBytes = 1 << 20

// Store is a fleet store's buckets on one NATS connection, with a typed table per kind of record.
// It is safe for concurrent use.
type Store struct {
	nc      *nats.Conn
	ownConn bool
	js      jetstream.JetStream
	name    string
	id      string

	Data, MetricsKV, LeasesKV jetstream.KeyValue

	Roles     *Table[registry.RoleRecord]
	Artifacts *Table[*registry.Artifact]
	Knowledge *Table[[]byte]
	Metrics   *Table[Metrics]
	Leases    *Leases

	replicas   int
	journalMu  sync.Mutex
	journal    jetstream.Stream // opened on first use (journalStream): only the journal path writes it
	watermark  *Table[journalWatermark]
	foldFilter func(registry.Key) bool // tests: fold only these (the rest "fails")
}

// Open connects with cfg and opens (creating them if needed, with cfg.Replicas) the store's
// buckets. clientName names the connection on the server (e.g. "forge serve on host1").
// extra options are added to the connection's (e.g. nats.DontRandomize to pin a server).
func Open(ctx context.Context, cfg *Config, clientName string, extra ...nats.Option) (*Store, error) {
	nc, err := cfg.Connect(clientName, extra...)
	if err != nil {
		return nil, err
	}
	s, err := OpenConn(ctx, nc, cfg.Name, cfg.Replicas)
	if err != nil {
		nc.Close()
		return nil, err
	}
	s.ownConn = true
	return s, nil
}

// OpenConn opens the store NAME on an existing connection (which the caller keeps and closes).
func OpenConn(ctx context.Context, nc *nats.Conn, name string, replicas int) (*Store, error) {
	if !validBucketPrefix(name) {
		return nil, fmt.Errorf("nats: store name %q: use letters, digits, - and _ (at most 64)", name)
	}
	if replicas <= 0 {
		replicas = 1
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("nats: jetstream: %w", err)
	}
	host, _ := os.Hostname()
	s := &Store{nc: nc, js: js, name: name, replicas: replicas, id: host + "-" + strconv.Itoa(os.Getpid()) + "-" + nuid.Next()}
	desc := "forge fleet store " + name
	if s.Data, err = openBucket(ctx, js, jetstream.KeyValueConfig{Bucket: name + DataBucketSuffix, Description: desc + ": roles, artifacts, knowledge",
		History: 1, Replicas: replicas, MaxValueSize: MaxValueBytes}); err != nil {
		return nil, err
	}
	if s.MetricsKV, err = openBucket(ctx, js, jetstream.KeyValueConfig{Bucket: name + MetricsBucketSuffix, Description: desc + ": call metrics",
		History: 1, Replicas: replicas, MaxValueSize: MaxValueBytes}); err != nil {
		return nil, err
	}
	if s.LeasesKV, err = openBucket(ctx, js, jetstream.KeyValueConfig{Bucket: name + LeasesBucketSuffix, Description: desc + ": generation leases",
		History: 1, Replicas: replicas, LimitMarkerTTL: time.Second}); err != nil {
		return nil, err
	}
	s.Roles = NewTable(s.Data, rolesPrefix, JSONCodec[registry.RoleRecord]())
	s.Artifacts = NewTable(s.Data, artifactsPrefix, Codec[*registry.Artifact]{
		Encode: func(a *registry.Artifact) ([]byte, error) { return json.Marshal(a) },
		Decode: registry.DecodeArtifact,
	})
	s.Knowledge = NewTable(s.Data, knowledgePrefix, Codec[[]byte]{
		Encode: func(b []byte) ([]byte, error) { return b, nil },
		Decode: func(b []byte) ([]byte, error) { return b, nil },
	})
	s.Metrics = NewTable(s.MetricsKV, "", JSONCodec[Metrics]())
	s.Leases = &Leases{kv: s.LeasesKV, js: js, holder: s.id}
	s.watermark = NewTable(s.MetricsKV, "", JSONCodec[journalWatermark]())
	return s, nil
}

// jsNotAvailable is JetStream's "temporarily unavailable" API error: a cluster without a meta
// leader yet (starting, or electing one after a node was lost).
const jsNotAvailable jetstream.ErrorCode = 10008

// transientOpenError says whether opening a bucket may succeed if tried again shortly: the
// cluster is electing a leader, or no server answered the request yet.
func transientOpenError(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && (apiErr.ErrorCode == jsNotAvailable || apiErr.Code == 503) {
		return true
	}
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse)
}

// readable waits until a bucket answers reads. A bucket just created (here or by another process)
// on a replicated cluster has no stream leader for a moment, and its gets meet "no responders" (seen:
// `forge role add`, the first command against a fresh 3-node cluster on a loaded machine, failed
// so); it waits up to ReadableWithin, within ctx, then reports what the last read met.
func readable(ctx context.Context, kv jetstream.KeyValue) error {
	wait := 20 * time.Millisecond
	deadline := time.Now().Add(ReadableWithin)
	for {
		_, err := kv.Get(ctx, "forge-readable-probe")
		if err == nil || errors.Is(err, jetstream.ErrKeyNotFound) || !transientOpenError(err) {
			return nil // readable, or an error the first real read reports with its own words
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nats: bucket %s does not answer reads after %v: %w (is a majority of the cluster's nodes up?)", kv.Bucket(), ReadableWithin, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("nats: bucket %s: %w", kv.Bucket(), ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, 500*time.Millisecond)
	}
}

// ReadableWithin bounds how long opening a store waits for a new bucket to answer reads.
var ReadableWithin = 30 * time.Second

func openBucket(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	wait := 50 * time.Millisecond
	for attempt := 0; attempt < 3; {
		kv, err := js.KeyValue(ctx, cfg.Bucket)
		if err == nil {
			return kv, readable(ctx, kv)
		}
		op := "open"
		if errors.Is(err, jetstream.ErrBucketNotFound) {
			op = "create"
			if kv, err = js.CreateKeyValue(ctx, cfg); err == nil {
				return kv, readable(ctx, kv)
			}
			if errors.Is(err, jetstream.ErrBucketExists) {
				attempt++ // another process created it meanwhile: open it
				continue
			}
		}
		if !transientOpenError(err) {
			if op == "create" {
				return nil, fmt.Errorf("nats: create bucket %s (replicas %d): %w (a cluster needs at least as many JetStream nodes as replicas)", cfg.Bucket, cfg.Replicas, err)
			}
			return nil, fmt.Errorf("nats: open bucket %s: %w (is JetStream enabled on the server?)", cfg.Bucket, err)
		}
		// A cluster electing its leader answers 503 for a moment: wait within ctx, without using
		// up an attempt.
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("nats: %s bucket %s: %w (the JetStream cluster did not become available in time: is a majority of its nodes up?)", op, cfg.Bucket, err)
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
	return nil, fmt.Errorf("nats: bucket %s: neither found nor created after 3 attempts", cfg.Bucket)
}

// ID names this store handle among the fleet's processes (lease holders, metrics writers).
func (s *Store) ID() string { return s.id }

// Name is the bucket prefix.
func (s *Store) Name() string { return s.name }

// Conn is the NATS connection.
func (s *Store) Conn() *nats.Conn { return s.nc }

// Close closes the connection if Open made it, after draining it (pending publishes are sent,
// subscriptions finish what they hold) for at most closeDrainTimeout.
func (s *Store) Close() error {
	if !s.ownConn {
		return nil
	}
	if err := s.nc.Drain(); err != nil {
		s.nc.Close()
		return nil // already closed or closing
	}
	deadline := time.Now().Add(closeDrainTimeout)
	for !s.nc.IsClosed() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	s.nc.Close()
	return nil
}

const closeDrainTimeout = 5 * time.Second

// RoleKey is the data bucket key of a role.
func (s *Store) RoleKey(role string) (string, error) {
	if err := registry.ValidateName("role", role); err != nil {
		return "", err
	}
	return s.Roles.Key(role)
}

// ArtifactKey is the data bucket key of role.method's artifact.
func (s *Store) ArtifactKey(role, method string) (string, error) {
	if err := validKey(role, method); err != nil {
		return "", err
	}
	return s.Artifacts.Key(role, method)
}

// MetricsKey is the metrics bucket key of role.method.
func (s *Store) MetricsKey(role, method string) (string, error) {
	if err := validKey(role, method); err != nil {
		return "", err
	}
	return s.Metrics.Key(role, method)
}

// KnowledgeKey is the data bucket key of a learner domain (any non-empty name: it is escaped).
func (s *Store) KnowledgeKey(domain string) (string, error) { return s.Knowledge.Key(domain) }

func validKey(role, method string) error {
	if err := registry.ValidateName("role", role); err != nil {
		return err
	}
	return registry.ValidateName("method", method)
}

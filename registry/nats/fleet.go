package nats

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/artifactforge/forge/registry"
)

// Both schemes open the fleet store: tls:// is nats:// with TLS required (ParseURL).
func init() {
	registry.RegisterBackend("nats", openBackend)
	registry.RegisterBackend("tls", openBackend)
}

// openBackend is the "nats" and "tls" schemes' registry.Opener.
func openBackend(url string, o registry.OpenOptions) (registry.Backend, error) {
	cfg, err := ParseURL(url, nil)
	if err != nil {
		return nil, err
	}
	return OpenFleet(cfg, o)
}

// FleetStore is the fleet store: a registry.Backend on a NATS JetStream store's buckets, shared by
// every process of every machine that opens the same URL (see RATIONALE.md, "Fleet store: the
// JetStream backend").
//
//   - Reads (Load, Role) get the record from the data bucket and its merged metrics from the
//     metrics bucket, and cache the merged view; Lookup answers from that cache only. A watch of the
//     data bucket drops a cached entry as soon as anyone writes a newer revision of it (a ChangeAll
//     sets the whole cache aside), so another process's bless reaches this one's next call.
//   - Writes (Update, PutRole, imports) are compare-and-sets on the record's revision.
//   - A stored record carries the metrics it already holds (fleet_base, the metrics as read when it
//     was written); the view is the record plus what the metrics gained since, merged as the
//     directory store merges its journal records. So a write never loses a flush that lands while
//     it runs, and a flush never rewrites a record.
//   - Call outcomes are buffered (registry.RecordBuffer) and flushed by a MetricsWriter (one
//     compare-and-set per touched artifact and per touched role per flush).
//   - Generation locks are leases with a TTL, renewed while held.
type FleetStore struct {
	st       *Store
	cfg      *Config
	loc      string
	localDir string

	arts  *Table[storedArtifact]
	roles *Table[storedRole]

	mu      sync.RWMutex
	cache   map[registry.Key]*cachedArtifact
	roleC   map[string]*cachedRole
	stale   map[registry.Key]*cachedArtifact // set aside by a ChangeAll: served only when the store is unreachable
	staleR  map[string]*cachedRole
	latest  map[registry.Key]seen // newest write the watch reported per artifact
	latestR map[string]seen
	epoch   uint64 // bumped by every ChangeAll: a read that started before it does not install
	// opTimeout bounds each operation (fleetOpTimeout; tests shorten it).
	opTimeout time.Duration
	maxCached int           // artifacts kept in memory (OpenOptions.MaxCached; <= 0: no bound)
	genTTL    time.Duration // the generation lease's TTL (GenerationLeaseTTL; tests shorten it)
	watcher   *Watcher
	link      *link // the connection's state: operations fail at once while the server is unreachable
	subsMu    sync.Mutex
	subs      map[*subscriber]struct{}
	genLocks  sync.Map // key string -> *sync.Mutex: one lease request per method per process
	closed    atomic.Bool
}

type cachedArtifact struct {
	used atomic.Bool        // looked up since the last eviction pass (second chance)
	a    *registry.Artifact // the merged view
	rec  *registry.Artifact // the record (a candidate the view proves durable is written)
	base *Metrics           // the metrics the record holds
	rev  uint64             // data bucket revision of the record
}

// withMetrics is c's record seen with the metrics m (a flush's result: every flush merged so far).
func (c *cachedArtifact) withMetrics(m *Metrics) *cachedArtifact {
	return &cachedArtifact{a: view(c.rec, c.base, m), rec: c.rec, base: c.base, rev: c.rev}
}

// seen is the newest write of a key the watch reported: its revision, and whether it deleted the
// key (a read cannot wait for a deleted key's revision: a get answers "not found" without one).
type seen struct {
	rev     uint64
	deleted bool
}

type cachedRole struct {
	rec    *registry.RoleRecord // the merged view
	stored *registry.RoleRecord // the record
	base   *Metrics             // the usage the record holds
	rev    uint64
}

// Timeouts of one store operation (a read, a compare-and-set with its retries).
const (
	fleetOpTimeout = 15 * time.Second
	// fleetFallbackTimeout bounds a read that may be answered from a set-aside copy when the
	// store is unreachable (a partition): how long a warm call waits before running from memory.
	fleetFallbackTimeout = 2 * time.Second
	// GenerationLeaseTTL is how long a crashed generator blocks its method: the lease is renewed
	// every third of it while the generation runs.
	GenerationLeaseTTL = 10 * time.Second
	// watchCloseWait bounds how long Close waits for the watch to stop before closing the
	// connection under it.
	watchCloseWait = time.Second
	// generationWait bounds how long a cold call waits for another process's generation.
	generationWait = 10 * time.Minute
)

// OpenFleet connects with cfg (naming the connection o.ClientName), opens the store's buckets
// (creating them if needed) and starts the watch that keeps the cache coherent. The local
// directory is o.LocalDir, or the user cache directory's forge/<name> (created).
func OpenFleet(cfg *Config, o registry.OpenOptions) (*FleetStore, error) {
	return openFleetWith(cfg, o)
}

// openFleetWith is OpenFleet with extra connection options (tests pin a server).
func openFleetWith(cfg *Config, o registry.OpenOptions, extra ...nats.Option) (*FleetStore, error) {
	loc := cfg.String()
	local := o.LocalDir
	if local == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("registry: store %s: no local directory (%v): pass one (OpenOptions.LocalDir, `--local-dir`) or set $XDG_CACHE_HOME", loc, err)
		}
		local = filepath.Join(base, "forge", cfg.Name)
	}
	if err := os.MkdirAll(local, 0o755); err != nil {
		return nil, fmt.Errorf("registry: store %s: create the local directory %s: %w (check its permissions or pass another)", loc, local, err)
	}
	name := o.ClientName
	if name == "" {
		name = "forge"
	}
	ctx, cancel := context.WithTimeout(context.Background(), fleetOpTimeout)
	defer cancel()
	opts, err := cfg.Options(name)
	if err != nil {
		return nil, fmt.Errorf("registry: store %s: %w", loc, err)
	}
	opts = append(append(opts, nats.ReconnectWait(100*time.Millisecond), nats.MaxReconnects(-1)), extra...)
	nc, err := nats.Connect(strings.Join(cfg.Servers, ","), opts...)
	if err != nil {
		return nil, fmt.Errorf("registry: store %s: %w; %s", loc, err, cfg.connectAdvice(err))
	}
	st, err := OpenConn(ctx, nc, cfg.Name, cfg.Replicas)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("registry: store %s: %w", loc, err)
	}
	st.ownConn = true
	f := &FleetStore{st: st, cfg: cfg, loc: loc, localDir: local,
		cache: map[registry.Key]*cachedArtifact{}, roleC: map[string]*cachedRole{},
		stale: map[registry.Key]*cachedArtifact{}, staleR: map[string]*cachedRole{},
		latest: map[registry.Key]seen{}, latestR: map[string]seen{}, subs: map[*subscriber]struct{}{}}
	f.arts = NewTable(st.Data, artifactsPrefix, Codec[storedArtifact]{Encode: encodeStoredArtifact, Decode: decodeStoredArtifact})
	f.roles = NewTable(st.Data, rolesPrefix, Codec[storedRole]{Encode: encodeStoredRole, Decode: decodeStoredRole})
	f.opTimeout = fleetOpTimeout
	f.genTTL = GenerationLeaseTTL
	switch {
	case o.MaxCached == 0:
		f.maxCached = registry.DefaultMaxCached
	case o.MaxCached > 0:
		f.maxCached = o.MaxCached
	}
	f.link = newLink(nc)
	w, err := st.Watch(context.Background(), f.onChange)
	if err != nil {
		st.Close()
		f.link.close()
		return nil, fmt.Errorf("registry: store %s: %w", loc, err)
	}
	f.watcher = w
	return f, nil
}

// The fleet store is a Backend and an Importer.
var (
	_ registry.Backend  = (*FleetStore)(nil)
	_ registry.Importer = (*FleetStore)(nil)
)

// Location is the store URL without its secrets.
func (f *FleetStore) Location() string { return f.loc }

// LocalDir is this machine's directory for what the fleet does not share.
func (f *FleetStore) LocalDir() string { return f.localDir }

// Store is the underlying buckets (tests, tools).
func (f *FleetStore) Store() *Store { return f.st }

// opCtx bounds one store operation (a read, or a compare-and-set with its retries). It is
// cancelled as soon as the server is known to be unreachable (see link): an operation then fails
// at once, or after at most reconnectGrace when the connection has just dropped.
func (f *FleetStore) opCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(f.link.ctx(), f.opTimeout)
}

// fail names the store in an error (the KV layer's errors already say what to check).
func (f *FleetStore) fail(err error) error {
	if err == nil {
		return nil
	}
	if f.closed.Load() {
		return fmt.Errorf("registry: store %s is closed: %w", f.loc, err)
	}
	if errors.Is(err, registry.ErrNotFound) || errors.Is(err, registry.ErrInvalidName) ||
		errors.Is(err, registry.ErrCorrupt) || errors.Is(err, registry.ErrIncompatible) {
		return err // they name the record (and the store) already
	}
	connErr := errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrDisconnected) ||
		errors.Is(err, nats.ErrConnectionClosed) || errors.Is(err, nats.ErrConnectionReconnecting) || errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrTimeout)
	why := f.link.unreachable()
	if why == nil && connErr {
		why = f.link.down() // failed by a connection that has just dropped
	}
	if why != nil {
		return fmt.Errorf("registry: store %s: %w; check that nats-server runs there and that this machine reaches it (network, store URL), then retry (calls of methods already in memory go on meanwhile): %w", f.loc, why, err)
	}
	if connErr {
		return fmt.Errorf("registry: store %s: %w; check that nats-server runs there with JetStream and, in a cluster, that a majority of its nodes (a quorum) is up", f.loc, err)
	}
	return fmt.Errorf("registry: store %s: %w", f.loc, err)
}

// --- stored records ---------------------------------------------------------------------------

// storedArtifact is an artifact record: the artifact as the forge wrote it and the metrics it
// holds (Base), and the bytes stored (Raw). Err is why it could not be decoded.
type storedArtifact struct {
	A    *registry.Artifact
	Base *Metrics
	Err  error
	Raw  []byte
}

type baseField struct {
	Base *Metrics `json:"fleet_base,omitempty"`
}

func encodeStoredArtifact(s storedArtifact) ([]byte, error) {
	if s.A == nil {
		return nil, errors.New("no artifact to store")
	}
	return json.Marshal(struct {
		*registry.Artifact
		baseField
	}{s.A, baseField{baseOf(s.Base)}})
}

func decodeStoredArtifact(data []byte) (storedArtifact, error) {
	a, err := registry.DecodeArtifact(data)
	if err != nil {
		return storedArtifact{A: a, Err: err, Raw: data}, nil
	}
	var b baseField
	if err := json.Unmarshal(data, &b); err != nil {
		return storedArtifact{Err: fmt.Errorf("%w: fleet_base: %v", registry.ErrCorrupt, err), Raw: data}, nil
	}
	return storedArtifact{A: a, Base: b.Base, Raw: data}, nil
}

// storedRole is a role record with the usage metrics it holds.
type storedRole struct {
	Rec  *registry.RoleRecord
	Base *Metrics
	Err  error
}

func encodeStoredRole(s storedRole) ([]byte, error) {
	if s.Rec == nil {
		return nil, errors.New("no role to store")
	}
	return json.Marshal(struct {
		SchemaVersion int `json:"schema_version"`
		*registry.RoleRecord
		baseField
	}{registry.SchemaVersion, s.Rec, baseField{baseOf(s.Base)}})
}

func decodeStoredRole(data []byte) (storedRole, error) {
	var v struct {
		SchemaVersion int `json:"schema_version"`
		registry.RoleRecord
		baseField
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&v); err != nil {
		return storedRole{Err: fmt.Errorf("%w: does not parse: %v", registry.ErrCorrupt, err)}, nil
	}
	if v.SchemaVersion != registry.SchemaVersion {
		return storedRole{Err: fmt.Errorf("%w: schema_version %d, this forge reads %d", registry.ErrIncompatible, v.SchemaVersion, registry.SchemaVersion)}, nil
	}
	if err := v.Contract.Validate(); err != nil {
		return storedRole{Err: fmt.Errorf("%w: %v", registry.ErrCorrupt, err)}, nil
	}
	if v.Contract.Fingerprint() != v.Fingerprint {
		return storedRole{Err: fmt.Errorf("%w: the contract does not match its contract_fingerprint (change a contract with `forge role add -f contract.json`)", registry.ErrCorrupt)}, nil
	}
	rec := v.RoleRecord
	return storedRole{Rec: &rec, Base: v.Base}, nil
}

// baseOf is what a record keeps of the metrics it holds: the sums, not the writers' marks.
func baseOf(m *Metrics) *Metrics {
	if m == nil || m.Calls == 0 {
		return nil
	}
	b := *m
	b.Writers, b.Journal = nil, 0
	if len(m.Gens) > 0 {
		// A base needs each generation's counts only (sinceBase subtracts them), not its window.
		b.Gens = make([]GenMetrics, len(m.Gens))
		for i, g := range m.Gens {
			b.Gens[i] = GenMetrics{Gen: g.Gen, Calls: g.Calls, Failures: g.Failures}
		}
	}
	return &b
}

// newBase is the base a record written now gets: the metrics just read, unless a lagging replica
// answered with metrics older than what the record already holds (fewer calls: the calls only
// grow), in which case the record keeps its base. A base that went backwards would count the
// calls between the two twice.
func newBase(old, m *Metrics) *Metrics {
	if old != nil && (m == nil || m.Calls < old.Calls) {
		return old
	}
	return baseOf(m)
}

// sinceBase is what the metrics m gained since base for a record of generation gen, as one delta:
// the sums' differences (every generation's), generation gen's outcomes recorded since (the tail
// of its window as long as its calls since) and its last failure if it failed since, and the last
// use. Metrics written before outcomes carried their generation (no Gens) give the tail of the
// whole window, as they did. ok is false when nothing was gained.
func sinceBase(base, m *Metrics, gen int) (d registry.BufferedDelta, at time.Time, ok bool) {
	if m == nil {
		return d, at, false
	}
	var b Metrics
	if base != nil {
		b = *base
	}
	n := m.Calls - b.Calls
	if n <= 0 {
		return d, at, false
	}
	c := &d.Counters
	c.SuccessCount = m.SuccessCount - b.SuccessCount
	c.FailureCount = m.FailureCount - b.FailureCount
	c.IntrinsicFailureCount = m.IntrinsicFailureCount - b.IntrinsicFailureCount
	c.AdaptiveFailureCount = m.AdaptiveFailureCount - b.AdaptiveFailureCount
	c.ExtrinsicFailureCount = m.ExtrinsicFailureCount - b.ExtrinsicFailureCount
	c.CallerFailureCount = m.CallerFailureCount - b.CallerFailureCount
	c.TotalDurationNanos = m.TotalDurationNanos - b.TotalDurationNanos
	if m.MaxDurationNanos > b.MaxDurationNanos {
		c.MaxDurationNanos = m.MaxDurationNanos
	}
	d.Calls = n
	if len(m.Gens) == 0 {
		r := m.Recent
		if int64(len(r)) > n {
			r = r[int64(len(r))-n:]
		}
		c.Recent = r
		d.GenCalls = n
		if m.FailureCount > b.FailureCount {
			d.LastClass, d.LastReason = m.LastFailureClass, m.LastFailureReason
		}
	} else {
		// Generation gen's outcomes since the base, and those recorded without a generation
		// (judged with whatever record they are merged into, as on the directory store), the less
		// recently recorded of the two first (Gens is most recent first; the forge always names
		// the generation, so one of the two is empty).
		add := func(g, bg GenMetrics) {
			if g.Calls <= bg.Calls {
				return
			}
			k := g.Calls - bg.Calls
			r := g.Recent
			if int64(len(r)) > k {
				r = r[int64(len(r))-k:]
			}
			c.Recent += r
			d.GenCalls += k
			if g.Failures > bg.Failures {
				d.GenFailures += g.Failures - bg.Failures
				d.LastClass, d.LastReason = g.LastFailureClass, g.LastFailureReason
			}
		}
		first, second := 0, gen
		if slices.IndexFunc(m.Gens, func(g GenMetrics) bool { return g.Gen == gen }) > slices.IndexFunc(m.Gens, func(g GenMetrics) bool { return g.Gen == 0 }) {
			first, second = gen, 0
		}
		add(genOf(m.Gens, first), genOf(b.Gens, first))
		if second != first {
			add(genOf(m.Gens, second), genOf(b.Gens, second))
		}
		if len(c.Recent) > registry.RecentWindow {
			c.Recent = c.Recent[len(c.Recent)-registry.RecentWindow:]
		}
		d.Gen = gen
	}
	at = time.Now().UTC()
	if m.LastUsedAt != nil {
		at = *m.LastUsedAt
	}
	return d, at, true
}

// view is the artifact a record shows with the metrics m: the record itself when m holds nothing
// new, else a copy with the new outcomes merged in.
func view(a *registry.Artifact, base, m *Metrics) *registry.Artifact {
	d, at, ok := sinceBase(base, m, a.Generation)
	if !ok {
		return a
	}
	v := *a
	d.ApplyTo(&v, at)
	return &v
}

// roleView is a role record with the usage m gained since base.
func roleView(rec *registry.RoleRecord, base, m *Metrics) *registry.RoleRecord {
	d, at, ok := sinceBase(base, m, 0)
	if !ok {
		return rec
	}
	v := *rec
	v.UsageCount += d.Calls
	if v.LastUsedAt == nil || at.After(*v.LastUsedAt) {
		t := at
		v.LastUsedAt = &t
	}
	return &v
}

// metrics reads the merged metrics under key (nil when none were flushed).
func (f *FleetStore) metrics(ctx context.Context, key string) (*Metrics, error) {
	e, err := f.st.Metrics.Get(ctx, key)
	if errors.Is(err, registry.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &e.Value, nil
}

// --- artifacts ----------------------------------------------------------------------------------

// SetRevalidate does nothing: it tunes the checks a store makes when no watch is running, and the
// fleet store's cache is always kept coherent by its own watch of the data bucket.
func (f *FleetStore) SetRevalidate(time.Duration) {}

// Lookup returns the cached merged view of role.method, from memory only.
func (f *FleetStore) Lookup(role, method string) (*registry.Artifact, bool) {
	f.mu.RLock()
	c := f.cache[registry.Key{Role: role, Method: method}]
	f.mu.RUnlock()
	if c == nil {
		return nil, false
	}
	if !c.used.Load() {
		c.used.Store(true)
	}
	return c.a, true
}

func notFoundArtifact(role, method string) error {
	return fmt.Errorf("registry: artifact %s.%s: %w", role, method, registry.ErrNotFound)
}

// read gets role.method's record (at least the newest revision the watch reported) and its
// metrics, and returns the merged view.
func (f *FleetStore) read(ctx context.Context, role, method string, min seen) (v *registry.Artifact, rec storedArtifact, rev uint64, err error) {
	key, err := f.st.ArtifactKey(role, method)
	if err != nil {
		return nil, rec, 0, err
	}
	// The metrics are read at the same time as the record: one round trip's wait, not two. Any
	// metrics the record does not hold yet are merged; older ones are ignored (see sinceBase).
	mkey, _ := f.st.MetricsKey(role, method)
	type mres struct {
		m   *Metrics
		err error
	}
	mch := make(chan mres, 1)
	go func() {
		m, err := f.metrics(ctx, mkey)
		mch <- mres{m, err}
	}()
	e, err := getAtLeast(ctx, f.arts, key, min)
	mr := <-mch
	return f.merge(role, method, e, err, mr.m, mr.err)
}

// merge is role.method's view from its record as read (e, or the error reading it) and its
// metrics as read (m, or the error reading them): what read returns, and what the bulk listings
// (fleet_bulk.go) make of each record they read.
func (f *FleetStore) merge(role, method string, e Entry[storedArtifact], err error, m *Metrics, merr error) (v *registry.Artifact, rec storedArtifact, rev uint64, _ error) {
	if errors.Is(err, registry.ErrNotFound) {
		return nil, rec, e.Revision, notFoundArtifact(role, method)
	}
	if err != nil {
		return nil, rec, 0, err
	}
	rec = e.Value
	if rec.Err != nil {
		return rec.A, rec, e.Revision, fmt.Errorf("registry: artifact %s.%s (%s revision %d): %w", role, method, f.loc, e.Revision, rec.Err)
	}
	if rec.A.Role != role || rec.A.Method != method {
		rec.Err = fmt.Errorf("%w: the record names %s.%s", registry.ErrCorrupt, rec.A.Role, rec.A.Method)
		return nil, rec, e.Revision, fmt.Errorf("registry: artifact %s.%s (%s revision %d): %w", role, method, f.loc, e.Revision, rec.Err)
	}
	if merr != nil {
		return nil, rec, 0, merr
	}
	return view(rec.A, rec.Base, m), rec, e.Revision, nil
}

// getAtLeast reads key as of the newest write the watch reported: at least its revision, or, when
// that write deleted the key, "not found" for anything older.
func getAtLeast[T any](ctx context.Context, t *Table[T], key string, min seen) (Entry[T], error) {
	if !min.deleted {
		return t.GetAtLeast(ctx, key, min.rev)
	}
	e, err := t.Get(ctx, key)
	if err == nil && e.Revision < min.rev {
		return Entry[T]{}, fmt.Errorf("nats: %s: deleted at revision %d: %w", key, min.rev, registry.ErrNotFound)
	}
	return e, err
}

// Load reads role.method from the store, merges its metrics and caches the view. When the store
// cannot be reached and a copy is in memory (cached, or set aside by a ChangeAll), that copy is
// served (and cached again: the watch, once back, delivers whatever changed meanwhile), so warm
// calls outlive a partition.
func (f *FleetStore) Load(role, method string) (*registry.Artifact, error) {
	if err := validKey(role, method); err != nil {
		return nil, err
	}
	k := registry.Key{Role: role, Method: method}
	f.mu.RLock()
	epoch, minRev, old := f.epoch, f.latest[k], f.stale[k]
	if old == nil {
		old = f.cache[k] // a Load of a cached entry (a caller that does not Lookup first)
	}
	f.mu.RUnlock()
	timeout := f.opTimeout
	if old != nil {
		if !f.st.nc.IsConnected() { // cut off: no request could be answered; run from memory
			f.install(k, old, f.epochNow())
			return old.a, nil
		}
		timeout = fleetFallbackTimeout
	}
	ctx, cancel := context.WithTimeout(f.link.ctx(), timeout)
	defer cancel()
	v, rec, rev, err := f.read(ctx, role, method, minRev)
	if err != nil {
		if old != nil && !errors.Is(err, registry.ErrNotFound) && !errors.Is(err, registry.ErrCorrupt) && !errors.Is(err, registry.ErrIncompatible) {
			f.install(k, old, f.epochNow())
			return old.a, nil
		}
		if errors.Is(err, registry.ErrIncompatible) {
			return v, err // readable, for the selector and operators; never cached
		}
		return nil, f.fail(err)
	}
	f.install(k, &cachedArtifact{a: v, rec: rec.A, base: rec.Base, rev: rev}, epoch)
	return v, nil
}

func (f *FleetStore) epochNow() uint64 {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.epoch
}

// install caches c unless the watch reported a newer revision or a ChangeAll since the read began.
func (f *FleetStore) install(k registry.Key, c *cachedArtifact, epoch uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.epoch != epoch || c.rev < f.latest[k].rev {
		return
	}
	if cur := f.cache[k]; cur != nil && cur.rev > c.rev {
		return
	}
	f.cache[k] = c
	delete(f.stale, k)
	if f.maxCached > 0 && len(f.cache) > f.maxCached {
		f.evictLocked()
	}
}

// evictLocked drops cached artifacts down to 7/8 of the bound, sparing those looked up since the
// last pass once (the directory store's policy). The caller holds f.mu.
func (f *FleetStore) evictLocked() {
	target := f.maxCached - f.maxCached/8
	for pass := 0; pass < 2 && len(f.cache) > target; pass++ {
		for k, c := range f.cache {
			if len(f.cache) <= target {
				return
			}
			if pass == 0 && c.used.Load() {
				c.used.Store(false)
				continue
			}
			delete(f.cache, k)
		}
	}
}

// Peek reads role.method with its metrics without caching it.
func (f *FleetStore) Peek(role, method string) (*registry.Artifact, error) {
	if err := validKey(role, method); err != nil {
		return nil, err
	}
	ctx, cancel := f.opCtx()
	defer cancel()
	v, _, _, err := f.read(ctx, role, method, seen{})
	if err != nil {
		if errors.Is(err, registry.ErrIncompatible) || errors.Is(err, registry.ErrCorrupt) {
			return v, err
		}
		return nil, f.fail(err)
	}
	return v, nil
}

// Update is the compare-and-set read-modify-write of role.method: fn gets the merged view (a new
// candidate with exists=false when there is none, or when the stored record is damaged: it is set
// aside first) and changes it in place; the result is written with the metrics it now holds, only
// if nobody wrote the record meanwhile (else fn runs again on the newer record).
func (f *FleetStore) Update(role, method string, fn func(a *registry.Artifact, exists bool) error) (*registry.Artifact, error) {
	if err := validKey(role, method); err != nil {
		return nil, err
	}
	key, _ := f.st.ArtifactKey(role, method)
	mkey, _ := f.st.MetricsKey(role, method)
	ctx, cancel := f.opCtx()
	defer cancel()
	var aside []byte
	var fnErr error // fn's own error is returned as it is
	e, err := f.arts.Update(ctx, key, func(old storedArtifact, exists bool) (storedArtifact, error) {
		m, err := f.metrics(ctx, mkey)
		if err != nil {
			return storedArtifact{}, err
		}
		var a *registry.Artifact
		switch {
		case exists && old.Err == nil && old.A.Role == role && old.A.Method == method:
			a = view(old.A, old.Base, m)
			if a == old.A {
				c := *a
				a = &c
			}
		case exists && errors.Is(old.Err, registry.ErrIncompatible):
			return storedArtifact{}, fmt.Errorf("registry: artifact %s.%s in %s: %w; upgrade this forge, or regenerate it with `forge regen %s %s`", role, method, f.loc, old.Err, role, method)
		case exists:
			// Damaged: set aside (once, however often fn runs), then written over as a new artifact.
			why := old.Err
			if why == nil {
				why = fmt.Errorf("%w: the record names %s.%s", registry.ErrCorrupt, old.A.Role, old.A.Method)
			}
			if !bytes.Equal(aside, old.Raw) {
				if _, err := f.setAside(key, old.Raw, why); err != nil {
					return storedArtifact{}, err
				}
				aside = old.Raw
			}
			exists = false
		}
		if a == nil {
			a = &registry.Artifact{SchemaVersion: registry.SchemaVersion, Role: role, Method: method, Lifecycle: registry.Candidate,
				RuntimeVersion: registry.RuntimeVersion, CodeChecksum: registry.Checksum("")}
		}
		if err := fn(a, exists); err != nil {
			fnErr = err
			return storedArtifact{}, err
		}
		if a.Role != role || a.Method != method {
			fnErr = fmt.Errorf("registry: update %s.%s: the update renamed the artifact", role, method)
			return storedArtifact{}, fnErr
		}
		if a.CodeChecksum != registry.Checksum(a.Code) {
			fnErr = fmt.Errorf("registry: update %s.%s: code changed without Promote (checksum mismatch)", role, method)
			return storedArtifact{}, fnErr
		}
		return storedArtifact{A: a, Base: newBase(old.Base, m)}, nil
	})
	if err != nil && err == fnErr {
		return nil, err
	}
	if err != nil {
		return nil, f.fail(err)
	}
	a := e.Value.A
	f.install(registry.Key{Role: role, Method: method}, &cachedArtifact{a: a, rec: a, base: e.Value.Base, rev: e.Revision}, f.epochNow())
	return a, nil
}

// List returns every artifact's key, sorted.
func (f *FleetStore) List() ([]registry.Key, error) {
	ctx, cancel := f.opCtx()
	defer cancel()
	keys, err := f.arts.List(ctx, "")
	if err != nil {
		return nil, f.fail(err)
	}
	out := make([]registry.Key, 0, len(keys))
	for _, k := range keys {
		p, ok := f.arts.Parts(k)
		if !ok || len(p) != 2 || validKey(p[0], p[1]) != nil {
			continue
		}
		out = append(out, registry.Key{Role: p[0], Method: p[1]})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Role != out[j].Role {
			return out[i].Role < out[j].Role
		}
		return out[i].Method < out[j].Method
	})
	return out, nil
}

// Each reads every artifact in key order, in bulk as Summaries does (fleet_bulk.go), and calls fn
// with it or the error reading it, as Load returns them.
func (f *FleetStore) Each(fn func(k registry.Key, a *registry.Artifact, err error) error) error {
	return f.eachBulk(fn)
}

// Summaries lists every artifact's summary with its merged metrics, the newest generation's
// trigger and the params schema, in key order: two bulk reads (the records, their metrics; see
// fleet_bulk.go), each record at least as new as the watch reported, as Load reads it.
func (f *FleetStore) Summaries() ([]registry.Summary, error) { return f.summariesBulk() }

// summariesPerKey is Summaries by one get per record and one per its metrics (a few parallel
// readers): what Summaries did before the bulk reads, kept as their baseline (the benchmark and the
// test that both list the same).
func (f *FleetStore) summariesPerKey() ([]registry.Summary, error) {
	keys, err := f.List()
	if err != nil {
		return nil, err
	}
	out := make([]registry.Summary, len(keys))
	mins := make([]seen, len(keys)) // as Load: at least what the watch reported (another process's writes)
	f.mu.RLock()
	for i, k := range keys {
		mins[i] = f.latest[k]
	}
	f.mu.RUnlock()
	gone := make([]bool, len(keys))
	errs := make([]error, len(keys))
	const readers = 8
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(context.Background(), fleetOpTimeout+time.Duration(len(keys))*time.Millisecond)
	defer cancel()
	for w := 0; w < readers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(keys); i += readers {
				k := keys[i]
				v, _, _, err := f.read(ctx, k.Role, k.Method, mins[i])
				switch {
				case err == nil:
					out[i] = summaryOf(v)
				case errors.Is(err, registry.ErrNotFound):
					gone[i] = true
				case errors.Is(err, registry.ErrCorrupt) || errors.Is(err, registry.ErrIncompatible):
					out[i] = registry.Summary{Role: k.Role, Method: k.Method, Err: err}
				default:
					errs[i] = err
				}
			}
		}(w)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, f.fail(err)
	}
	res := out[:0]
	for i := range out {
		if !gone[i] {
			res = append(res, out[i])
		}
	}
	return res, nil
}

func summaryOf(a *registry.Artifact) registry.Summary { return registry.SummaryOf(a) }

// --- roles --------------------------------------------------------------------------------------

func notFoundRole(name string) error {
	return fmt.Errorf("registry: role %q: %w; add it with `forge role add -f contract.json` (or --role %s --purpose ...)", name, registry.ErrNotFound, name)
}

func (f *FleetStore) readRole(ctx context.Context, name string, min seen) (*registry.RoleRecord, storedRole, uint64, error) {
	key, err := f.st.RoleKey(name)
	if err != nil {
		return nil, storedRole{}, 0, err
	}
	e, err := getAtLeast(ctx, f.roles, key, min)
	if errors.Is(err, registry.ErrNotFound) {
		return nil, storedRole{}, e.Revision, notFoundRole(name)
	}
	if err != nil {
		return nil, storedRole{}, 0, err
	}
	sr, err := f.checkRole(name, e)
	if err != nil {
		return nil, sr, e.Revision, err
	}
	mkey, _ := f.st.RoleMetricsKey(name)
	m, err := f.metrics(ctx, mkey)
	if err != nil {
		return nil, sr, 0, err
	}
	return roleView(sr.Rec, sr.Base, m), sr, e.Revision, nil
}

// checkRole is the role record e of name, or why it is damaged (readRole and the bulk Roles).
func (f *FleetStore) checkRole(name string, e Entry[storedRole]) (storedRole, error) {
	sr := e.Value
	if sr.Err == nil && sr.Rec.Role != name {
		sr.Err = fmt.Errorf("%w: the record of role %q names role %q", registry.ErrCorrupt, name, sr.Rec.Role)
	}
	if sr.Err != nil {
		return sr, fmt.Errorf("registry: role %q (%s revision %d): %w", name, f.loc, e.Revision, sr.Err)
	}
	return sr, nil
}

// Role returns a role's record with its usage, from memory when cached (the watch drops it when
// anyone rewrites the role).
func (f *FleetStore) Role(name string) (*registry.RoleRecord, error) {
	if err := registry.ValidateName("role", name); err != nil {
		return nil, err
	}
	f.mu.RLock()
	c, epoch, minRev, old := f.roleC[name], f.epoch, f.latestR[name], f.staleR[name]
	f.mu.RUnlock()
	if c != nil {
		return c.rec, nil
	}
	if old == nil {
		old = c
	}
	timeout := f.opTimeout
	if old != nil {
		if !f.st.nc.IsConnected() {
			f.installRole(name, old, f.epochNow())
			return old.rec, nil
		}
		timeout = fleetFallbackTimeout
	}
	ctx, cancel := context.WithTimeout(f.link.ctx(), timeout)
	defer cancel()
	rec, sr, rev, err := f.readRole(ctx, name, minRev)
	if err != nil {
		if old != nil && !errors.Is(err, registry.ErrNotFound) && !errors.Is(err, registry.ErrCorrupt) && !errors.Is(err, registry.ErrIncompatible) {
			f.installRole(name, old, f.epochNow())
			return old.rec, nil
		}
		return nil, f.fail(err)
	}
	f.installRole(name, &cachedRole{rec: rec, stored: sr.Rec, base: sr.Base, rev: rev}, epoch)
	return rec, nil
}

func (f *FleetStore) installRole(name string, c *cachedRole, epoch uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.epoch != epoch || c.rev < f.latestR[name].rev {
		return
	}
	if cur := f.roleC[name]; cur != nil && cur.rev > c.rev {
		return
	}
	f.roleC[name] = c
	delete(f.staleR, name)
}

// Roles returns every role, by name, read fresh in bulk (fleet_bulk.go; damaged ones are left
// out, as the directory store leaves out roles it cannot restore).
func (f *FleetStore) Roles() ([]*registry.RoleRecord, error) { return f.rolesBulk() }

// PutRole adds or replaces a role's contract.
func (f *FleetStore) PutRole(c registry.Contract, now time.Time) (registry.RoleRecord, error) {
	rec, _, err := f.PutRoleReport(c, now)
	return rec, err
}

// PutRoleReport is PutRole that also returns the record it replaced (nil when new); the role's
// creation time and usage are kept.
func (f *FleetStore) PutRoleReport(c registry.Contract, now time.Time) (registry.RoleRecord, *registry.RoleRecord, error) {
	if err := c.Validate(); err != nil {
		return registry.RoleRecord{}, nil, err
	}
	var prev *registry.RoleRecord
	rec, err := f.writeRole(c.Role, func(cur *registry.RoleRecord) *registry.RoleRecord {
		var r *registry.RoleRecord
		r, prev = registry.ReplaceContract(cur, c, now) // prev is set again on each retry
		return r
	})
	if err != nil {
		return registry.RoleRecord{}, nil, err
	}
	return *rec, prev, nil
}

// writeRole is the compare-and-set read-modify-write of a role: next gets the current view (nil
// when there is none or it is damaged) and returns the record to store.
func (f *FleetStore) writeRole(name string, next func(cur *registry.RoleRecord) *registry.RoleRecord) (*registry.RoleRecord, error) {
	key, err := f.st.RoleKey(name)
	if err != nil {
		return nil, err
	}
	mkey, _ := f.st.RoleMetricsKey(name)
	ctx, cancel := f.opCtx()
	defer cancel()
	e, err := f.roles.Update(ctx, key, func(old storedRole, exists bool) (storedRole, error) {
		m, err := f.metrics(ctx, mkey)
		if err != nil {
			return storedRole{}, err
		}
		var cur *registry.RoleRecord
		switch {
		case exists && old.Err == nil && old.Rec.Role == name:
			cur = roleView(old.Rec, old.Base, m)
		case exists && errors.Is(old.Err, registry.ErrIncompatible):
			return storedRole{}, fmt.Errorf("registry: role %q in %s: %w; upgrade this forge", name, f.loc, old.Err)
		}
		return storedRole{Rec: next(cur), Base: newBase(old.Base, m)}, nil
	})
	if err != nil {
		return nil, f.fail(err)
	}
	rec := e.Value.Rec
	f.installRole(name, &cachedRole{rec: rec, stored: rec, base: e.Value.Base, rev: e.Revision}, f.epochNow())
	return rec, nil
}

// --- import -------------------------------------------------------------------------------------

// ImportRole writes rec as given (times and usage included), replacing the stored role.
func (f *FleetStore) ImportRole(rec registry.RoleRecord) error {
	if err := rec.Contract.Validate(); err != nil {
		return fmt.Errorf("registry: import role %q into %s: %w", rec.Role, f.loc, err)
	}
	if rec.Fingerprint != rec.Contract.Fingerprint() {
		return fmt.Errorf("registry: import role %q into %s: %w: the contract does not match its contract_fingerprint", rec.Role, f.loc, registry.ErrCorrupt)
	}
	r := rec
	_, err := f.writeRole(rec.Role, func(*registry.RoleRecord) *registry.RoleRecord { c := r; return &c })
	return err
}

// ImportArtifact writes a as given (counters, times, lifecycle and history included), replacing
// the stored artifact; Load then shows it unchanged until new calls are flushed.
func (f *FleetStore) ImportArtifact(a *registry.Artifact) error {
	if a == nil {
		return errors.New("registry: import: nil artifact")
	}
	data, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("registry: import %s.%s into %s: %w", a.Role, a.Method, f.loc, err)
	}
	if _, err := registry.DecodeArtifact(data); err != nil {
		return fmt.Errorf("registry: import %s.%s into %s: %w", a.Role, a.Method, f.loc, err)
	}
	key, _ := f.st.ArtifactKey(a.Role, a.Method)
	mkey, _ := f.st.MetricsKey(a.Role, a.Method)
	ctx, cancel := f.opCtx()
	defer cancel()
	e, err := f.arts.Update(ctx, key, func(old storedArtifact, _ bool) (storedArtifact, error) {
		m, err := f.metrics(ctx, mkey)
		if err != nil {
			return storedArtifact{}, err
		}
		c := *a
		return storedArtifact{A: &c, Base: newBase(old.Base, m)}, nil
	})
	if err != nil {
		return f.fail(err)
	}
	f.install(registry.Key{Role: a.Role, Method: a.Method}, &cachedArtifact{a: e.Value.A, rec: e.Value.A, base: e.Value.Base, rev: e.Revision}, f.epochNow())
	return nil
}

// --- generation lock ----------------------------------------------------------------------------

// WithGenerationLock runs fn holding role.method's generation lease (GenerationLeaseTTL, renewed
// while fn runs), so that the fleet generates a method once however many callers miss it at once.
// A crashed holder's lease expires within the TTL.
func (f *FleetStore) WithGenerationLock(role, method string, fn func() error) error {
	if err := validKey(role, method); err != nil {
		return err
	}
	name := GenerationLeaseName(role, method)
	mu, _ := f.genLocks.LoadOrStore(name, &sync.Mutex{})
	mu.(*sync.Mutex).Lock() // this process's callers queue here, not on the server
	defer mu.(*sync.Mutex).Unlock()
	ctx, cancel := context.WithTimeout(f.link.ctx(), generationWait)
	le, err := f.st.Leases.Acquire(ctx, name, f.genTTL)
	cancel()
	if err != nil {
		return f.fail(fmt.Errorf("generation lock of %s.%s: %w (another process may be generating it; retry later)", role, method, err))
	}
	le.KeepAlive()
	defer func() {
		ctx, cancel := f.opCtx()
		defer cancel()
		_ = le.Release(ctx) // on failure the lease expires by itself within its TTL
	}()
	return fn()
}

// --- watch --------------------------------------------------------------------------------------

// onChange is the store watch's handler: it keeps the cache coherent, then tells the subscribers.
func (f *FleetStore) onChange(c Change) {
	if c.Kind == registry.ChangeAll {
		f.link.suspect() // the watch lost its server, or fell behind: is the server still there?
	}
	f.mu.Lock()
	switch c.Kind {
	case registry.ChangeArtifact:
		k := registry.Key{Role: c.Role, Method: c.Method}
		if c.Revision > f.latest[k].rev {
			f.latest[k] = seen{c.Revision, c.Deleted}
		}
		if e := f.cache[k]; e != nil && e.rev < c.Revision {
			delete(f.cache, k)
		}
		if e := f.stale[k]; e != nil && e.rev < c.Revision {
			delete(f.stale, k) // a set-aside copy stays while no newer revision is known
		}
	case registry.ChangeRole:
		if c.Revision > f.latestR[c.Role].rev {
			f.latestR[c.Role] = seen{c.Revision, c.Deleted}
		}
		if e := f.roleC[c.Role]; e != nil && e.rev < c.Revision {
			delete(f.roleC, c.Role)
		}
		if e := f.staleR[c.Role]; e != nil && e.rev < c.Revision {
			delete(f.staleR, c.Role)
		}
	case registry.ChangeAll:
		f.epoch++
		for k, e := range f.cache {
			f.stale[k] = e
		}
		for k, e := range f.roleC {
			f.staleR[k] = e
		}
		clear(f.cache)
		clear(f.roleC)
	default:
		f.mu.Unlock()
		return // knowledge: the learner reads it afresh
	}
	f.mu.Unlock()
	f.subsMu.Lock()
	for s := range f.subs {
		s.add(c.Change)
	}
	f.subsMu.Unlock()
}

// subscriber batches changes for one Watch callback: collected until quiet for
// registry.WatchDebounce (at most registry.WatchMaxDelay after the first).
type subscriber struct {
	f       *FleetStore
	fn      func([]registry.Change)
	mu      sync.Mutex
	pending []registry.Change
	wake    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

const maxPendingChanges = 1024

func (s *subscriber) add(c registry.Change) {
	s.mu.Lock()
	switch {
	case len(s.pending) == 1 && s.pending[0].Kind == registry.ChangeAll:
	case c.Kind == registry.ChangeAll || len(s.pending) >= maxPendingChanges:
		s.pending = append(s.pending[:0], registry.Change{Kind: registry.ChangeAll})
	default:
		s.pending = append(s.pending, c)
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *subscriber) loop() {
	defer close(s.done)
	for {
		select {
		case <-s.stop:
			return
		case <-s.wake:
		}
		first := time.Now()
	quiet:
		for time.Since(first) < registry.WatchMaxDelay {
			select {
			case <-s.wake:
			case <-time.After(registry.WatchDebounce):
				break quiet
			case <-s.stop:
				return
			}
		}
		s.mu.Lock()
		batch := s.pending
		s.pending = nil
		s.mu.Unlock()
		if len(batch) > 0 && s.fn != nil {
			s.fn(batch)
		}
	}
}

func (s *subscriber) Close() error {
	s.once.Do(func() {
		s.f.subsMu.Lock()
		delete(s.f.subs, s)
		s.f.subsMu.Unlock()
		close(s.stop)
		<-s.done
	})
	return nil
}

// Watch calls onChange with batches of the roles and artifacts written by any process (this one
// included), and a ChangeAll when the store's watch may have fallen behind. The cache has been
// updated before onChange runs.
func (f *FleetStore) Watch(onChange func([]registry.Change)) (io.Closer, error) {
	if f.closed.Load() {
		return nil, fmt.Errorf("registry: store %s is closed", f.loc)
	}
	s := &subscriber{f: f, fn: onChange, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	f.subsMu.Lock()
	f.subs[s] = struct{}{}
	f.subsMu.Unlock()
	go s.loop()
	return s, nil
}

// Close stops the watches and recorders' connection and closes the connection.
func (f *FleetStore) Close() error {
	if f.closed.Swap(true) {
		return nil
	}
	f.subsMu.Lock()
	subs := make([]*subscriber, 0, len(f.subs))
	for s := range f.subs {
		subs = append(subs, s)
	}
	f.subsMu.Unlock()
	for _, s := range subs {
		s.Close()
	}
	// A watch whose consumer is being recreated against a server that does not answer holds its
	// lock for the recreation's request (10 s): closing the connection ends that request, so the
	// watch is given watchCloseWait and then the connection is closed under it.
	stopped := make(chan struct{})
	go func() { f.watcher.Close(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(watchCloseWait):
	}
	err := f.st.Close()
	select { // the watch ends once the connection is closed
	case <-stopped:
	case <-time.After(closeDrainTimeout):
	}
	f.link.close()
	return err
}

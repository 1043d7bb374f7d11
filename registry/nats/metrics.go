package nats

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/artifactforge/forge/registry"
)

// Metrics are the merged call outcomes of one artifact across the fleet: the sum of every
// process's flushed deltas. They live apart from the artifact (in NAME_metrics) so that a flush
// never rewrites code or lineage and a watcher of the data bucket never sees counter traffic.
type Metrics struct {
	registry.Counters
	Calls             int64      `json:"calls"`
	LastFailureReason string     `json:"last_failure_reason,omitempty"`
	LastFailureClass  string     `json:"last_failure_class,omitempty"`
	LastUsedAt        *time.Time `json:"last_used_at,omitempty"`
	// Writers is, per writer, the last flush sequence merged here (and when): a flush retried after
	// an ambiguous error (a timeout after which the write may or may not have landed) is applied
	// once. Marks older than MetricsMarkTTL are dropped.
	Writers map[string]WriterMark `json:"writers,omitempty"`
	// Journal is the highest metrics journal sequence folded in (see FoldMetrics).
	Journal uint64 `json:"journal,omitempty"`
	// Gens are the outcomes of the last MaxGenWindows generations that recorded any, the most
	// recently recorded first: what a record's recent window, last failure and durable promotion
	// take (the sums above take every generation's). A view merges the entry of its record's own
	// generation only (see sinceBase), so an outcome of a replaced generation, however late it is
	// flushed, never enters the new generation's window. Empty in metrics written before outcomes
	// carried their generation: the top-level Recent then serves, as it did.
	Gens []GenMetrics `json:"gens,omitempty"`
}

// GenMetrics are one generation's merged outcomes.
type GenMetrics struct {
	Gen      int   `json:"gen"`
	Calls    int64 `json:"calls"`    // its outcomes merged here
	Failures int64 `json:"failures"` // of which failures
	// Recent is its last RecentWindow outcome letters, oldest first; the last failure is its own.
	Recent            string `json:"recent,omitempty"`
	LastFailureClass  string `json:"last_failure_class,omitempty"`
	LastFailureReason string `json:"last_failure_reason,omitempty"`
}

// MaxGenWindows is how many generations' outcomes a Metrics value keeps apart (Gens): the current
// one and those whose calls may still be in flight or in a flush (registry.MaxHistory).
const MaxGenWindows = registry.MaxHistory

// genOf returns generation gen's entry of gens (the zero entry when there is none).
func genOf(gens []GenMetrics, gen int) GenMetrics {
	for _, g := range gens {
		if g.Gen == gen {
			return g
		}
	}
	return GenMetrics{Gen: gen}
}

// WriterMark is a writer's last merged flush.
type WriterMark struct {
	Seq uint64    `json:"seq"`
	At  time.Time `json:"at"`
}

// MetricsMarkTTL is how long a writer's mark is kept; a flush still unconfirmed after this long is
// dropped by its writer (reported), so a mark dropped here is never needed again.
const MetricsMarkTTL = time.Hour

// Delta is what one process adds to one artifact's metrics in one flush: sums and max of every
// outcome, and the outcomes of generation Gen (registry.BufferedDelta): Counters.Recent (its
// letters, oldest first), GenCalls, GenFailures and the last failure.
type Delta struct {
	Counters          registry.Counters // sums and max; Recent = generation Gen's outcome letters, oldest first
	Calls             int64
	LastFailureReason string
	LastFailureClass  string
	At                time.Time
	Gen               int   `json:"gen,omitempty"`
	GenCalls          int64 `json:"gen_calls,omitempty"`
	GenFailures       int64 `json:"gen_failures,omitempty"`
}

// Add merges d into m (commutative for every sum; Recent and the last failure follow merge order).
func (m *Metrics) Add(d Delta) {
	c := &m.Counters
	c.SuccessCount += d.Counters.SuccessCount
	c.FailureCount += d.Counters.FailureCount
	c.IntrinsicFailureCount += d.Counters.IntrinsicFailureCount
	c.AdaptiveFailureCount += d.Counters.AdaptiveFailureCount
	c.ExtrinsicFailureCount += d.Counters.ExtrinsicFailureCount
	c.CallerFailureCount += d.Counters.CallerFailureCount
	c.TotalDurationNanos += d.Counters.TotalDurationNanos
	if d.Counters.MaxDurationNanos > c.MaxDurationNanos {
		c.MaxDurationNanos = d.Counters.MaxDurationNanos
	}
	recent := c.Recent + d.Counters.Recent
	if len(recent) > registry.RecentWindow {
		recent = recent[len(recent)-registry.RecentWindow:]
	}
	c.Recent = recent
	health := 0
	for i := 0; i < len(recent); i++ {
		if recent[i] == 'i' || recent[i] == 'a' {
			health++
		}
	}
	c.RecentFailureRate = 0
	if len(recent) > 0 {
		c.RecentFailureRate = float64(health) / float64(len(recent))
	}
	m.Calls += d.Calls
	if d.LastFailureClass != "" {
		m.LastFailureClass, m.LastFailureReason = d.LastFailureClass, registry.CapReason(d.LastFailureReason)
	}
	if !d.At.IsZero() && (m.LastUsedAt == nil || d.At.After(*m.LastUsedAt)) {
		t := d.At.UTC()
		m.LastUsedAt = &t
	}
	if d.GenCalls > 0 {
		// A new slice: m may share its entries with a base or a cached copy.
		g := genOf(m.Gens, d.Gen)
		gens := make([]GenMetrics, 1, min(len(m.Gens)+1, MaxGenWindows))
		for _, e := range m.Gens {
			if e.Gen != d.Gen && len(gens) < MaxGenWindows {
				gens = append(gens, e)
			}
		}
		g.Calls += d.GenCalls
		g.Failures += d.GenFailures
		g.Recent += d.Counters.Recent
		if len(g.Recent) > registry.RecentWindow {
			g.Recent = g.Recent[len(g.Recent)-registry.RecentWindow:]
		}
		if d.LastFailureClass != "" {
			g.LastFailureClass, g.LastFailureReason = d.LastFailureClass, registry.CapReason(d.LastFailureReason)
		}
		gens[0] = g
		m.Gens = gens
	}
}

// MetricsWriter flushes one process's metric deltas into the fleet's merged metrics without lost
// or doubled updates: each artifact's flush is a compare-and-set of its Metrics (concurrent writers
// retry), tagged with this writer's flush sequence so that a retry of a flush whose outcome was
// unknown is applied at most once. Use one per process; Flush is safe for concurrent use but
// flushes run one at a time.
type MetricsWriter struct {
	s        *Store
	writer   string
	parallel int
	seq      atomic.Uint64

	mu    sync.Mutex // one flush at a time; guards retry
	retry map[registry.Key][]seqDelta
}

type seqDelta struct {
	seq   uint64
	d     Delta
	first time.Time
}

// DefaultFlushParallel is how many compare-and-sets a flush keeps in flight.
const DefaultFlushParallel = 32

// NewMetricsWriter is a writer named after the store handle (suffix tells writers of one handle
// apart, "" for the usual one per process).
func (s *Store) NewMetricsWriter(suffix string) *MetricsWriter {
	id := s.id
	if suffix != "" {
		id += "/" + suffix
	}
	return &MetricsWriter{s: s, writer: id, parallel: DefaultFlushParallel, retry: map[registry.Key][]seqDelta{}}
}

// FlushReport tells what a flush merged (calls per artifact) and what it keeps for the next flush.
type FlushReport struct {
	Merged    map[registry.Key]int64
	Revisions map[registry.Key]uint64 // the revision each merged artifact's metrics have now
	// Metrics is each merged artifact's metrics as this flush wrote them (every flush merged before
	// it included), from the per-artifact writer only (the journal's are merged by its folder).
	Metrics map[registry.Key]Metrics
	Kept    map[registry.Key]error // retried by the next Flush
	Dropped map[registry.Key]error // given up (invalid name, or unconfirmed for MetricsMarkTTL)
}

// Flush merges deltas (and every delta kept by earlier failed flushes) into the fleet metrics.
// Deltas that could not be written are kept and retried, with their sequence, by the next Flush.
func (w *MetricsWriter) Flush(ctx context.Context, deltas map[registry.Key]Delta) FlushReport {
	w.mu.Lock()
	defer w.mu.Unlock()
	rep := FlushReport{Merged: map[registry.Key]int64{}, Revisions: map[registry.Key]uint64{}, Metrics: map[registry.Key]Metrics{},
		Kept: map[registry.Key]error{}, Dropped: map[registry.Key]error{}}
	now := time.Now()
	seq := w.seq.Add(1)
	work := make(map[registry.Key][]seqDelta, len(deltas)+len(w.retry))
	for k, b := range w.retry {
		work[k] = b
	}
	for k, d := range deltas {
		work[k] = append(work[k], seqDelta{seq: seq, d: d, first: now})
	}
	w.retry = map[registry.Key][]seqDelta{}

	type result struct {
		k     registry.Key
		calls int64
		rev   uint64
		m     Metrics
		err   error
	}
	results := make(chan result, len(work))
	sem := make(chan struct{}, w.parallel)
	var wg sync.WaitGroup
	for k, batch := range work {
		if now.Sub(batch[0].first) > MetricsMarkTTL {
			rep.Dropped[k] = fmt.Errorf("nats: %d flush(es) of %s unconfirmed for %v: dropped (the store was unreachable)", len(batch), k, MetricsMarkTTL)
			continue
		}
		key, err := w.s.metricsKeyFor(k)
		if err != nil {
			rep.Dropped[k] = err
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var calls int64
			e, err := w.s.Metrics.Update(ctx, key, func(m Metrics, _ bool) (Metrics, error) {
				calls = 0
				mark := m.Writers[w.writer]
				last := batch[len(batch)-1].seq
				if mark.Seq >= last {
					return m, ErrNoChange // an earlier, ambiguous attempt landed
				}
				for _, sd := range batch {
					if sd.seq > mark.Seq {
						m.Add(sd.d)
						calls += sd.d.Calls
					}
				}
				if m.Writers == nil {
					m.Writers = map[string]WriterMark{}
				}
				for id, wm := range m.Writers {
					if now.Sub(wm.At) > MetricsMarkTTL {
						delete(m.Writers, id)
					}
				}
				m.Writers[w.writer] = WriterMark{Seq: last, At: now.UTC()}
				return m, nil
			})
			results <- result{k: k, calls: calls, rev: e.Revision, m: e.Value, err: err}
		}()
	}
	wg.Wait()
	close(results)
	for r := range results {
		if r.err != nil {
			w.retry[r.k] = work[r.k]
			rep.Kept[r.k] = r.err
			continue
		}
		rep.Merged[r.k] = r.calls
		rep.Revisions[r.k] = r.rev
		rep.Metrics[r.k] = r.m
	}
	return rep
}

// Pending is how many artifacts have deltas kept for the next flush.
func (w *MetricsWriter) Pending() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.retry)
}

// RoleMetricsPrefix starts the metrics bucket keys of roles' usage (ROLE.<role>): a role's calls
// summed over its methods, merged like an artifact's. EscapeToken never writes upper-case letters
// outside an escape, so no artifact key (<role>.<method>) can collide with it.
const RoleMetricsPrefix = "ROLE."

// RoleMetricsKey is the metrics bucket key of a role's usage.
func (s *Store) RoleMetricsKey(role string) (string, error) {
	if err := registry.ValidateName("role", role); err != nil {
		return "", err
	}
	tok, err := EscapeToken(role)
	if err != nil {
		return "", err
	}
	return RoleMetricsPrefix + tok, nil
}

// metricsKeyFor is a flush key's metrics key: an artifact's, or a role's usage when Method is "".
func (s *Store) metricsKeyFor(k registry.Key) (string, error) {
	if k.Method == "" {
		return s.RoleMetricsKey(k.Role)
	}
	return s.MetricsKey(k.Role, k.Method)
}

// GetMetrics returns role.method's merged metrics (registry.ErrNotFound if none were ever flushed)
// as of revision minRev or later (0: whatever a replica has; see Table.GetAtLeast).
func (s *Store) GetMetrics(ctx context.Context, role, method string, minRev uint64) (Metrics, error) {
	key, err := s.MetricsKey(role, method)
	if err != nil {
		return Metrics{}, err
	}
	e, err := s.Metrics.GetAtLeast(ctx, key, minRev)
	return e.Value, err
}

package nats

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/artifactforge/forge/registry"
)

// fleetRecorder buffers call outcomes (registry.RecordBuffer) and flushes them with a
// MetricsWriter: one compare-and-set per touched artifact and per touched role per flush, tagged
// with the writer's flush sequence so that a retried flush counts once. What a flush could not
// write is kept by the writer (with its sequence) and retried by the next flush.
type fleetRecorder struct {
	f        *FleetStore
	buf      *registry.RecordBuffer
	w        *MetricsWriter
	interval time.Duration

	flushMu sync.Mutex
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

// NewRecorder starts a recorder flushing into the metrics bucket every interval
// (registry.DefaultFlushInterval if 0).
func (f *FleetStore) NewRecorder(interval time.Duration) registry.MetricsRecorder {
	if interval <= 0 {
		interval = registry.DefaultFlushInterval
	}
	r := &fleetRecorder{f: f, buf: registry.NewRecordBuffer(), w: f.st.NewMetricsWriter("rec-" + nuid.Next()), interval: interval,
		stop: make(chan struct{}), done: make(chan struct{})}
	go r.loop()
	return r
}

// loop flushes every interval, counted from the end of the previous flush: a flush that waited
// for an unreachable store is not followed at once by another (a ticker's pending tick), which
// would take the flush lock ahead of a caller's Flush waiting for it.
func (r *fleetRecorder) loop() {
	defer close(r.done)
	t := time.NewTimer(r.interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			r.Flush()
			t.Reset(r.interval)
		case <-r.stop:
			return
		}
	}
}

// Record adds one call's outcome, of a generation not known, in memory: it is judged with the
// generation of whatever record it is merged into (see sinceBase).
func (r *fleetRecorder) Record(role, method string, o registry.Outcome, d time.Duration, reason string) {
	r.buf.Record(role, method, o, d, reason)
}

// RecordGen adds one call's outcome of generation gen, in memory (registry.RecordBuffer.RecordGen).
func (r *fleetRecorder) RecordGen(role, method string, gen int, o registry.Outcome, d time.Duration, reason string) {
	r.buf.RecordGen(role, method, gen, o, d, reason)
}

// Handle implements registry.HandleRecorder: Record without the lookup, for the warm path.
func (r *fleetRecorder) Handle(role, method string) *registry.RecordHandle {
	return r.buf.Handle(role, method)
}

// Flush merges what is buffered into the fleet's metrics, advances this process's cached views by
// the same outcomes, and writes the rare lifecycle change they cause (a candidate proven durable)
// to the artifact record. Outcomes of an artifact that does not exist are dropped; outcomes that
// could not be written are kept for the next flush (reported in Dropped, saying so).
func (r *fleetRecorder) Flush() registry.FlushReport {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	f := r.f
	rep := registry.FlushReport{Merged: map[registry.Key]int64{}, Dropped: map[registry.Key]error{}}
	deltas := r.buf.Take()
	if len(deltas) == 0 && r.w.Pending() == 0 {
		return rep
	}
	if nc := f.st.Conn(); !nc.IsConnected() {
		// The connection is down (reconnecting, or closed): a write would only wait out the
		// operation timeout. The outcomes go back to the buffer for the next flush.
		why := f.fail(nats.ErrConnectionReconnecting)
		if nc.IsClosed() {
			why = f.fail(nats.ErrConnectionClosed)
		}
		for k, d := range deltas {
			r.buf.GiveBack(k, d)
			rep.Dropped[k] = fmt.Errorf("registry: %d call outcome(s) for %s kept for the next flush: %w", d.Calls, k, why)
		}
		return rep
	}
	now := time.Now().UTC()
	ctx, cancel := f.opCtx()
	defer cancel()
	md := make(map[registry.Key]Delta, len(deltas))
	roles := map[string]Delta{}
	for k, d := range deltas {
		f.mu.RLock()
		cached := f.cache[k] != nil
		f.mu.RUnlock()
		if !cached {
			key, err := f.st.ArtifactKey(k.Role, k.Method)
			if err != nil {
				rep.Dropped[k] = err
				continue
			}
			if _, err := f.st.Data.Get(ctx, key); err != nil && isNotFound(err) {
				rep.Dropped[k] = fmt.Errorf("registry: %d call outcome(s) for %s dropped: the artifact is gone from %s", d.Calls, k, f.loc)
				continue
			}
		}
		md[k] = Delta{Counters: d.Counters, Calls: d.Calls, LastFailureClass: d.LastClass, LastFailureReason: d.LastReason, At: now,
			Gen: d.Gen, GenCalls: d.GenCalls, GenFailures: d.GenFailures}
		u := roles[k.Role]
		u.Calls += d.Calls
		u.At = now
		roles[k.Role] = u
	}
	for role, u := range roles {
		md[registry.Key{Role: role}] = u
	}
	wr := r.w.Flush(ctx, md)
	for k, err := range wr.Kept {
		if k.Method == "" {
			continue
		}
		rep.Dropped[k] = fmt.Errorf("registry: call outcome(s) for %s kept for the next flush: %w", k, f.fail(err))
	}
	for k, err := range wr.Dropped {
		if k.Method != "" {
			rep.Dropped[k] = f.fail(err)
		}
	}
	// The cached views take the merged metrics each compare-and-set wrote: this flush and every
	// other process's merged before it, so a candidate is promoted on the fleet's calls.
	// The new views are computed outside the lock and swapped in if the entry did not change
	// meanwhile: Lookups wait only for the swap.
	var promote, uncached []registry.Key
	type swap struct {
		k      registry.Key
		oa, na *cachedArtifact
		or, nr *cachedRole
	}
	var swaps []swap
	f.mu.RLock()
	for k := range wr.Merged {
		if k.Method == "" {
			if rc := f.roleC[k.Role]; rc != nil {
				swaps = append(swaps, swap{k: k, or: rc})
			}
		} else if c := f.cache[k]; c != nil {
			swaps = append(swaps, swap{k: k, oa: c})
		}
	}
	f.mu.RUnlock()
	for i := range swaps {
		sw := &swaps[i]
		m, ok := wr.Metrics[sw.k]
		switch {
		case !ok:
		case sw.or != nil:
			sw.nr = &cachedRole{rec: roleView(sw.or.stored, sw.or.base, &m), stored: sw.or.stored, base: sw.or.base, rev: sw.or.rev}
		default:
			sw.na = sw.oa.withMetrics(&m)
			sw.na.used.Store(sw.oa.used.Load())
		}
	}
	swapped := map[registry.Key]bool{}
	f.mu.Lock()
	for _, sw := range swaps {
		switch {
		case sw.nr != nil && f.roleC[sw.k.Role] == sw.or:
			f.roleC[sw.k.Role] = sw.nr
		case sw.na != nil && f.cache[sw.k] == sw.oa:
			f.cache[sw.k] = sw.na
			swapped[sw.k] = true
			if sw.oa.rec.Lifecycle == registry.Candidate && sw.na.a.Lifecycle == registry.Durable {
				promote = append(promote, sw.k)
			}
		}
	}
	f.mu.Unlock()
	for k, calls := range wr.Merged {
		if k.Method == "" {
			continue
		}
		rep.Merged[k] = calls
		if !swapped[k] {
			uncached = append(uncached, k)
		}
	}
	for _, k := range uncached {
		if a, err := f.Load(k.Role, k.Method); err == nil && a.Lifecycle == registry.Durable {
			f.mu.RLock()
			c := f.cache[k]
			f.mu.RUnlock()
			if c != nil && c.rec.Lifecycle == registry.Candidate {
				promote = append(promote, k)
			}
		}
	}
	sort.Slice(promote, func(i, j int) bool { return promote[i].String() < promote[j].String() })
	for _, k := range promote {
		_, _ = f.Update(k.Role, k.Method, func(a *registry.Artifact, exists bool) error {
			if !exists {
				return registry.ErrNotFound
			}
			return nil // the merged view, durable, becomes the record
		})
	}
	return rep
}

// Close stops the background flushes and flushes what is buffered.
func (r *fleetRecorder) Close() registry.FlushReport {
	r.once.Do(func() { close(r.stop) })
	<-r.done
	return r.Flush()
}

func isNotFound(err error) bool {
	return errors.Is(err, registry.ErrNotFound) || errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted)
}

// --- knowledge ----------------------------------------------------------------------------------

// Knowledge is the learner's domain documents in the data bucket (knowledge.<domain>), changed by
// compare-and-set; a document's version is its KV revision.
func (f *FleetStore) Knowledge() registry.Docs { return fleetDocs{f} }

type fleetDocs struct{ f *FleetStore }

// Names lists the documents, sorted.
func (d fleetDocs) Names() ([]string, error) {
	ctx, cancel := d.f.opCtx()
	defer cancel()
	keys, err := d.f.st.Knowledge.List(ctx, "")
	if err != nil {
		return nil, d.f.fail(err)
	}
	var out []string
	for _, k := range keys {
		if p, ok := d.f.st.Knowledge.Parts(k); ok && len(p) == 1 {
			out = append(out, p[0])
		}
	}
	sort.Strings(out)
	return out, nil
}

// Read returns a document and its revision (nil, "", nil when there is none).
func (d fleetDocs) Read(name string) ([]byte, string, error) {
	key, err := d.f.st.KnowledgeKey(name)
	if err != nil {
		return nil, "", err
	}
	ctx, cancel := d.f.opCtx()
	defer cancel()
	e, err := d.f.st.Knowledge.Get(ctx, key)
	if errors.Is(err, registry.ErrNotFound) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", d.f.fail(err)
	}
	return e.Value, strconv.FormatUint(e.Revision, 10), nil
}

// Modify replaces a document with fn(old) by compare-and-set (fn may run again after a conflict).
func (d fleetDocs) Modify(name string, fn func(old []byte) ([]byte, error)) error {
	key, err := d.f.st.KnowledgeKey(name)
	if err != nil {
		return err
	}
	ctx, cancel := d.f.opCtx()
	defer cancel()
	_, err = d.f.st.Knowledge.Update(ctx, key, func(old []byte, exists bool) ([]byte, error) {
		if !exists {
			old = nil
		}
		return fn(old)
	})
	if err != nil {
		return d.f.fail(err)
	}
	return nil
}

// Quarantine moves a damaged document to a quarantine entry (see Quarantined) and says which.
func (d fleetDocs) Quarantine(name string, why error) string {
	key, err := d.f.st.KnowledgeKey(name)
	if err != nil {
		return ""
	}
	ctx, cancel := d.f.opCtx()
	defer cancel()
	e, err := d.f.st.Data.Get(ctx, key)
	if err != nil {
		return ""
	}
	q, moved, err := d.f.moveAside(key, e.Value(), e.Revision(), why)
	if err != nil || !moved {
		return ""
	}
	return d.f.report(q).MovedTo + " (entry " + q.ID + ")"
}

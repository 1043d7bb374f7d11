package nats

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/artifactforge/forge/registry"
)

// Bulk reads: the listings (Summaries, Each, Roles) read the latest value of every key they list
// through one ordered consumer per bucket (a KV watch of the keys, ignoring deletes, that ends at
// the marker after the initial values) instead of one get per record and one per its metrics: a
// store of n artifacts is listed in a few round trips, not 2n (see RATIONALE.md, "Fleet listings
// read in bulk"). Each record is then merged with its metrics by the per-key path's merge.

// maxBulkDecoders bounds the goroutines decoding one bulk read's values.
const maxBulkDecoders = 4

// readAll delivers the latest value of every key of t matching filter (after t's prefix; ">" for
// all), decoded as Get decodes it, to each, from a few goroutines at once, in no order: a key
// written while the read runs may come twice (each with its revision). It fails when the store does not answer: when the watch
// cannot be created within ctx, or when no value (nor the end) arrives for idle.
func readAll[T any](ctx context.Context, t *Table[T], filter string, idle time.Duration, each func(key string, rev uint64, e Entry[T], err error)) (rerr error) {
	where := t.kv.Bucket() + "/" + t.prefix + filter
	w, err := t.kv.Watch(ctx, t.prefix+filter, jetstream.IgnoreDeletes())
	if err != nil {
		return fmt.Errorf("nats: read %s: %w (is the NATS server reachable?)", where, err)
	}
	defer func() { stopWatch(w, rerr != nil || ctx.Err() != nil) }()
	// Decoding is most of a bulk read's work (the values arrive faster than one core decodes
	// them): a few decoders run beside the loop that drains the watch, as the per-key reads ran
	// side by side. All have finished when readAll returns.
	jobs := make(chan jetstream.KeyValueEntry, 64)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), maxBulkDecoders) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for kve := range jobs {
				e, err := t.decode(kve.Key(), kve)
				each(kve.Key(), kve.Revision(), e, err)
			}
		}()
	}
	defer wg.Wait()
	defer close(jobs)
	timer := time.NewTimer(idle)
	defer timer.Stop()
	for n := 0; ; n++ {
		select {
		case kve, ok := <-w.Updates():
			if !ok {
				return fmt.Errorf("nats: read %s: the server ended the read after %d values: %w (is the NATS server reachable? retry)", where, n, jetstream.ErrConsumerNotFound)
			}
			if kve == nil {
				return nil // every initial value delivered
			}
			jobs <- kve
			if !timer.Stop() {
				<-timer.C
			}
			timer.Reset(idle)
		case <-timer.C:
			return fmt.Errorf("nats: read %s: no value for %v after %d values: %w", where, idle, n, context.DeadlineExceeded)
		case <-ctx.Done():
			return fmt.Errorf("nats: read %s after %d values: %w", where, n, ctx.Err())
		}
	}
}

// bulkEntry is one key's newest value seen by a bulk read, or the error decoding it.
type bulkEntry[T any] struct {
	e   Entry[T]
	rev uint64 // the entry's revision, even when it does not decode
	err error
}

// readAllLatest is readAll keeping each key's newest revision.
func readAllLatest[T any](ctx context.Context, t *Table[T], filter string, idle time.Duration) (map[string]bulkEntry[T], error) {
	out := map[string]bulkEntry[T]{}
	var mu sync.Mutex
	err := readAll(ctx, t, filter, idle, func(key string, rev uint64, e Entry[T], err error) {
		mu.Lock()
		defer mu.Unlock()
		if old, ok := out[key]; ok && old.rev > rev {
			return
		}
		out[key] = bulkEntry[T]{e, rev, err}
	})
	return out, err
}

// artifactRow is one artifact as a bulk read found it: its view, record and revision as read
// returns them, or the error read would return.
type artifactRow struct {
	k   registry.Key
	v   *registry.Artifact
	rec storedArtifact
	rev uint64
	err error
}

// bulkArtifacts reads every artifact of role (every artifact when role is "") and its metrics,
// two ordered consumers side by side, and merges each record with its metrics as read does. A
// record older than what the watch reported (mins, taken before the read) is read again by key, at
// least at that revision, as Load reads it; one the watch saw deleted is left out. The rows are in
// key order; a row's err is read's error for that record (not found is left out).
func (f *FleetStore) bulkArtifacts(ctx context.Context, role string, mins map[registry.Key]seen) ([]artifactRow, error) {
	afilter, mfilter := ">", "*.*"
	if role != "" {
		tok, err := EscapeToken(role)
		if err != nil {
			return nil, err
		}
		afilter, mfilter = tok+".*", tok+".*"
	}
	type mres struct {
		m   map[string]bulkEntry[Metrics]
		err error
	}
	mch := make(chan mres, 1)
	go func() {
		m, err := readAllLatest(ctx, f.st.Metrics, mfilter, f.opTimeout)
		mch <- mres{m, err}
	}()
	recs, err := readAllLatest(ctx, f.arts, afilter, f.opTimeout)
	mr := <-mch
	if err != nil {
		return nil, err
	}
	if mr.err != nil {
		return nil, mr.err
	}
	rows := make([]artifactRow, 0, len(recs))
	lagDeadline := time.Now().Add(f.opTimeout) // bounds all the reads again by key together
	for key, r := range recs {
		p, ok := f.arts.Parts(key)
		if !ok || len(p) != 2 || validKey(p[0], p[1]) != nil {
			continue // as List: not an artifact key
		}
		k := registry.Key{Role: p[0], Method: p[1]}
		min := mins[k]
		if r.rev < min.rev {
			if min.deleted {
				continue // deleted since: as getAtLeast, not found
			}
			// The consumer answered with a revision older than one the watch reported: read it by
			// key at least at that revision, as Load would (rare: a lagging replica).
			rctx, cancel := context.WithDeadline(ctx, lagDeadline)
			v, rec, rev, err := f.read(rctx, k.Role, k.Method, min)
			cancel()
			if !errors.Is(err, registry.ErrNotFound) {
				rows = append(rows, artifactRow{k, v, rec, rev, err})
			}
			continue
		}
		var m *Metrics
		var merr error
		mkey, _ := f.st.MetricsKey(k.Role, k.Method)
		if me, ok := mr.m[mkey]; ok {
			if merr = me.err; merr == nil {
				m = &me.e.Value
			}
		}
		v, rec, rev, err := f.merge(k.Role, k.Method, r.e, r.err, m, merr)
		if errors.Is(err, registry.ErrNotFound) {
			continue
		}
		rows = append(rows, artifactRow{k, v, rec, rev, err})
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].k.Role != rows[j].k.Role {
			return rows[i].k.Role < rows[j].k.Role
		}
		return rows[i].k.Method < rows[j].k.Method
	})
	return rows, nil
}

// minsNow is what the watch has reported so far, per artifact (a copy).
func (f *FleetStore) minsNow() map[registry.Key]seen {
	f.mu.RLock()
	defer f.mu.RUnlock()
	m := make(map[registry.Key]seen, len(f.latest))
	for k, s := range f.latest {
		m[k] = s
	}
	return m
}

// summaryRow is the summary listing row of an artifact read with error err: the summary, an Err
// row for a damaged record, or err itself when the store failed.
func summaryRow(k registry.Key, v *registry.Artifact, err error) (registry.Summary, error) {
	switch {
	case err == nil:
		return summaryOf(v), nil
	case errors.Is(err, registry.ErrCorrupt) || errors.Is(err, registry.ErrIncompatible):
		return registry.Summary{Role: k.Role, Method: k.Method, Err: err}, nil
	}
	return registry.Summary{}, err
}

// summariesBulk is Summaries by bulk reads of both buckets.
func (f *FleetStore) summariesBulk() ([]registry.Summary, error) {
	mins := f.minsNow()
	ctx, cancel := context.WithCancel(f.link.ctx())
	defer cancel()
	rows, err := f.bulkArtifacts(ctx, "", mins)
	if err != nil {
		return nil, f.fail(err)
	}
	out := make([]registry.Summary, 0, len(rows))
	var errs []error
	for _, r := range rows {
		s, err := summaryRow(r.k, r.v, r.err)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, s)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, f.fail(err)
	}
	return out, nil
}

// eachBulk is Each by one bulk read of each bucket, as Summaries reads them (so the whole store's
// artifacts are held in memory until fn has seen them all, as Summaries holds them): fn gets what
// Load would return for each artifact, in key order, and each good view is cached as Load caches
// it.
func (f *FleetStore) eachBulk(fn func(k registry.Key, a *registry.Artifact, err error) error) error {
	epoch, mins := f.epochNow(), f.minsNow()
	ctx, cancel := context.WithCancel(f.link.ctx())
	rows, err := f.bulkArtifacts(ctx, "", mins)
	cancel()
	if err != nil {
		return f.fail(err)
	}
	for i, r := range rows {
		rows[i] = artifactRow{} // fn may keep what it is given, nothing else stays reachable
		if err := f.eachRow(r, epoch, fn); err != nil {
			return err
		}
	}
	return nil
}

// eachRow caches a good row as Load would and calls fn with what Load would return.
func (f *FleetStore) eachRow(r artifactRow, epoch uint64, fn func(k registry.Key, a *registry.Artifact, err error) error) error {
	var a *registry.Artifact
	switch {
	case r.err == nil:
		f.install(r.k, &cachedArtifact{a: r.v, rec: r.rec.A, base: r.rec.Base, rev: r.rev}, epoch)
		a = r.v
	case errors.Is(r.err, registry.ErrIncompatible):
		a = r.v // readable, as Load returns it; never cached
	default:
		r.err = f.fail(r.err)
	}
	return fn(r.k, a, r.err)
}

// eachPerRole is Each a role at a time (a listing of the keys, then two ordered consumers per
// role): what Each did before eachBulk, kept as its baseline (BenchmarkFleetEach).
func (f *FleetStore) eachPerRole(fn func(k registry.Key, a *registry.Artifact, err error) error) error {
	keys, err := f.List()
	if err != nil {
		return err
	}
	for i := 0; i < len(keys); {
		role := keys[i].Role
		for i < len(keys) && keys[i].Role == role {
			i++
		}
		epoch, mins := f.epochNow(), f.minsNow()
		ctx, cancel := context.WithCancel(f.link.ctx())
		rows, err := f.bulkArtifacts(ctx, role, mins)
		cancel()
		if err != nil {
			return f.fail(err)
		}
		for _, r := range rows {
			if err := f.eachRow(r, epoch, fn); err != nil {
				return err
			}
		}
	}
	return nil
}

// rolesBulk is Roles by bulk reads of the roles and of their usage.
func (f *FleetStore) rolesBulk() ([]*registry.RoleRecord, error) {
	epoch := f.epochNow()
	ctx, cancel := context.WithCancel(f.link.ctx())
	defer cancel()
	type mres struct {
		m   map[string]bulkEntry[Metrics]
		err error
	}
	mch := make(chan mres, 1)
	go func() {
		m, err := readAllLatest(ctx, f.st.Metrics, RoleMetricsPrefix+"*", f.opTimeout)
		mch <- mres{m, err}
	}()
	recs, err := readAllLatest(ctx, f.roles, ">", f.opTimeout)
	mr := <-mch
	if err == nil {
		err = mr.err
	}
	if err != nil {
		return nil, f.fail(err)
	}
	names := make([]string, 0, len(recs))
	for key := range recs {
		if p, ok := f.roles.Parts(key); ok && len(p) == 1 && registry.ValidateName("role", p[0]) == nil {
			names = append(names, p[0])
		}
	}
	sort.Strings(names)
	out := make([]*registry.RoleRecord, 0, len(names))
	for _, n := range names {
		key, _ := f.st.RoleKey(n)
		r := recs[key]
		if r.err != nil {
			if errors.Is(r.err, registry.ErrCorrupt) || errors.Is(r.err, registry.ErrIncompatible) {
				continue // as Roles leaves out a damaged role
			}
			return nil, f.fail(r.err)
		}
		sr, err := f.checkRole(n, r.e)
		if err != nil {
			continue // damaged
		}
		var m *Metrics
		mkey, _ := f.st.RoleMetricsKey(n)
		if me, ok := mr.m[mkey]; ok {
			if me.err != nil {
				if errors.Is(me.err, registry.ErrCorrupt) || errors.Is(me.err, registry.ErrIncompatible) {
					continue // as Roles leaves out a role whose usage does not decode
				}
				return nil, f.fail(me.err)
			}
			m = &me.e.Value
		}
		rec := roleView(sr.Rec, sr.Base, m)
		f.installRole(n, &cachedRole{rec: rec, stored: sr.Rec, base: sr.Base, rev: r.e.Revision}, epoch)
		out = append(out, rec)
	}
	return out, nil
}

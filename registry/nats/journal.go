package nats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/artifactforge/forge/registry"
)

// The metrics journal: a process's flush is ONE message on a JetStream stream (NAME_journal)
// holding every touched artifact's delta, whatever the number of artifacts; one folder at a time
// (a lease) folds the journal into the per-artifact Metrics of NAME_metrics by compare-and-set and
// purges what it folded. A flush therefore costs one round trip (and, on a single node, one fsync)
// instead of one compare-and-set per artifact, and concurrent processes never contend.
//
// Exactly once: a flush that failed ambiguously is published again with the same message ID, which
// the stream's duplicate window (JournalDuplicateWindow) drops; a writer gives a flush up after
// JournalGiveUp (inside that window). Each Metrics records the highest journal sequence folded
// into it, so a fold that stopped half-way (a crashed folder, a lost lease) is redone without
// counting anything twice.

// Journal tuning.
const (
	JournalStreamSuffix    = "_journal"
	JournalDuplicateWindow = 2 * time.Minute
	JournalGiveUp          = time.Minute
	// JournalMaxDeltas bounds the deltas of one message (a flush with more is split), keeping a
	// message well under the server's 1 MiB max_payload.
	JournalMaxDeltas = 2000
	// journalWatermarkKey (in NAME_metrics) holds the last journal sequence folded everywhere.
	journalWatermarkKey = "_journal"
)

type journalDelta struct {
	Role   string `json:"r"`
	Method string `json:"m"`
	Delta
}

type journalMsg struct {
	Writer string         `json:"w"`
	Seq    uint64         `json:"s"`
	Deltas []journalDelta `json:"d"`
}

type journalWatermark struct {
	Folded uint64 `json:"folded"`
}

func (s *Store) journalSubject() string { return s.name + ".journal" }

// journalStream is the journal stream, opened (created if needed) on first use: by a journal
// writer's first flush or the first fold. A store whose processes flush by compare-and-set (the
// fleet store's recorder) never creates it.
func (s *Store) journalStream(ctx context.Context) (jetstream.Stream, error) {
	s.journalMu.Lock()
	defer s.journalMu.Unlock()
	if s.journal != nil {
		return s.journal, nil
	}
	st, err := s.openJournal(ctx, s.replicas)
	if err != nil {
		return nil, err
	}
	s.journal = st
	return st, nil
}

// journalAttempt bounds one JetStream request of the journal within the caller's context. A
// clustered server may drop an API request or a publish while a leader is elected (seen under load
// in CI), and nobody answers it: without this bound the request waited out the caller's whole
// context (3 minutes in a test) while holding journalMu, and every writer of the process queued
// behind it. An attempt that times out is tried again (opening) or kept for the next flush
// (publishing, under the same message ID, which the duplicate window drops if it had landed).
const journalAttempt = 5 * time.Second

// journalTry runs one request of the journal under journalAttempt.
func journalTry[T any](ctx context.Context, req func(context.Context) (T, error)) (T, error) {
	actx, cancel := context.WithTimeout(ctx, journalAttempt)
	defer cancel()
	return req(actx)
}

// retryable: a transient cluster error, or one attempt's own time bound while ctx still runs.
func retryable(ctx context.Context, err error) bool {
	return ctx.Err() == nil && (transientOpenError(err) || errors.Is(err, context.DeadlineExceeded))
}

// openJournal opens (creating if needed) the journal stream.
func (s *Store) openJournal(ctx context.Context, replicas int) (jetstream.Stream, error) {
	name := s.name + JournalStreamSuffix
	lookup := func(ctx context.Context) (jetstream.Stream, error) { return s.js.Stream(ctx, name) }
	st, err := journalTry(ctx, lookup)
	for wait := 50 * time.Millisecond; err != nil && retryable(ctx, err); wait = min(2*wait, time.Second) {
		select { // a cluster electing its leader: see openBucket
		case <-ctx.Done():
		case <-time.After(wait):
		}
		st, err = journalTry(ctx, lookup)
	}
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		st, err = journalTry(ctx, func(ctx context.Context) (jetstream.Stream, error) {
			return s.js.CreateStream(ctx, jetstream.StreamConfig{
				Name: name, Description: "forge fleet store " + s.name + ": metrics journal",
				Subjects: []string{s.journalSubject()}, Replicas: replicas, Storage: jetstream.FileStorage,
				Duplicates: JournalDuplicateWindow, MaxMsgSize: MaxValueBytes,
				// A backstop only: the folder purges what it folded.
				MaxAge: 7 * 24 * time.Hour,
			})
		})
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			st, err = journalTry(ctx, lookup)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("nats: metrics journal %s: %w (is JetStream enabled? enough nodes for %d replicas?)", name, err, replicas)
	}
	return st, nil
}

// JournalWriter publishes one process's metric flushes to the journal.
type JournalWriter struct {
	s      *Store
	writer string
	seq    atomic.Uint64

	mu      sync.Mutex // one flush at a time; guards pending
	pending []pendingMsg
}

type pendingMsg struct {
	msg   []byte
	id    string
	calls map[registry.Key]int64
	first time.Time
}

// NewJournalWriter is a journal writer named after the store handle (suffix tells writers of one
// handle apart; "" for the usual one per process).
func (s *Store) NewJournalWriter(suffix string) *JournalWriter {
	id := s.id
	if suffix != "" {
		id += "/" + suffix
	}
	return &JournalWriter{s: s, writer: id}
}

// Flush publishes deltas (after any earlier flush that could not be confirmed, sent again as it
// was) and reports what the journal acknowledged. Unconfirmed messages are kept for the next Flush
// and given up after JournalGiveUp (reported as Dropped).
func (w *JournalWriter) Flush(ctx context.Context, deltas map[registry.Key]Delta) FlushReport {
	w.mu.Lock()
	defer w.mu.Unlock()
	rep := FlushReport{Merged: map[registry.Key]int64{}, Revisions: map[registry.Key]uint64{}, Kept: map[registry.Key]error{}, Dropped: map[registry.Key]error{}}
	now := time.Now()
	var batch []journalDelta
	calls := map[registry.Key]int64{}
	cut := func() {
		if len(batch) == 0 {
			return
		}
		seq := w.seq.Add(1)
		data, _ := json.Marshal(journalMsg{Writer: w.writer, Seq: seq, Deltas: batch})
		w.pending = append(w.pending, pendingMsg{msg: data, id: w.writer + "/" + strconv.FormatUint(seq, 10), calls: calls, first: now})
		batch, calls = nil, map[registry.Key]int64{}
	}
	for k, d := range deltas {
		if err := validKey(k.Role, k.Method); err != nil {
			rep.Dropped[k] = err
			continue
		}
		batch = append(batch, journalDelta{Role: k.Role, Method: k.Method, Delta: d})
		calls[k] += d.Calls
		if len(batch) == JournalMaxDeltas {
			cut()
		}
	}
	cut()
	kept := w.pending[:0]
	for i, p := range w.pending {
		if now.Sub(p.first) > JournalGiveUp {
			for k, n := range p.calls {
				rep.Dropped[k] = fmt.Errorf("nats: %d call outcome(s) of %s unconfirmed by the journal for %v: dropped (the store was unreachable)", n, k, JournalGiveUp)
			}
			continue
		}
		var ack *jetstream.PubAck
		_, err := w.s.journalStream(ctx)
		if err == nil {
			ack, err = journalTry(ctx, func(ctx context.Context) (*jetstream.PubAck, error) {
				return w.s.js.Publish(ctx, w.s.journalSubject(), p.msg, jetstream.WithMsgID(p.id))
			})
		}
		if err != nil {
			// Keep this one and every later one, in order, for the next flush.
			for _, q := range w.pending[i:] {
				if now.Sub(q.first) <= JournalGiveUp {
					kept = append(kept, q)
					for k := range q.calls {
						rep.Kept[k] = fmt.Errorf("nats: metrics journal: %w (kept for the next flush)", err)
					}
				}
			}
			break
		}
		for k, n := range p.calls {
			rep.Merged[k] += n
			rep.Revisions[k] = ack.Sequence // journal sequence, not a metrics revision
		}
	}
	w.pending = kept
	return rep
}

// Pending is how many flush messages wait for confirmation.
func (w *JournalWriter) Pending() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pending)
}

// FoldReport tells what one fold did.
type FoldReport struct {
	Messages  int    // journal messages read
	Artifacts int    // artifacts whose Metrics were updated
	Folded    uint64 // journal sequence folded up to (the new watermark)
	// Revisions: the Metrics revision each folded artifact has now (for GetMetrics).
	Revisions map[registry.Key]uint64
}

// FoldLeaseName is the lease the folder holds.
const FoldLeaseName = "_metrics_folder"

// FoldMetrics folds up to maxMessages journal messages (0: all there are) into the per-artifact
// Metrics and purges them from the journal. Run it under the FoldLeaseName lease (Folder does);
// two folds at once stay correct (each Metrics remembers what was folded into it) but do the work
// twice.
func (s *Store) FoldMetrics(ctx context.Context, maxMessages int) (FoldReport, error) {
	rep := FoldReport{Revisions: map[registry.Key]uint64{}}
	wm, err := s.watermark.Get(ctx, journalWatermarkKey)
	if err != nil && !errors.Is(err, registry.ErrNotFound) {
		return rep, err
	}
	journal, err := s.journalStream(ctx)
	if err != nil {
		return rep, err
	}
	info, err := journal.Info(ctx)
	if err != nil {
		return rep, fmt.Errorf("nats: metrics journal: %w", err)
	}
	from := max(wm.Value.Folded+1, info.State.FirstSeq)
	to := info.State.LastSeq
	if maxMessages > 0 && to >= from && to-from+1 > uint64(maxMessages) {
		to = from + uint64(maxMessages) - 1
	}
	type seqDelta struct {
		seq uint64
		d   Delta
	}
	work := map[registry.Key][]seqDelta{}
	for seq := from; seq <= to && to > 0; seq++ {
		m, err := journal.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue // purged or deleted
		}
		if err != nil {
			return rep, fmt.Errorf("nats: metrics journal message %d: %w", seq, err)
		}
		var jm journalMsg
		if err := json.Unmarshal(m.Data, &jm); err != nil {
			continue // not ours to fold; it is purged with the rest
		}
		rep.Messages++
		for _, jd := range jm.Deltas {
			k := registry.Key{Role: jd.Role, Method: jd.Method}
			work[k] = append(work[k], seqDelta{seq: seq, d: jd.Delta})
		}
	}
	if to < from {
		rep.Folded = wm.Value.Folded
		return rep, nil
	}
	var mu sync.Mutex
	var failed []error
	sem := make(chan struct{}, DefaultFlushParallel)
	var wg sync.WaitGroup
	for k, ds := range work {
		if s.foldFilter != nil && !s.foldFilter(k) {
			failed = append(failed, fmt.Errorf("%s: filtered", k))
			continue
		}
		key, err := s.MetricsKey(k.Role, k.Method)
		if err != nil {
			continue // an invalid name was refused by the writer; nothing to fold
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			e, err := s.Metrics.Update(ctx, key, func(m Metrics, _ bool) (Metrics, error) {
				last := ds[len(ds)-1].seq
				if m.Journal >= last {
					return m, ErrNoChange
				}
				for _, sd := range ds {
					if sd.seq > m.Journal {
						m.Add(sd.d)
					}
				}
				m.Journal = last
				return m, nil
			})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed = append(failed, fmt.Errorf("%s: %w", k, err))
				return
			}
			rep.Artifacts++
			rep.Revisions[k] = e.Revision
		}()
	}
	wg.Wait()
	if len(failed) > 0 {
		// The watermark stays: the next fold redoes these messages, and skips what is done.
		return rep, fmt.Errorf("nats: fold of journal %d..%d incomplete, retried next fold: %w", from, to, errors.Join(failed...))
	}
	if _, err := s.watermark.Update(ctx, journalWatermarkKey, func(cur journalWatermark, _ bool) (journalWatermark, error) {
		if cur.Folded >= to {
			return cur, ErrNoChange
		}
		return journalWatermark{Folded: to}, nil
	}); err != nil {
		return rep, err
	}
	rep.Folded = to
	if err := journal.Purge(ctx, jetstream.WithPurgeSequence(to+1)); err != nil {
		return rep, fmt.Errorf("nats: purge the folded journal up to %d: %w (it is purged by the next fold)", to, err)
	}
	return rep, nil
}

// Folder folds the journal every interval while it holds the fold lease (one folder in the fleet
// at a time; any process may run one). Close stops it.
type Folder struct {
	stop chan struct{}
	done chan struct{}
	once sync.Once
	// OnFold, if set, is told about every fold (and its error).
	OnFold func(FoldReport, error)
}

// StartFolder starts folding every interval under the fold lease (TTL ttl).
func (s *Store) StartFolder(interval, ttl time.Duration, onFold func(FoldReport, error)) *Folder {
	f := &Folder{stop: make(chan struct{}), done: make(chan struct{}), OnFold: onFold}
	go func() {
		defer close(f.done)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() { <-f.stop; cancel() }()
		t := time.NewTicker(interval)
		defer t.Stop()
		var le *Lease
		defer func() {
			if le != nil {
				rctx, rcancel := context.WithTimeout(context.Background(), time.Second)
				le.Release(rctx)
				rcancel()
			}
		}()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if le == nil || !le.Valid() {
				var err error
				le, err = s.Leases.TryAcquire(ctx, FoldLeaseName, ttl)
				if err != nil {
					le = nil
					continue // another process folds
				}
				le.KeepAlive()
			}
			rep, err := s.FoldMetrics(ctx, 0)
			if ctx.Err() != nil {
				return // closed mid-fold: the next folder redoes it
			}
			if f.OnFold != nil {
				f.OnFold(rep, err)
			}
		}
	}()
	return f
}

// Close stops the folder (releasing its lease) and waits for it.
func (f *Folder) Close() {
	f.once.Do(func() { close(f.stop) })
	<-f.done
}

package nats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/artifactforge/forge/registry/nats/embedded"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/artifactforge/forge/registry"
)

func successDelta(n int64) Delta {
	d := Delta{Calls: n, At: time.Now()}
	d.Counters.SuccessCount = n
	return d
}

// TestJournalExactlyOnce: a flush sent twice (its acknowledgement was lost) counts once; a fold
// that stopped half-way is redone without counting twice; the folded journal is purged.
func TestJournalExactlyOnce(t *testing.T) {
	s := open(t, "journal", 1, singleNoSync(t))
	ctx := testCtx(t)
	a, b := registry.Key{Role: "r", Method: "a"}, registry.Key{Role: "r", Method: "b"}
	w := s.NewJournalWriter("")

	rep := w.Flush(ctx, map[registry.Key]Delta{a: successDelta(7), b: successDelta(1)})
	if rep.Merged[a] != 7 || len(rep.Kept) != 0 {
		t.Fatalf("flush: %+v", rep)
	}
	// As if the acknowledgement had been lost: the same message again, then a new one.
	w.mu.Lock()
	sent := w.pending
	w.mu.Unlock()
	if len(sent) != 0 {
		t.Fatalf("%d messages still pending after an acknowledged flush", len(sent))
	}
	w.mu.Lock()
	seq := w.seq.Load()
	dup, _ := jsonMsg(w.writer, seq, map[registry.Key]Delta{a: successDelta(7), b: successDelta(1)})
	w.pending = append(w.pending, pendingMsg{msg: dup, id: w.writer + "/" + fmt.Sprint(seq), calls: map[registry.Key]int64{a: 7, b: 1}, first: time.Now()})
	w.mu.Unlock()
	w.Flush(ctx, map[registry.Key]Delta{a: successDelta(5)})

	// A fold that only gets through a: it fails, the watermark stays.
	s.foldFilter = func(k registry.Key) bool { return k == a }
	if _, err := s.FoldMetrics(ctx, 0); err == nil {
		t.Fatal("a partial fold reported success")
	}
	s.foldFilter = nil
	fr, err := s.FoldMetrics(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	ma, _ := s.GetMetrics(ctx, "r", "a", fr.Revisions[a])
	mb, _ := s.GetMetrics(ctx, "r", "b", fr.Revisions[b])
	if ma.Calls != 12 || ma.SuccessCount != 12 || mb.Calls != 1 {
		t.Fatalf("a: %d calls (want 12: 7 once, 5 once), b: %d (want 1)", ma.Calls, mb.Calls)
	}
	info, err := s.journal.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 0 {
		t.Fatalf("%d journal messages left after a complete fold", info.State.Msgs)
	}
	// Nothing new: a fold is a no-op.
	if fr2, err := s.FoldMetrics(ctx, 0); err != nil || fr2.Messages != 0 || fr2.Folded != fr.Folded {
		t.Fatalf("empty fold: %+v %v", fr2, err)
	}
	// A flush larger than one message is split, and all of it arrives.
	big := map[registry.Key]Delta{}
	for i := range JournalMaxDeltas + 10 {
		big[registry.Key{Role: "big", Method: fmt.Sprintf("m%05d", i)}] = successDelta(1)
	}
	if rep := w.Flush(ctx, big); len(rep.Merged) != len(big) {
		t.Fatalf("big flush merged %d of %d", len(rep.Merged), len(big))
	}
	fr, err = s.FoldMetrics(ctx, 0)
	if err != nil || fr.Messages != 2 || fr.Artifacts != len(big) {
		t.Fatalf("big fold: %d messages, %d artifacts, %v", fr.Messages, fr.Artifacts, err)
	}
}

func jsonMsg(writer string, seq uint64, deltas map[registry.Key]Delta) ([]byte, error) {
	var ds []journalDelta
	for k, d := range deltas {
		ds = append(ds, journalDelta{Role: k.Role, Method: k.Method, Delta: d})
	}
	return json.Marshal(journalMsg{Writer: writer, Seq: seq, Deltas: ds})
}

// testClusterJournal: 3 processes x 8 writers publish flushes of the same 4 artifacts while two
// folders on two other nodes compete for the fold lease; after a final fold the sums are exact.
func testClusterJournal(t *testing.T, c *embedded.Cluster) {
	ss := clients(t, c, "jrnl")
	ctx := testCtx(t)
	keys := []registry.Key{{Role: "r", Method: "a"}, {Role: "r", Method: "b"}, {Role: "s", Method: "a"}, {Role: "s", Method: "c"}}
	var revMu sync.Mutex
	lastRev := map[registry.Key]uint64{}
	var folds, foldErrs atomic.Int64
	onFold := func(r FoldReport, err error) {
		if err != nil {
			foldErrs.Add(1)
			t.Logf("fold error (retried by the next fold): %v", err)
		}
		if r.Messages > 0 {
			folds.Add(1)
		}
		revMu.Lock()
		for k, rev := range r.Revisions {
			lastRev[k] = max(lastRev[k], rev)
		}
		revMu.Unlock()
	}
	f1 := ss[1].StartFolder(30*time.Millisecond, time.Second, onFold)
	f2 := ss[2].StartFolder(30*time.Millisecond, time.Second, onFold)
	const perProc, flushes = 8, 6
	var want [4]atomic.Int64
	var wg sync.WaitGroup
	for p, s := range ss {
		for g := range perProc {
			w := s.NewJournalWriter(fmt.Sprint(g))
			wg.Add(1)
			go func() {
				defer wg.Done()
				// At least `flushes` flushes, and on until the folders have folded twice meanwhile.
				deadline := time.Now().Add(15 * time.Second)
				for f := 0; f < flushes || (folds.Load() < 2 && time.Now().Before(deadline)); f++ {
					deltas := map[registry.Key]Delta{}
					for i, k := range keys {
						n := int64(1 + (p+g+f+i)%5)
						deltas[k] = successDelta(n)
						want[i].Add(n)
					}
					w.Flush(ctx, deltas)
					time.Sleep(10 * time.Millisecond)
				}
				for tries := 0; w.Pending() > 0 && tries < 20; tries++ {
					time.Sleep(time.Duration(tries) * 50 * time.Millisecond) // a leader election passes
					w.Flush(ctx, nil)
				}
				if w.Pending() > 0 {
					t.Errorf("writer %d/%d: flushes still unconfirmed", p, g)
				}
			}()
		}
	}
	wg.Wait()
	f1.Close()
	f2.Close()
	// The final fold, tried again as a folder would (a fold is idempotent): a request a node drops
	// during a leader election fails one attempt, not the test.
	var fr FoldReport
	var err error
	for tries := 0; ; tries++ {
		fctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		fr, err = ss[0].FoldMetrics(fctx, 0)
		cancel()
		if err == nil || tries == 5 {
			break
		}
		t.Logf("final fold (tried again): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	onFold(fr, nil)
	for i, k := range keys {
		m, err := ss[(i+1)%3].GetMetrics(ctx, k.Role, k.Method, lastRev[k])
		if err != nil {
			t.Fatal(err)
		}
		if m.Calls != want[i].Load() || m.SuccessCount != want[i].Load() {
			t.Errorf("%s: %d calls, want %d", k, m.Calls, want[i].Load())
		}
	}
	t.Logf("%d folds with messages by the lease holders (+1 final), %d fold errors", folds.Load()-1, foldErrs.Load())
	if folds.Load() < 3 {
		t.Error("the folders never folded while the writers ran")
	}
}

// TestJournalOpenedOnFirstUse: opening a store (or a fleet store, whose recorder flushes by
// compare-and-set) does not create the journal stream; a journal writer's first flush does, and
// a fold on a store whose journal was never written creates it and folds nothing.
func TestJournalOpenedOnFirstUse(t *testing.T) {
	url := singleNoSync(t)
	s := open(t, "lazy", 1, url)
	f := openFleet(t, url, "lazy")
	rec := f.NewRecorder(time.Hour)
	rec.Record("r", "m", registry.Success, time.Millisecond, "")
	rec.Flush()
	rec.Close()
	ctx := testCtx(t)
	js, err := jetstream.New(s.Conn())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Stream(ctx, "lazy"+JournalStreamSuffix); !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Fatalf("the journal stream exists before anything wrote it (%v)", err)
	}
	fr, err := s.FoldMetrics(ctx, 0)
	if err != nil || fr.Messages != 0 {
		t.Fatalf("a fold of an empty journal: %+v, %v", fr, err)
	}
	s2 := open(t, "lazy2", 1, url)
	k := registry.Key{Role: "r", Method: "a"}
	if rep := s2.NewJournalWriter("").Flush(ctx, map[registry.Key]Delta{k: successDelta(2)}); rep.Merged[k] != 2 {
		t.Fatalf("the first flush: %+v", rep)
	}
	if _, err := js.Stream(ctx, "lazy2"+JournalStreamSuffix); err != nil {
		t.Fatalf("the first flush did not create the journal stream: %v", err)
	}
	fr, err = s2.FoldMetrics(ctx, 0)
	if err != nil || fr.Messages != 1 {
		t.Fatalf("fold: %+v, %v", fr, err)
	}
}

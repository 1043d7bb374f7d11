package nats

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/artifactforge/forge/registry/nats/embedded"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/artifactforge/forge/registry"
)

// TestCluster runs the fleet properties on one 3-node JetStream cluster on loopback with R3
// buckets, three clients each connected to a different node. Each subtest uses its own store name
// (its own buckets); the node kill comes last.
func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-node NATS cluster")
	}
	c := cluster(t)

	t.Run("MetricsMergedAcrossNodes", func(t *testing.T) { testClusterMetrics(t, c) })
	t.Run("MetricsJournalFoldedAcrossNodes", func(t *testing.T) { testClusterJournal(t, c) })
	t.Run("LeaseExclusive", func(t *testing.T) { testClusterLeaseRace(t, c) })
	t.Run("LeaseExpiresAfterHolderDies", func(t *testing.T) { testClusterLeaseExpiry(t, c) })
	t.Run("WatchAcrossNodes", func(t *testing.T) { testClusterWatch(t, c) })
	t.Run("NodeKillLosesNoAcknowledgedWrite", func(t *testing.T) { testClusterNodeKill(t, c) })
}

func clients(t *testing.T, c *embedded.Cluster, name string) []*Store {
	var out []*Store
	for i := range c.Nodes {
		s := open(t, name, 3, rotate(c, i)...)
		if got, want := connectedTo(s), c.Nodes[i].URL()[len("nats://"):]; got != want {
			t.Fatalf("client %d connected to %s, want %s", i, got, want)
		}
		out = append(out, s)
	}
	return out
}

// testClusterMetrics: 3 processes x 8 writers flush deltas of the same 4 artifacts concurrently;
// the merged sums are exact. Then an ambiguous flush (sent again with the same sequence) is
// applied once.
func testClusterMetrics(t *testing.T, c *embedded.Cluster) {
	ss := clients(t, c, "metrics")
	ctx := testCtx(t)
	keys := []registry.Key{{Role: "r", Method: "a"}, {Role: "r", Method: "b"}, {Role: "s", Method: "a"}, {Role: "s", Method: "c"}}
	const perProc, flushes = 8, 6
	var wg sync.WaitGroup
	var wantCalls, wantSucc, wantFail [4]atomic.Int64
	var lastRev [4]atomic.Uint64 // the newest acknowledged revision of each key
	errs := make(chan error, 3*perProc*flushes)
	for p, s := range ss {
		for g := range perProc {
			w := s.NewMetricsWriter(fmt.Sprint(g))
			wg.Add(1)
			go func() {
				defer wg.Done()
				for f := range flushes {
					deltas := map[registry.Key]Delta{}
					for i, k := range keys {
						succ, fail := int64(1+(p+g+f+i)%5), int64((p*g+f+i)%3)
						d := Delta{Calls: succ + fail, At: time.Now()}
						d.Counters.SuccessCount, d.Counters.FailureCount = succ, fail
						d.Counters.IntrinsicFailureCount = fail
						deltas[k] = d
						wantCalls[i].Add(succ + fail)
						wantSucc[i].Add(succ)
						wantFail[i].Add(fail)
					}
					rep := w.Flush(ctx, deltas)
					for k, err := range rep.Kept {
						errs <- fmt.Errorf("%s: %w", k, err)
					}
					noteRevs(keys, lastRev[:], rep)
				}
				// Whatever was kept is retried until it lands.
				for tries := 0; w.Pending() > 0 && tries < 20; tries++ {
					noteRevs(keys, lastRev[:], w.Flush(ctx, nil))
				}
				if w.Pending() > 0 {
					errs <- fmt.Errorf("writer %d/%d: deltas still pending", p, g)
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Log("kept for retry:", err) // contention beyond MaxUpdateAttempts is retried, not lost
	}
	for i, k := range keys {
		// Read through another node, from a replica that has the newest acknowledged write.
		m, err := ss[(i+1)%3].GetMetrics(ctx, k.Role, k.Method, lastRev[i].Load())
		if err != nil {
			t.Fatal(err)
		}
		if m.Calls != wantCalls[i].Load() || m.SuccessCount != wantSucc[i].Load() || m.FailureCount != wantFail[i].Load() || m.IntrinsicFailureCount != wantFail[i].Load() {
			t.Errorf("%s: calls %d success %d failure %d, want %d %d %d", k, m.Calls, m.SuccessCount, m.FailureCount, wantCalls[i].Load(), wantSucc[i].Load(), wantFail[i].Load())
		}
		if len(m.Writers) != 3*perProc {
			t.Errorf("%s: %d writer marks, want %d", k, len(m.Writers), 3*perProc)
		}
	}

	// An ambiguous flush: it landed, but the writer could not know and sends it again (same
	// sequence, with a new delta behind it). The first is applied once, the new one once.
	w := ss[0].NewMetricsWriter("ambiguous")
	k := keys[0]
	before, _ := ss[0].GetMetrics(ctx, k.Role, k.Method, lastRev[0].Load())
	d := Delta{Calls: 7, At: time.Now()}
	d.Counters.SuccessCount = 7
	if rep := w.Flush(ctx, map[registry.Key]Delta{k: d}); len(rep.Merged) != 1 {
		t.Fatalf("flush: %+v", rep)
	}
	w.mu.Lock()
	w.retry[k] = []seqDelta{{seq: w.seq.Load(), d: d, first: time.Now()}} // as if the ack was lost
	w.mu.Unlock()
	d2 := Delta{Calls: 5, At: time.Now()}
	d2.Counters.SuccessCount = 5
	rep := w.Flush(ctx, map[registry.Key]Delta{k: d2})
	if len(rep.Merged) != 1 || rep.Merged[k] != 5 {
		t.Fatalf("retried flush merged %+v, want only the 5 new calls", rep.Merged)
	}
	after, err := ss[1].GetMetrics(ctx, k.Role, k.Method, rep.Revisions[k])
	if err != nil {
		t.Fatal(err)
	}
	if after.Calls-before.Calls != 12 || after.SuccessCount-before.SuccessCount != 12 {
		t.Fatalf("an ambiguous flush retried: +%d calls, want +12 (7 once, 5 once)", after.Calls-before.Calls)
	}
}

func noteRevs(keys []registry.Key, last []atomic.Uint64, rep FlushReport) {
	for i, k := range keys {
		if r, ok := rep.Revisions[k]; ok {
			for {
				cur := last[i].Load()
				if r <= cur || last[i].CompareAndSwap(cur, r) {
					break
				}
			}
		}
	}
}

// testClusterLeaseRace: 16 goroutines over 3 clients on 3 nodes race for one lease, 3 rounds
// each: never two holders at once, and every goroutine gets its turns.
func testClusterLeaseRace(t *testing.T, c *embedded.Cluster) {
	ss := clients(t, c, "leaserace")
	ctx := testCtx(t)
	const goroutines, rounds = 16, 3
	var holders, maxHolders, acquired atomic.Int64
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	name := GenerationLeaseName("text_tools", "upper")
	for g := range goroutines {
		s := ss[g%3]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				le, err := s.Leases.Acquire(ctx, name, 5*time.Second)
				if err != nil {
					errs <- err
					return
				}
				le.KeepAlive()
				n := holders.Add(1)
				for {
					m := maxHolders.Load()
					if n <= m || maxHolders.CompareAndSwap(m, n) {
						break
					}
				}
				acquired.Add(1)
				mu.Lock()
				order = append(order, fmt.Sprintf("g%d/r%d@rev%d", g, r, le.Revision()))
				mu.Unlock()
				time.Sleep(5 * time.Millisecond) // "generating"
				if !le.Valid() {
					errs <- fmt.Errorf("g%d: lease not valid while held", g)
				}
				holders.Add(-1)
				if err := le.Release(ctx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if maxHolders.Load() != 1 || acquired.Load() != goroutines*rounds {
		t.Fatalf("max simultaneous holders %d (want 1), acquisitions %d (want %d)", maxHolders.Load(), acquired.Load(), goroutines*rounds)
	}
	t.Logf("%d acquisitions, one holder at a time; first: %v", acquired.Load(), order[:3])
}

// testClusterLeaseExpiry: a holder that dies (stops renewing, connection gone) loses its lease
// within its TTL; a holder that merely paused past its TTL cannot renew it back.
func testClusterLeaseExpiry(t *testing.T, c *embedded.Cluster) {
	ss := clients(t, c, "leaseexp")
	ctx := testCtx(t)
	const ttl = 2 * time.Second
	name := GenerationLeaseName("text_tools", "lower")

	// The holder on node 1 "crashes": no release, connection closed.
	crashed := open(t, "leaseexp", 3, rotate(c, 0)...)
	le, err := crashed.Leases.Acquire(ctx, name, ttl)
	if err != nil {
		t.Fatal(err)
	}
	le.KeepAlive()
	time.Sleep(ttl) // renewed meanwhile: still held
	if _, err := ss[1].Leases.TryAcquire(ctx, name, ttl); !errors.Is(err, ErrLeaseHeld) {
		t.Fatalf("lease taken while its holder renews it: %v", err)
	}
	le.Abandon()
	crashed.Conn().Close()
	died := time.Now()
	le2, err := ss[2].Leases.Acquire(ctx, name, ttl)
	if err != nil {
		t.Fatal(err)
	}
	waited := time.Since(died)
	t.Logf("a dead holder's lease (TTL %v) was taken over after %v", ttl, waited)
	// The TTL counts from the last renewal, which was at most TTL/3 before the crash; the server
	// expires in whole seconds, so allow one more second of slack.
	if waited > ttl+time.Second+500*time.Millisecond {
		t.Fatalf("dead holder's lease blocked for %v (TTL %v)", waited, ttl)
	}

	// A holder that stops renewing (a long pause) cannot renew after someone else took over.
	if err := le2.Release(ctx); err != nil {
		t.Fatal(err)
	}
	paused, err := ss[0].Leases.Acquire(ctx, name, ttl)
	if err != nil {
		t.Fatal(err)
	}
	taker, err := ss[1].Leases.Acquire(ctx, name, ttl) // waits for the expiry
	if err != nil {
		t.Fatal(err)
	}
	if err := paused.Renew(ctx); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("renew of an expired lease taken by another holder: %v, want ErrLeaseLost", err)
	}
	select {
	case <-paused.Lost():
	default:
		t.Fatal("Lost not closed after a failed renewal")
	}
	if taker.Revision() <= paused.Revision() {
		t.Fatalf("fencing token did not grow: %d after %d", taker.Revision(), paused.Revision())
	}
	if err := paused.Release(ctx); err != nil { // a lost lease's release leaves the new holder alone
		t.Fatal(err)
	}
	if _, err := ss[2].Leases.TryAcquire(ctx, name, ttl); !errors.Is(err, ErrLeaseHeld) {
		t.Fatalf("a lost holder's Release freed the new holder's lease: %v", err)
	}
	if err := taker.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// testClusterWatch: writes through node 1 are seen by a watcher connected to node 3 within 1 s.
func testClusterWatch(t *testing.T, c *embedded.Cluster) {
	ss := clients(t, c, "watch")
	ctx := testCtx(t)
	got := make(chan Change, 64)
	w, err := ss[2].Watch(ctx, func(ch Change) { got <- ch })
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var lat []time.Duration
	for i := range 10 {
		var want Change
		start := time.Now()
		switch i % 3 {
		case 0:
			k, _ := ss[0].ArtifactKey("text_tools", "upper")
			e, err := ss[0].Artifacts.Update(ctx, k, func(a *registry.Artifact, exists bool) (*registry.Artifact, error) {
				if !exists {
					return newArtifact("text_tools", "upper", "package x"), nil
				}
				a.Lifecycle = registry.Blessed
				return a, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			want = Change{Change: registry.Change{Kind: registry.ChangeArtifact, Role: "text_tools", Method: "upper"}, Revision: e.Revision}
		case 1:
			k, _ := ss[0].RoleKey("text_tools")
			rev, err := ss[0].Roles.Put(ctx, k, registry.RoleRecord{Contract: registry.Contract{Role: "text_tools"}, Fingerprint: fmt.Sprint(i)})
			if err != nil {
				t.Fatal(err)
			}
			want = Change{Change: registry.Change{Kind: registry.ChangeRole, Role: "text_tools"}, Revision: rev}
		case 2:
			k, _ := ss[0].KnowledgeKey("go.dev")
			rev, err := ss[0].Knowledge.Put(ctx, k, []byte(fmt.Sprint(i)))
			if err != nil {
				t.Fatal(err)
			}
			want = Change{Change: registry.Change{Kind: ChangeKnowledge}, Domain: "go.dev", Revision: rev}
		}
		select {
		case ch := <-got:
			if ch != want {
				t.Fatalf("change %+v, want %+v", ch, want)
			}
			lat = append(lat, time.Since(start))
		case <-time.After(time.Second):
			t.Fatalf("write %d through %s not seen through %s within 1 s", i, c.Nodes[0].Name(), c.Nodes[2].Name())
		}
	}
	// A delete is a change too.
	k, _ := ss[1].ArtifactKey("text_tools", "upper")
	if err := ss[1].Artifacts.Delete(ctx, k, 0); err != nil {
		t.Fatal(err)
	}
	select {
	case ch := <-got:
		if !ch.Deleted || ch.Kind != registry.ChangeArtifact {
			t.Fatalf("delete seen as %+v", ch)
		}
	case <-time.After(time.Second):
		t.Fatal("delete not seen within 1 s")
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	t.Logf("write on node 1 -> change on node 3 (write ack included): median %v, max %v over %d", lat[len(lat)/2], lat[len(lat)-1], len(lat))
}

// testClusterNodeKill: writers on all three nodes run compare-and-set updates and creates; the
// leader of the bucket's stream is shut down mid-burst. Every acknowledged write is there after.
func testClusterNodeKill(t *testing.T, c *embedded.Cluster) {
	ss := clients(t, c, "kill")
	ctx := testCtx(t)
	type rec struct {
		Writer int `json:"w"`
		Seq    int `json:"seq"`
	}
	tables := make([]*Table[rec], 3)
	for i, s := range ss {
		tables[i] = NewTable(s.Data, "burst.", JSONCodec[rec]())
	}
	leader := c.NodeByName(streamLeader(t, ss[0], "kill"+DataBucketSuffix))
	if leader == nil {
		t.Fatal("leader not found among the nodes")
	}
	// A watcher whose server is the one that will be stopped: it must fail over to another node.
	var li int
	for i, nd := range c.Nodes {
		if nd == leader {
			li = i
		}
	}
	ws := open(t, "kill", 3, rotate(c, li)...)
	seen := make(chan Change, 1<<16)
	var changeAll, firstAll atomic.Int64
	watcher, err := ws.Watch(ctx, func(ch Change) {
		switch ch.Kind {
		case registry.ChangeRole:
			seen <- ch
		case registry.ChangeAll:
			if changeAll.Add(1) == 1 {
				firstAll.Store(time.Now().UnixNano())
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Close()
	const writers = 6
	burst, cancel := context.WithTimeout(ctx, 4*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	type result struct {
		casAcked   int // highest counter value acknowledged
		casRev     uint64
		casTried   int   // highest counter value attempted
		created    []int // sequence numbers of acknowledged creates
		createdRev []uint64
		failed     int // writes that returned an error (not acknowledged)
		afterKill  int // writes acknowledged after the kill
	}
	results := make([]result, writers)
	var killed atomic.Bool
	var total atomic.Int64
	// Role writes through a surviving node during the burst: the watcher must see every
	// acknowledged one, across its own server's death.
	var roleRevs []uint64
	latestRole := map[string]uint64{} // role -> its newest acknowledged revision
	roleWriter := ss[(li+1)%3]
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; burst.Err() == nil; i++ {
			role := fmt.Sprintf("during_%d", i%50)
			k, _ := roleWriter.RoleKey(role)
			op, cancelOp := context.WithTimeout(burst, 2*time.Second)
			if rev, err := roleWriter.Roles.Put(op, k, registry.RoleRecord{Fingerprint: fmt.Sprint(i)}); err == nil {
				roleRevs = append(roleRevs, rev)
				latestRole[role] = rev
			}
			cancelOp()
			time.Sleep(5 * time.Millisecond)
		}
	}()
	for w := range writers {
		tb := tables[w%3]
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &results[w]
			counter := fmt.Sprintf("burst.counter.w%d", w)
			for i := 0; burst.Err() == nil; i++ {
				op, cancelOp := context.WithTimeout(burst, 2*time.Second)
				if i%2 == 0 {
					var tried int
					e, err := tb.Update(op, counter, func(old rec, _ bool) (rec, error) {
						tried = old.Seq + 1
						return rec{Writer: w, Seq: old.Seq + 1}, nil
					})
					if tried > r.casTried {
						r.casTried = tried
					}
					if err == nil {
						r.casAcked, r.casRev = e.Value.Seq, e.Revision
					} else {
						r.failed++
					}
				} else {
					if rev, err := tb.Create(op, fmt.Sprintf("burst.created.w%d.s%d", w, i), rec{Writer: w, Seq: i}); err == nil {
						r.created = append(r.created, i)
						r.createdRev = append(r.createdRev, rev)
					} else {
						r.failed++
					}
				}
				cancelOp()
				if killed.Load() {
					r.afterKill++
				}
				total.Add(1)
			}
		}()
	}
	// Kill the leader once the burst is well under way.
	for total.Load() < 200 && burst.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	killStart := time.Now()
	leader.Stop()
	killed.Store(true)
	t.Logf("stopped stream leader %s after %d writes", leader.Name(), total.Load())
	wg.Wait()

	// Check from a node that stayed up, through a fresh connection.
	var survivor int
	for i, nd := range c.Nodes {
		if nd != leader {
			survivor = i
			break
		}
	}
	check := open(t, "kill", 3, rotate(c, survivor)...)
	tb := NewTable(check.Data, "burst.", JSONCodec[rec]())
	var acked, failed, afterKill int
	for w, r := range results {
		acked += len(r.created)
		failed += r.failed
		afterKill += r.afterKill
		if r.casAcked > 0 {
			acked += r.casAcked
			e, err := tb.GetAtLeast(ctx, fmt.Sprintf("burst.counter.w%d", w), r.casRev)
			if err != nil {
				t.Fatalf("writer %d: counter acknowledged at %d is gone: %v", w, r.casAcked, err)
			}
			// Every acknowledged increment is there; an unacknowledged one may have landed too.
			if e.Value.Seq < r.casAcked || e.Value.Seq > r.casTried {
				t.Errorf("writer %d: counter %d, acknowledged %d, attempted up to %d", w, e.Value.Seq, r.casAcked, r.casTried)
			}
		}
		for j, i := range r.created {
			e, err := tb.GetAtLeast(ctx, fmt.Sprintf("burst.created.w%d.s%d", w, i), r.createdRev[j])
			if err != nil || e.Value != (rec{Writer: w, Seq: i}) {
				t.Errorf("writer %d: acknowledged create %d lost: %+v %v", w, i, e.Value, err)
			}
		}
	}
	// The watcher that lost its server sees a change made after the kill.
	rk, _ := check.RoleKey("after_kill")
	wrote := time.Now()
	rev, err := check.Roles.Put(ctx, rk, registry.RoleRecord{Contract: registry.Contract{Role: "after_kill"}})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.After(20 * time.Second)
	seenRevs := map[uint64]bool{}
	seenRole := map[string]uint64{}
wait:
	for {
		select {
		case ch := <-seen:
			seenRevs[ch.Revision] = true
			seenRole[ch.Role] = max(seenRole[ch.Role], ch.Revision)
			if ch.Role == "after_kill" && ch.Revision == rev {
				t.Logf("a watcher whose server was stopped saw a later change %v after it was written (connected now to %s)", time.Since(wrote).Round(time.Millisecond), connectedTo(ws))
				break wait
			}
		case <-deadline:
			t.Fatalf("a watcher whose server was stopped did not see a change made after the kill within 20 s (connected to %s)", connectedTo(ws))
		}
	}
	// The bucket keeps one revision per key, so a consumer recreated after its server died
	// replays only the newest revision of each key written meanwhile: intermediate revisions may
	// be skipped, the newest state of every key may not. That is what invalidation needs.
	missed, stale := 0, 0
	for _, r := range roleRevs {
		if !seenRevs[r] {
			missed++
		}
	}
	for role, rev := range latestRole {
		if seenRole[role] < rev {
			stale++
			t.Errorf("role %s: newest acknowledged revision %d, the watcher saw only up to %d", role, rev, seenRole[role])
		}
	}
	t.Logf("role writes during the burst: %d acknowledged over %d keys; the watcher saw the newest revision of all but %d keys (%d superseded revisions skipped); %d consumer errors and %d times behind, %d ChangeAll", len(roleRevs), len(latestRole), stale, missed, watcher.Errors(), watcher.Behind(), changeAll.Load())
	if watcher.Errors()+watcher.Behind() != changeAll.Load() {
		t.Errorf("%d consumer errors and %d times behind but %d ChangeAll", watcher.Errors(), watcher.Behind(), changeAll.Load())
	}
	if fa := firstAll.Load(); fa > 0 {
		t.Logf("first ChangeAll %v after the kill", time.Unix(0, fa).Sub(killStart).Round(time.Millisecond))
	}
	if missed > 0 && changeAll.Load() == 0 {
		t.Error("the watcher skipped superseded revisions (it was behind) but never reported a ChangeAll")
	}
	newLeader := streamLeader(t, check, "kill"+DataBucketSuffix)
	t.Logf("%d acknowledged writes all present; %d failed during fail-over; %d writes after the kill; leader now %s (checked %v after the kill)",
		acked, failed, afterKill, newLeader, time.Since(killStart).Round(time.Millisecond))
	if afterKill == 0 {
		t.Error("no write completed after the kill: the cluster did not fail over within the burst")
	}
	if newLeader == leader.Name() {
		t.Errorf("the stopped node %s is still reported as leader", newLeader)
	}
	// The node comes back and catches up (and is not stopped again while it recovers its
	// streams: a server shut down mid-recovery leaves its file stores' goroutines behind).
	if err := leader.Restart(); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	js, err := jetstream.New(check.Conn())
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"kill" + DataBucketSuffix, "kill" + MetricsBucketSuffix, "kill" + LeasesBucketSuffix} {
		for {
			if caughtUp(ctx, js, "KV_"+b, leader.Name()) {
				break
			}
			if time.Since(restarted) > 30*time.Second {
				t.Fatalf("restarted node %s has not caught up with %s after 30 s", leader.Name(), b)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	t.Logf("restarted node %s caught up with every bucket after %v", leader.Name(), time.Since(restarted).Round(time.Millisecond))
}

// caughtUp reports whether node is the stream's leader or a current replica of it.
func caughtUp(ctx context.Context, js jetstream.JetStream, stream, node string) bool {
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return false
	}
	info, err := st.Info(ctx)
	if err != nil || info.Cluster == nil {
		return false
	}
	if info.Cluster.Leader == node {
		return true
	}
	for _, r := range info.Cluster.Replicas {
		if r.Name == node {
			return r.Current && !r.Offline
		}
	}
	return false
}

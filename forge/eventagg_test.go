package forge

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHistogramBuckets(t *testing.T) {
	for i := 0; i+1 < histBuckets; i++ {
		_, hi := histBounds(i)
		lo, _ := histBounds(i + 1)
		require.Equal(t, hi, lo, "bucket %d ends where %d starts", i, i+1)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		v := int64(r.Uint64N(1 << uint(r.IntN(41))))
		i := histIndex(v)
		lo, hi := histBounds(i)
		require.True(t, lo <= v && v < hi, "%d in bucket %d [%d, %d)", v, i, lo, hi)
		rep := histValue(i, 0, 1<<62)
		require.LessOrEqual(t, absDiff(rep, v), max(v/16, 1), "%d stands as %d", v, rep)
	}
	assert.Equal(t, histBuckets-1, histIndex(1<<50), "past 2^40 ns: the last bucket")
	assert.Equal(t, 0, histIndex(-5))
}

func absDiff(a, b int64) int64 { return max(a-b, b-a) }

// Warm successes are one aggregate line per artifact and interval, caller errors that ran
// nothing one per label, type and rule; every other call keeps its own line; live subscribers see every call; stats count the aggregate as its calls.
func TestWarmSuccessesAreAggregated(t *testing.T) {
	for _, perCall := range []bool{false, true} {
		t.Run(fmt.Sprintf("perCall=%v", perCall), func(t *testing.T) {
			store := t.TempDir()
			var mu sync.Mutex
			var seen []Event
			p := cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK})
			f := openForge(t, store, p, func(o *Options) {
				o.EventsPerCall = perCall
				o.EventSink = func(e Event) { mu.Lock(); seen = append(seen, e); mu.Unlock() }
			})
			require.NoError(t, f.AddRole(textContract()))
			ctx := context.Background()
			require.True(t, f.Call(ctx, "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
			const warm = 50
			for i := range warm {
				require.True(t, f.Call(ctx, "text", "upper", json.RawMessage(`{"s":"b"}`)).OK)
				if i == warm/2 {
					require.False(t, f.Call(ctx, "text", "upper", json.RawMessage(`{"s":1}`)).OK) // a caller error
				}
			}
			require.False(t, f.Call(ctx, "text", "nope", json.RawMessage(`{}`)).OK)
			f.Flush()
			evs, err := readEvents(store)
			require.NoError(t, err)
			mu.Lock()
			require.Len(t, seen, warm+3, "subscribers see every call")
			mu.Unlock()

			var own, aggCalls int64
			var agg []Event
			for _, e := range evs {
				switch e.Kind {
				case "":
					own++
				case EventAggregate:
					agg = append(agg, e)
					aggCalls += e.Count
				default:
					t.Fatalf("unexpected line %+v", e)
				}
			}
			if perCall {
				assert.Equal(t, int64(warm+3), own)
				assert.Empty(t, agg)
			} else {
				assert.Equal(t, int64(1), own, "the generation has its own line; the two caller errors that ran nothing are aggregated")
				assert.Equal(t, int64(warm+2), aggCalls)
				assert.LessOrEqual(t, len(agg), 5, "one aggregate per interval and bucket (a tick may split the run)")
				var a Event
				for _, e := range agg {
					if e.OK {
						a = e
						break
					}
				}
				assert.Equal(t, SourcePersisted, a.ProgramSource)
				assert.Equal(t, 1, a.ArtifactGen)
				var exemplar *Event
				for i := range seen {
					if seen[i].CallID == a.CallID {
						exemplar = &seen[i]
					}
				}
				require.NotNil(t, exemplar, "the aggregate's call id is one of its calls'")
				assert.Equal(t, exemplar.DurationNS, a.DurationMaxNS, "the exemplar is the slowest call")
			}

			st := ComputeStats(evs, time.Time{})
			assert.Equal(t, int64(warm+3), st.Overall.Calls)
			assert.Equal(t, int64(warm+1), st.Overall.Persisted, "the caller error ran the persisted code too")
			assert.Equal(t, int64(warm+1), st.Overall.OK)
			assert.Equal(t, int64(2), st.Overall.Failures["caller/args"])
			var ds []int64
			for _, e := range seen {
				if e.ProgramSource == SourcePersisted {
					ds = append(ds, e.DurationNS)
				}
			}
			slices.Sort(ds)
			exact := ds[(len(ds)+1)/2-1]
			lat := st.Overall.Latency[SourcePersisted]
			assert.Equal(t, int64(warm+1), lat.Calls)
			assert.LessOrEqual(t, absDiff(int64(lat.P50), exact), exact/16, "p50 %v against exact %v", lat.P50, time.Duration(exact))
		})
	}
}

// A burst from several goroutines on a small queue: per call, warm successes' lines may be
// dropped, every drop is in the log and in Health, and no generation or failure is ever
// dropped; aggregated, nothing is dropped at all.
func TestEventBurstNeverDropsGenerationsOrFailures(t *testing.T) {
	for _, perCall := range []bool{true, false} {
		t.Run(fmt.Sprintf("perCall=%v", perCall), func(t *testing.T) {
			store := t.TempDir()
			l, file, err := newEventLog(filepath.Join(store, "events"), 1<<30, 64)
			require.NoError(t, err)
			l.perCall = perCall
			go l.run(file)
			const workers, warmEach, failEach, genEach = 4, 10000, 300, 100
			var id, fails, gens atomic.Uint64
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range warmEach {
						e := Event{Time: time.Now(), CallID: ID(id.Add(1)), Role: "r", Method: fmt.Sprint("m", w%2), OK: true, Action: "execute",
							Reason: "healthy", ProgramSource: SourcePersisted, ArtifactGen: 1, DurationNS: int64(1000 + i%5000)}
						l.emit(&e)
						if i%(warmEach/failEach) == 0 {
							l.emit(&Event{Time: time.Now(), CallID: ID(id.Add(1)), Role: "r", Method: "m", Action: "execute", Reason: "healthy",
								FailureClass: "caller", FailureRule: "args"})
							fails.Add(1)
						}
						if i%(warmEach/genEach) == 0 {
							l.emit(&Event{Time: time.Now(), CallID: ID(id.Add(1)), Role: "r", Method: "m", OK: true, Action: "generate", Reason: "missing",
								ProgramSource: SourceGenerated, ProviderCalls: 1})
							gens.Add(1)
						}
					}
				}()
			}
			wg.Wait()
			var h Health
			l.close()
			l.health(&h)
			evs, err := readEvents(store)
			require.NoError(t, err)
			kinds := map[string]int64{}
			var warmCalls, droppedCalls int64
			for i := range evs {
				e := &evs[i]
				kinds[LineKind(e)]++
				switch e.Kind {
				case EventAggregate:
					warmCalls += e.Count
				case EventDropped:
					droppedCalls += e.Dropped["call"]
					for k := range e.Dropped {
						assert.Equal(t, "call", k, "only warm successes' own lines are ever dropped")
					}
				case "":
					if e.warmSuccess() {
						warmCalls++
					}
				}
			}
			assert.Equal(t, int64(fails.Load()), kinds["failure"], "every failure is in the log")
			assert.Equal(t, int64(gens.Load()), kinds["generation"], "every generation is in the log")
			assert.Equal(t, int64(workers*warmEach), warmCalls+droppedCalls, "every warm success is in the log or counted as dropped there")
			assert.Equal(t, droppedCalls, h.EventsDropped, "Health counts what the log counts")
			assert.Zero(t, h.EventsLost)
			if !perCall {
				assert.Zero(t, droppedCalls, "aggregates never drop")
				assert.Equal(t, int64(workers*warmEach), h.EventsAggregated)
			}
			t.Logf("perCall=%v: %d lines, %d warm calls logged, %d dropped, %d lines waited for room", perCall, len(evs), warmCalls, droppedCalls, h.EventsWaited)
		})
	}
}

// Adds race with collects that publish new buckets and release idle ones: every add is
// collected exactly once, and adds after the final collect fail (the caller counts them).
func TestAggregatorCountsEveryAddAcrossReleases(t *testing.T) {
	var a aggregator
	var added, collected atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			a.collect(false, func(s *aggSnapshot) { collected.Add(s.n) })
		}
	}()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20000 {
				window := i / 2000 // keys go idle as the window moves on, and are released
				e := Event{Role: "r", Method: fmt.Sprint("m", window*3+(i+w)%3), Reason: "healthy", ArtifactGen: 1, DurationNS: int64(i)}
				require.NotNil(t, a.add(&e))
				added.Add(1)
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-done
	// On a loaded machine the racing collector may have run too seldom to age any bucket out;
	// quiet intervals now release every idle one (the race itself is checked by the counts).
	for range aggIdleIntervals + 1 {
		a.collect(false, func(s *aggSnapshot) { collected.Add(s.n) })
	}
	a.collect(true, func(s *aggSnapshot) { collected.Add(s.n) })
	assert.Equal(t, added.Load(), collected.Load())
	assert.Nil(t, a.add(&Event{Role: "r", Method: "late"}), "closed")
	m := a.read.Load()
	require.NotNil(t, m)
	assert.Less(t, len(*m), 30, "idle buckets were released")
}

func TestComputeStatsCountsAggregates(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var b aggBucket
	for i := range 1000 {
		b.record(&Event{Time: t0, Role: "text", Method: "upper", OK: true, Action: "execute", Reason: "healthy",
			ProgramSource: SourcePersisted, ArtifactGen: 1, DurationNS: int64(1000 + i)})
	}
	var s aggSnapshot
	b.take(&s)
	var agg Event
	var pairs []int64
	s.event(&agg, &pairs)
	assert.Equal(t, int64(1000), agg.Count)
	assert.InDelta(t, 1500, agg.DurationP50NS, 1500/16)
	assert.InDelta(t, 1990, agg.DurationP99NS, 1990/16)
	assert.Equal(t, int64(1999), agg.DurationMaxNS)
	evs := []Event{agg,
		{Time: t0, Role: "text", Method: "upper", OK: true, ProgramSource: SourceGenerated, ProviderCalls: 1, DurationNS: 5e6},
		{Time: t0, Kind: EventDropped, Dropped: map[string]int64{"call": 7}},
	}
	st := ComputeStats(evs, time.Time{})
	assert.Equal(t, int64(1001), st.Overall.Calls)
	assert.Equal(t, int64(1000), st.Overall.Persisted)
	assert.InDelta(t, 1000.0/1001, st.Overall.ReuseHitRate, 1e-9)
	assert.Equal(t, int64(1000), st.Overall.Latency[SourcePersisted].Calls)
	assert.InDelta(t, 1500, int64(st.Overall.Latency[SourcePersisted].P50), 1500/16)
	assert.Equal(t, int64(7), st.EventsDropped)
}

func TestEventsFromEnv(t *testing.T) {
	for v, want := range map[string][2]bool{"": {false, false}, "aggregate": {false, false}, "all": {true, false}, "OFF": {false, true}} {
		o, err := OptionsFromEnv(func(k string) string {
			if k == "FORGE_EVENTS" {
				return v
			}
			return ""
		})
		require.NoError(t, err, v)
		assert.Equal(t, want, [2]bool{o.EventsPerCall, o.NoEvents}, v)
	}
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "FORGE_EVENTS" {
				return v
			}
			return ""
		}
	}
	o, err := OptionsFromEnv(env("aggregate:30s"))
	require.NoError(t, err)
	assert.Equal(t, 30*time.Second, o.EventInterval)
	_, err = OptionsFromEnv(env("some"))
	assert.ErrorContains(t, err, "use aggregate")
	_, err = OptionsFromEnv(env("aggregate:-1s"))
	assert.ErrorContains(t, err, "positive duration")
}

// BenchmarkEventLogEmit is the event log alone (no call around it) with the writer running:
// emit's cost per warm success and the bytes written per call, over 1 and 1,000 artifacts
// round-robin. Per call, emit outruns the writer: dropped/call says how much it drops.
func BenchmarkEventLogEmit(b *testing.B) {
	for _, perCall := range []bool{false, true} {
		for _, keys := range []int{1, 1000} {
			name := "aggregate"
			if perCall {
				name = "percall"
			}
			b.Run(fmt.Sprintf("%s/artifacts=%d", name, keys), func(b *testing.B) {
				l, file, err := newEventLog(b.TempDir(), eventLogMaxBytes, eventQueue)
				require.NoError(b, err)
				l.perCall = perCall
				go l.run(file)
				evs := make([]Event, keys)
				for i := range evs {
					evs[i] = Event{Time: time.Now(), TraceID: 1, CallID: 1, Role: "text", Method: fmt.Sprint("method", i), OK: true, Action: "execute",
						Reason: "healthy", ProgramSource: SourcePersisted, ArtifactHit: true, ArtifactGen: 1, PromptVersion: PromptVersion,
						ContractFingerprint: "sha256:0123456789abcdef", DurationNS: 6000}
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					e := &evs[i%keys]
					e.DurationNS = int64(5000 + i%2000)
					l.emit(e)
				}
				b.StopTimer()
				l.close()
				b.ReportMetric(float64(l.written.Load())/float64(b.N), "logB/call")
				b.ReportMetric(float64(l.dropped.Load())/float64(b.N), "dropped/call")
			})
		}
	}
	// A flood of failures: they are never dropped, so emit waits for the writer: ns/op is the
	// writer's pace, waited/call how often a failing call waited for room.
	b.Run("failures", func(b *testing.B) {
		l, file, err := newEventLog(b.TempDir(), eventLogMaxBytes, eventQueue)
		require.NoError(b, err)
		go l.run(file)
		e := Event{Time: time.Now(), TraceID: 1, CallID: 1, Role: "text", Method: "upper", Action: "execute", Reason: "healthy",
			ProgramSource: SourcePersisted, ArtifactHit: true, ArtifactGen: 1, FailureType: "args", FailureClass: "caller", FailureRule: "args", DurationNS: 6000}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			l.emit(&e)
		}
		l.sync()
		b.StopTimer()
		l.close()
		b.ReportMetric(float64(l.waited.Load())/float64(b.N), "waited/call")
		b.ReportMetric(float64(l.dropped.Load())/float64(b.N), "dropped/call")
	})
}

// A log whose file refuses writes (a full disk: /dev/full) loses lines, counted: Health says
// how many, the first failure is said on stderr, and Close keeps the count in
// events/dropped.jsonl for forge doctor.
func TestEventLogCountsLinesTheFileRefuses(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full here:", err)
	}
	store := t.TempDir()
	l, file, err := newEventLog(filepath.Join(store, "events"), eventLogMaxBytes, 16)
	require.NoError(t, err)
	file.Close()
	go l.run(full)
	for i := range 5 {
		l.emit(&Event{Role: "text", Method: "upper", CallID: ID(i + 1), Action: "execute", Reason: "healthy", FailureClass: "caller", FailureRule: "args"})
	}
	l.sync()
	var h Health
	l.health(&h)
	// The five lines, and any drop record the writer tried meanwhile (the file refuses it too).
	assert.Equal(t, int64(5), h.EventsLost-l.lostBy[kindDropped].Load(), "every refused line is counted")
	l.close()
	n, err := DroppedEvents(store)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, n, int64(5), "Close keeps the count for forge doctor")
}

// Through Forge.Call from several goroutines: every failure the callers saw is in the log by
// its call id (a caller error that ran nothing: in an aggregate, unless per call), and every warm success is in an aggregate (or its own line, per call) or counted
// as dropped there.
func TestConcurrentCallsAreAllInTheLog(t *testing.T) {
	for _, perCall := range []bool{false, true} {
		t.Run(fmt.Sprintf("perCall=%v", perCall), func(t *testing.T) {
			store := t.TempDir()
			var mu sync.Mutex
			var seen []Event
			p := cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK})
			f := openForge(t, store, p, func(o *Options) {
				o.EventsPerCall = perCall
				o.EventSink = func(e Event) { mu.Lock(); seen = append(seen, e); mu.Unlock() }
			})
			require.NoError(t, f.AddRole(textContract()))
			ctx := context.Background()
			require.True(t, f.Call(ctx, "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
			var wg sync.WaitGroup
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 400 {
						args := json.RawMessage(`{"s":"b"}`)
						if i%10 == 0 {
							args = json.RawMessage(`{"s":2}`)
						}
						f.Call(ctx, "text", "upper", args)
					}
				}()
			}
			wg.Wait()
			require.NoError(t, f.Close())
			evs, err := ReadEvents(store)
			require.NoError(t, err)
			logged := map[ID]bool{}
			var warm, dropped, noise int64
			for i := range evs {
				e := &evs[i]
				switch {
				case e.Kind == EventAggregate && !e.OK:
					noise += e.Count
				case e.Kind == EventAggregate:
					warm += e.Count
				case e.Kind == EventDropped:
					dropped += e.Dropped["call"]
				case e.warmSuccess():
					warm++
				default:
					logged[e.CallID] = true
				}
			}
			var wantWarm, wantNoise, failures int64
			for i := range seen {
				if seen[i].warmSuccess() {
					wantWarm++
					continue
				}
				if !seen[i].OK {
					failures++
				}
				if !perCall && seen[i].callerNoise() {
					wantNoise++ // args refused before the code ran: in an aggregate
					continue
				}
				assert.True(t, logged[seen[i].CallID], "call %+v is not in the log", seen[i])
			}
			assert.Equal(t, int64(160), failures)
			assert.Equal(t, wantWarm, warm+dropped)
			assert.Equal(t, wantNoise, noise, "every caller error that ran nothing is counted in an aggregate")
			if !perCall {
				assert.Zero(t, dropped)
			}
		})
	}
}

// An aggregate is written at an interval's end once it stands for aggMinCalls calls, else after
// aggMaxIntervals intervals; Flush (all) writes it at once.
func TestAggregatesAreWrittenWhenDue(t *testing.T) {
	var a aggregator
	add := func(method string, n int) {
		for range n {
			require.NotNil(t, a.add(&Event{Role: "r", Method: method, Reason: "healthy", ArtifactGen: 1, DurationNS: 100}))
		}
	}
	collect := func(all bool) map[string]int64 {
		got := map[string]int64{}
		a.collectSome(false, all, func(s *aggSnapshot) { got[s.slow.Method] += s.n })
		return got
	}
	add("hot", aggMinCalls)
	add("cool", 10)
	assert.Equal(t, map[string]int64{"hot": aggMinCalls}, collect(false), "the cool one waits")
	for i := 2; i < aggMaxIntervals; i++ {
		assert.Empty(t, collect(false), "interval %d", i)
	}
	add("cool", 5)
	assert.Equal(t, map[string]int64{"cool": 15}, collect(false), "at the latest after %d intervals", aggMaxIntervals)
	add("cool", 1)
	assert.Equal(t, map[string]int64{"cool": 1}, collect(true), "Flush writes it at once")
}

// Adds from many goroutines at once (atomics under a shared lock, no exclusive lock per add)
// lose no count and keep the interval's shortest, longest and slowest call.
func TestAggBucketConcurrentAdds(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := &aggBucket{key: aggKey{role: "text", method: "upper"}}
	const workers, each = 8, 500
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				d := int64(100 + w*each + i)
				b.mu.RLock()
				b.record(&Event{Time: t0.Add(time.Duration(d)), Role: "text", Method: "upper", CallID: ID(d), DurationNS: d, SandboxNS: 1})
				b.mu.RUnlock()
			}
		}()
	}
	wg.Wait()
	var s aggSnapshot
	b.mu.Lock()
	b.take(&s)
	b.mu.Unlock()
	const n = workers * each
	assert.Equal(t, int64(n), s.n)
	assert.Equal(t, int64(n*100+n*(n-1)/2), s.sum)
	assert.Equal(t, int64(n), s.sandbox)
	assert.Equal(t, int64(100), s.minD)
	assert.Equal(t, int64(100+n-1), s.maxD)
	assert.Equal(t, ID(100+n-1), s.slow.CallID, "the slowest call's ids")
	assert.Equal(t, "upper", s.slow.Method)
	var inHist int64
	for i := 1; i < len(s.pairs); i += 2 {
		inHist += s.pairs[i]
	}
	assert.Equal(t, int64(n), inHist)
	var again aggSnapshot
	b.take(&again)
	assert.Zero(t, again.n, "taken: the bucket starts afresh")
	assert.Empty(t, again.pairs)
}

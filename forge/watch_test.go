package forge

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
)

// liveHang only detects a hang: live events normally arrive within milliseconds.
const liveHang = 10 * time.Second

// nextArtifact waits for the next artifact change on sub for role.method.
func nextArtifact(t testing.TB, sub *Subscription, role, method string) ArtifactChange {
	t.Helper()
	deadline := time.After(liveHang)
	for {
		select {
		case e := <-sub.C:
			if e.Kind == LiveArtifact && e.Artifact.Role == role && e.Artifact.Method == method {
				return *e.Artifact
			}
		case <-deadline:
			t.Fatalf("no artifact change for %s.%s within %v (a hang)", role, method, liveHang)
		}
	}
}

// The running forge's poll is off (an hour): only watch mode can bring another process's verbs in.
func TestWatchBringsOtherProcessVerbsToTheNextCall(t *testing.T) {
	store := t.TempDir()
	server := openForge(t, store, cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK}))
	server.Store().SetRevalidate(time.Hour)
	require.NoError(t, server.AddRole(textContract()))
	require.True(t, server.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
	require.NoError(t, server.Watch())
	sub := server.Subscribe(Filter{Role: "text"})
	defer sub.Close()

	operator := openForge(t, store, nil) // another process
	require.NoError(t, operator.Quarantine("text", "upper"))
	ch := nextArtifact(t, sub, "text", "upper")
	assert.Equal(t, "quarantined", ch.Lifecycle)
	assert.Equal(t, "candidate", ch.PreviousLifecycle)
	o := server.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`))
	require.False(t, o.OK, "the running forge must see the quarantine")
	assert.Equal(t, "refused", o.Err.Type)

	_, err := operator.Rollback("text", "upper", 1)
	require.NoError(t, err)
	require.NoError(t, operator.Bless("text", "upper", false))
	for ch.Lifecycle != "blessed" {
		ch = nextArtifact(t, sub, "text", "upper")
	}
	o = server.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`))
	require.True(t, o.OK, "%+v", o.Err)
	assert.Equal(t, "execute:blessed", o.Meta.Decision)

	// A new contract from another process reaches the running forge as well.
	c := textContract()
	c.Purpose = "string utilities, second edition"
	require.NoError(t, operator.AddRole(c))
	deadline := time.After(liveHang)
	for got := false; !got; {
		select {
		case e := <-sub.C:
			got = e.Kind == LiveRole && e.Role == "text"
		case <-deadline:
			t.Fatal("no role change (a hang)")
		}
	}
	rec, err := server.Store().Role("text")
	require.NoError(t, err)
	assert.Equal(t, c.Purpose, rec.Purpose)
}

// Options.Watch: a library user gets watch mode from Open.
func TestOptionsWatch(t *testing.T) {
	store := t.TempDir()
	f := openForge(t, store, cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK}),
		func(o *Options) { o.Watch = true })
	f.Store().SetRevalidate(time.Hour)
	require.NoError(t, f.AddRole(textContract()))
	require.True(t, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
	require.NoError(t, f.Watch(), "a second Watch is a no-op")
	operator := openForge(t, store, nil)
	require.NoError(t, operator.Quarantine("text", "upper"))
	deadline := time.Now().Add(liveHang)
	for {
		o := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`))
		if !o.OK && o.Err.Type == "refused" {
			break
		}
		require.True(t, time.Now().Before(deadline), "the quarantine never reached the watching forge (a hang)")
		time.Sleep(time.Millisecond)
	}
}

func TestLiveFilter(t *testing.T) {
	call := &LiveEvent{Kind: LiveCall, Call: &Event{Role: "text", Method: "upper", ProgramSource: SourcePersisted, TraceID: 7}}
	failed := &LiveEvent{Kind: LiveCall, Call: &Event{Role: "text", Method: "upper", FailureClass: "intrinsic"}}
	art := &LiveEvent{Kind: LiveArtifact, Artifact: &ArtifactChange{Role: "text", Method: "upper", Lifecycle: "blessed"}}
	for _, tc := range []struct {
		f                 Filter
		call, failed, art bool
	}{
		{Filter{}, true, true, true},
		{Filter{Role: "text"}, true, true, true},
		{Filter{Role: "math"}, false, false, false},
		{Filter{Method: "lower"}, false, false, false},
		{Filter{Source: SourcePersisted}, true, false, false},
		{Filter{Class: "intrinsic"}, false, true, false},
		{Filter{Trace: 7}, true, false, false},
		{Filter{ChangesOnly: true}, false, false, true},
	} {
		assert.Equal(t, tc.call, tc.f.Match(call), "%+v call", tc.f)
		assert.Equal(t, tc.failed, tc.f.Match(failed), "%+v failed", tc.f)
		assert.Equal(t, tc.art, tc.f.Match(art), "%+v artifact", tc.f)
	}
}

func TestSubscribersSeeCallsAndTailSeesOtherProcesses(t *testing.T) {
	store := t.TempDir()
	f := openForge(t, store, cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK}))
	require.NoError(t, f.AddRole(textContract()))
	sub := f.Subscribe(Filter{Source: SourcePersisted})
	defer sub.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tailed := make(chan Event, 100)
	tailDone := make(chan error, 1)
	live := make(chan struct{})
	go func() { tailDone <- TailEventsReady(ctx, store, func() { close(live) }, func(e Event) { tailed <- e }) }()
	<-live // the tail follows from the end of the log

	require.True(t, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`)).OK) // generated: filtered out
	for i := 0; i < 3; i++ {
		require.True(t, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"b"}`)).OK)
	}
	for i := 0; i < 3; i++ {
		select {
		case e := <-sub.C:
			require.Equal(t, LiveCall, e.Kind)
			assert.Equal(t, SourcePersisted, e.Call.ProgramSource)
		case <-time.After(liveHang):
			t.Fatal("subscriber got no call (a hang)")
		}
	}
	select {
	case e := <-sub.C:
		t.Fatalf("unexpected event past the filter: %+v", e)
	default:
	}
	f.Flush()
	var sources []string
	for len(sources) < 4 {
		select {
		case e := <-tailed: // the three warm successes are one aggregate line (Count 3)
			for range e.Calls() {
				sources = append(sources, e.ProgramSource)
			}
		case <-time.After(liveHang):
			t.Fatalf("the tail saw %v of 4 calls (a hang)", sources)
		}
	}
	assert.Equal(t, []string{SourceGenerated, SourcePersisted, SourcePersisted, SourcePersisted}, sources)
	cancel()
	require.NoError(t, <-tailDone)
}

// BenchmarkWatchVisibility measures how long a bless by another forge takes to reach a watching
// forge (reported as the median and max over the run's changes; the target is 100 ms).
func BenchmarkWatchVisibility(b *testing.B) {
	store := b.TempDir()
	server := openForge(b, store, cassette(b, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK}))
	server.Store().SetRevalidate(time.Hour)
	require.NoError(b, server.AddRole(textContract()))
	require.True(b, server.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
	require.NoError(b, server.Watch())
	operator := openForge(b, store, nil)
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		want := registry.Blessed
		if i%2 == 1 {
			want = registry.Durable
		}
		start := time.Now()
		_, err := operator.update("text", "upper", func(a *registry.Artifact) error { a.Lifecycle = want; return nil })
		require.NoError(b, err)
		for {
			a, ok := server.Store().Lookup("text", "upper")
			if !ok {
				var err error
				a, err = server.Store().Load("text", "upper")
				require.NoError(b, err)
			}
			if a.Lifecycle == want {
				break
			}
			if time.Since(start) > liveHang {
				b.Fatal("change not seen (a hang)")
			}
			time.Sleep(100 * time.Microsecond)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
}

// The tail follows the log through rotations, two between two of its reads here (a tail that
// falls behind by more rotations than the kept files loses the deleted ones), and never decodes a
// partial line.
func TestTailEventsFollowsRotation(t *testing.T) {
	store := t.TempDir()
	l, err := openEventLog(filepath.Join(store, "events"), 600, false, 0) // two events per file
	require.NoError(t, err)
	defer l.close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan Event, 100)
	done := make(chan error, 1)
	go func() { done <- TailEvents(ctx, store, func(e Event) { got <- e }) }()
	// The tail starts at the end of the log: wait until it is live (it delivers a warm-up event,
	// Depth 0) instead of sleeping, which a loaded machine outlasts. Warm-ups written before it
	// was live may still arrive later; they are skipped below.
	for deadline := time.Now().Add(liveHang); ; {
		l.emit(&Event{Role: "warmup", Method: "w", OK: true})
		l.sync()
		select {
		case <-got:
		case <-time.After(100 * time.Millisecond):
			require.True(t, time.Now().Before(deadline), "the tail never delivered an event (a hang)")
			continue
		}
		break
	}

	next, perBatch := 1, 4 // two events fill a file: two rotations per batch
	for batch := 0; batch < 10; batch++ {
		for i := 0; i < perBatch; i++ {
			l.emit(&Event{Role: "text", Method: "upper", Depth: next + i, OK: true})
		}
		l.sync()
		for i := 0; i < perBatch; {
			select {
			case e := <-got:
				if e.Depth == 0 {
					continue // a late warm-up
				}
				require.Equal(t, next, e.Depth, "events in order, none lost or repeated across rotations")
				next++
				i++
			case <-time.After(liveHang):
				t.Fatalf("the tail saw %d events (a hang)", next-1)
			}
		}
	}
	_, err = os.Stat(filepath.Join(store, "events", "forge.jsonl.2"))
	require.NoError(t, err, "the log rotated more than once")
	select {
	case e := <-got:
		t.Fatalf("an event twice: %+v", e)
	case <-time.After(20 * time.Millisecond):
	}
	cancel()
	require.NoError(t, <-done)
}

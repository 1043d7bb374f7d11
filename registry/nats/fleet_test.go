package nats

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/artifactforge/forge/registry/nats/embedded"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/registry/storetest"
)

// fleetOpener opens FleetStores on one embedded server: each test gets its own store name, and
// every call with the same test opens another handle (another connection) on that store.
func fleetOpener(t *testing.T) storetest.Open {
	url := singleNoSync(t)
	var mu sync.Mutex
	names := map[string]string{}
	return func(t *testing.T) registry.Backend {
		mu.Lock()
		name, ok := names[t.Name()]
		if !ok {
			name = "ct" + strconv.Itoa(len(names))
			names[t.Name()] = name
		}
		mu.Unlock()
		return openFleet(t, url, name)
	}
}

func openFleet(t testing.TB, url, name string) *FleetStore {
	t.Helper()
	cfg, err := ParseURL(url+"/"+name, func(string) string { return "" })
	require.NoError(t, err)
	f, err := OpenFleet(cfg, registry.OpenOptions{LocalDir: t.TempDir(), ClientName: "forge-test"})
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

// TestFleetConformance runs the store conformance table against the fleet store.
func TestFleetConformance(t *testing.T) {
	storetest.Run(t, fleetOpener(t))
}

// TestFleetOpensThroughTheRegistry: the "nats" scheme is registered, the URL's secrets never
// reach Location, and a server that is not there is named with advice.
func TestFleetOpensThroughTheRegistry(t *testing.T) {
	url := singleNoSync(t)
	b, err := registry.OpenBackend("nats://alice:s3cret@"+url[len("nats://"):]+"/reg", registry.OpenOptions{LocalDir: t.TempDir(), ClientName: "forge-test"})
	if err == nil {
		defer b.Close()
		assert.NotContains(t, b.Location(), "s3cret")
	} else {
		// The embedded server has no users: the connection is refused, and the error must not
		// print the password either.
		assert.NotContains(t, err.Error(), "s3cret")
	}
	b, err = registry.OpenBackend(url+"/reg", registry.OpenOptions{LocalDir: t.TempDir()})
	require.NoError(t, err)
	defer b.Close()
	_, ok := b.(*FleetStore)
	assert.True(t, ok)

	_, err = registry.OpenBackend("nats://127.0.0.1:1/reg", registry.OpenOptions{LocalDir: t.TempDir()})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is nats-server running at nats://127.0.0.1:1")
}

// TestFleetBlessReachesAnotherProcessWithoutAWatch: the cache of a handle that never called
// Watch is kept coherent by the store's own watch: a bless by another handle is seen by the next
// Lookup within 1 s (measured; the bound here is generous).
func TestFleetBlessReachesAnotherProcessWithoutAWatch(t *testing.T) {
	url := singleNoSync(t)
	a, b := openFleet(t, url, "bless"), openFleet(t, url, "bless")
	_, err := a.Update("r", "m", func(x *registry.Artifact, _ bool) error {
		x.Promote("package artifact", "initial_forge", "m", "pv", time.Now())
		return nil
	})
	require.NoError(t, err)
	_, err = b.Load("r", "m")
	require.NoError(t, err)
	start := time.Now()
	_, err = a.Update("r", "m", func(x *registry.Artifact, _ bool) error { x.Lifecycle = registry.Blessed; return nil })
	require.NoError(t, err)
	var seen time.Duration
	require.Eventually(t, func() bool {
		x, ok := b.Lookup("r", "m")
		if !ok {
			x, err = b.Load("r", "m")
			if err != nil {
				return false
			}
		}
		if x.Lifecycle == registry.Blessed {
			seen = time.Since(start)
			return true
		}
		return false
	}, 10*time.Second, time.Millisecond)
	t.Logf("bless seen by the other handle after %v", seen)
	if seen > time.Second {
		t.Errorf("bless seen after %v: more than 1 s", seen)
	}
}

// TestFleetRecorderKeepsOutcomesWhileTheStoreIsDown: a flush that cannot reach the store keeps its
// outcomes; once the store is back they are merged once.
func TestFleetRecorderKeepsOutcomesWhileTheStoreIsDown(t *testing.T) {
	n, err := embedded.StartNode(embedded.NodeConfig{Name: "down", Dir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(n.Stop)
	f := openFleet(t, n.URL(), "down")
	f.opTimeout = time.Second // what a write waits for an unreachable store, shortened for the test
	_, err = f.Update("r", "m", func(x *registry.Artifact, _ bool) error {
		x.Promote("package artifact", "initial_forge", "m", "pv", time.Now())
		return nil
	})
	require.NoError(t, err)
	rec := f.NewRecorder(time.Hour)
	for range 3 {
		rec.Record("r", "m", registry.Success, time.Millisecond, "")
	}
	n.Stop()
	rep := rec.Flush()
	require.Contains(t, rep.Dropped, registry.Key{Role: "r", Method: "m"})
	assert.Contains(t, rep.Dropped[registry.Key{Role: "r", Method: "m"}].Error(), "kept for the next flush")
	// Once the watch noticed the lost server (a ChangeAll), the cache is set aside, and the next
	// Load serves it from memory instead of failing; Lookups then hit memory again.
	require.Eventually(t, func() bool { return f.watcher.Behind()+f.watcher.Errors() > 0 }, 10*time.Second, 10*time.Millisecond)
	_, ok := f.Lookup("r", "m")
	assert.False(t, ok, "set aside")
	start := time.Now()
	a, err := f.Load("r", "m")
	require.NoError(t, err, "warm calls keep running from memory while the store is down")
	t.Logf("Load with the server down: %v", time.Since(start))
	assert.Equal(t, 1, a.Generation)
	_, ok = f.Lookup("r", "m")
	assert.True(t, ok)
	_, err = f.Update("r", "m", func(x *registry.Artifact, _ bool) error { return nil })
	require.Error(t, err, "writes fail while the store is down")
	require.NoError(t, n.Restart())
	rec.Record("r", "m", registry.Success, time.Millisecond, "")
	require.Eventually(t, func() bool {
		rep = rec.Flush()
		return len(rep.Dropped) == 0
	}, 20*time.Second, 100*time.Millisecond)
	rec.Close()
	got, err := openFleet(t, n.URL(), "down").Load("r", "m")
	require.NoError(t, err)
	assert.Equal(t, int64(4), got.SuccessCount, "each outcome counted once")
}

// TestFleetCacheIsBounded: OpenOptions.MaxCached bounds the artifacts kept in memory; an evicted
// one is loaded again.
func TestFleetCacheIsBounded(t *testing.T) {
	url := singleNoSync(t)
	cfg, err := ParseURL(url+"/bounded", func(string) string { return "" })
	require.NoError(t, err)
	f, err := OpenFleet(cfg, registry.OpenOptions{LocalDir: t.TempDir(), MaxCached: 16})
	require.NoError(t, err)
	defer f.Close()
	for i := range 40 {
		_, err := f.Update("r", "m"+strconv.Itoa(i), func(a *registry.Artifact, _ bool) error {
			a.Promote("package artifact", "initial_forge", "m", "pv", time.Now())
			return nil
		})
		require.NoError(t, err)
	}
	f.mu.RLock()
	n := len(f.cache)
	f.mu.RUnlock()
	assert.LessOrEqual(t, n, 16)
	assert.Positive(t, n)
	a, err := f.Load("r", "m0")
	require.NoError(t, err)
	assert.Equal(t, "m0", a.Method)
}

// TestFleetGenerationLockOfACrashedHolderExpires: a process that dies holding a method's
// generation lease (it stops renewing) blocks the others for at most the lease's TTL.
func TestFleetGenerationLockOfACrashedHolderExpires(t *testing.T) {
	url := singleNoSync(t)
	crashed, f := openFleet(t, url, "crash"), openFleet(t, url, "crash")
	f.genTTL = 2 * time.Second
	le, err := crashed.st.Leases.TryAcquire(testCtx(t), GenerationLeaseName("r", "m"), 2*time.Second)
	require.NoError(t, err)
	le.Abandon() // the holder is gone: no renewal, no release
	start := time.Now()
	ran := false
	require.NoError(t, f.WithGenerationLock("r", "m", func() error { ran = true; return nil }))
	waited := time.Since(start)
	assert.True(t, ran)
	t.Logf("took over a crashed holder's lease after %v", waited)
	assert.GreaterOrEqual(t, waited, time.Second, "the lease was held until it expired")
	assert.Less(t, waited, 10*time.Second, "bounded by the TTL (plus the server's expiry sweep)")
}

// TestFleetPromotionCountsTheFleetsCalls: two processes each prove a candidate with 2 successes;
// neither alone reaches DurableAfter, but the second flush merges onto the first, its cached view
// takes the merged metrics, and the promotion is written to the record.
func TestFleetPromotionCountsTheFleetsCalls(t *testing.T) {
	url := singleNoSync(t)
	p1, p2 := openFleet(t, url, "promote"), openFleet(t, url, "promote")
	_, err := p1.Update("r", "m", func(a *registry.Artifact, _ bool) error {
		a.Promote("package artifact", "initial_forge", "m", "pv", time.Now())
		return nil
	})
	require.NoError(t, err)
	_, err = p2.Load("r", "m")
	require.NoError(t, err)
	r1, r2 := p1.NewRecorder(time.Hour), p2.NewRecorder(time.Hour)
	defer r1.Close()
	defer r2.Close()
	for range 2 {
		r1.Record("r", "m", registry.Success, time.Millisecond, "")
		r2.Record("r", "m", registry.Success, time.Millisecond, "")
	}
	r1.Flush()
	a, ok := p1.Lookup("r", "m")
	require.True(t, ok)
	assert.Equal(t, registry.Candidate, a.Lifecycle, "2 successes")
	r2.Flush()
	a, ok = p2.Lookup("r", "m")
	require.True(t, ok)
	assert.Equal(t, int64(4), a.SuccessCount, "the other process's flush is in the merged metrics")
	assert.Equal(t, registry.Durable, a.Lifecycle)
	e, err := p1.arts.Get(testCtx(t), "artifacts.r.m")
	require.NoError(t, err)
	assert.Equal(t, registry.Durable, e.Value.A.Lifecycle, "the promotion is written to the record")
}

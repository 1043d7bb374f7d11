package forge

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	_ "github.com/artifactforge/forge/registry/nats" // registers the nats:// scheme
	"github.com/artifactforge/forge/registry/nats/embedded"
)

// The warm call on the fleet store (NATS JetStream, an embedded single node on loopback) against
// the directory store, in the same run (issue 13: within 10%). The warm path answers from the
// store's memory on both (Backend.Lookup); what differs is the background: the fleet store's
// watch and its metrics flushes over the network, the directory store's journal appends.

// fleetForges opens a warm forge on a directory store and one on a fleet store.
func fleetForges(b *testing.B) (dir, fleet *Forge) {
	b.Helper()
	url, stop, err := embedded.Start(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(stop)
	dir = warmForge(b)
	fleet = warmForge(b, func(o *Options) {
		o.Store = url + "/bench"
		o.LocalDir = b.TempDir()
	})
	return dir, fleet
}

// BenchmarkFleetCallWarm: ns/op and allocations of the warm forge.Call on each store.
func BenchmarkFleetCallWarm(b *testing.B) {
	dir, fleet := fleetForges(b)
	args := json.RawMessage(`{"s":"hello"}`)
	for _, c := range []struct {
		name string
		f    *Forge
	}{{"dir", dir}, {"nats", fleet}} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				o := c.f.Call(ctx, "text", "upper", args)
				if !o.OK {
					b.Fatal(o.Err)
				}
				sink = o.Value
			}
		})
	}
}

// BenchmarkFleetCallWarmRatio interleaves the two stores' warm calls in batches, so that both
// see the same machine load (a shared machine's load drifts between two sub-benchmarks), and
// reports each one's time per call and the ratio fleet/dir.
func BenchmarkFleetCallWarmRatio(b *testing.B) {
	dir, fleet := fleetForges(b)
	args := json.RawMessage(`{"s":"hello"}`)
	ctx := context.Background()
	const batch = 32
	var tDir, tFleet time.Duration
	run := func(f *Forge, n int) time.Duration {
		start := time.Now()
		for i := 0; i < n; i++ {
			o := f.Call(ctx, "text", "upper", args)
			if !o.OK {
				b.Fatal(o.Err)
			}
			sink = o.Value
		}
		return time.Since(start)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(batch, b.N-done)
		if (done/batch)%2 == 0 { // alternate which store goes first
			tDir += run(dir, n)
			tFleet += run(fleet, n)
		} else {
			tFleet += run(fleet, n)
			tDir += run(dir, n)
		}
		done += n
	}
	b.StopTimer()
	b.ReportMetric(float64(tDir.Nanoseconds())/float64(b.N), "dir-ns/call")
	b.ReportMetric(float64(tFleet.Nanoseconds())/float64(b.N), "nats-ns/call")
	b.ReportMetric(float64(tFleet)/float64(tDir), "nats/dir")
}

package nats

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkFleetSummaries is `forge ls` on the fleet store: Summaries of n artifacts, each with
// flushed metrics, by one get per record and per its metrics ("perkey", 8 parallel readers) and by
// the bulk reads ("bulk"), same run, same store (an embedded server on this machine: no network
// latency, so the gap on a real network is wider). Run:
//
//	go test -run '^$' -bench FleetSummaries -benchtime 5x -count 5 ./registry/nats
func BenchmarkFleetSummaries(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			f := openFleet(b, singleNoSync(b), "bulkbench")
			ctx := testCtx(b)
			now := time.Now().UTC()
			for i := range n {
				method := fmt.Sprintf("m%05d", i)
				a := benchArtifact()
				a.Method = method
				key, _ := f.st.ArtifactKey(a.Role, method)
				if _, err := f.arts.Put(ctx, key, storedArtifact{A: a}); err != nil {
					b.Fatal(err)
				}
				mkey, _ := f.st.MetricsKey(a.Role, method)
				m := Metrics{Calls: 3, LastUsedAt: &now}
				m.SuccessCount = 3
				m.Recent = "sss"
				if _, err := f.st.Metrics.Put(ctx, mkey, m); err != nil {
					b.Fatal(err)
				}
			}
			for _, how := range []string{"perkey", "bulk"} {
				list := f.summariesPerKey
				if how == "bulk" {
					list = f.summariesBulk
				}
				b.Run(how, func(b *testing.B) {
					b.ReportAllocs()
					for range b.N {
						s, err := list()
						if err != nil {
							b.Fatal(err)
						}
						if len(s) != n || s[0].Err != nil || s[0].SuccessCount != 3 {
							b.Fatalf("listed %d summaries (want %d), first %+v", len(s), n, s[0])
						}
					}
				})
			}
		})
	}
}

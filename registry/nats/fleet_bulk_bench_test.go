package nats

import (
	"fmt"
	"testing"
	"time"

	"github.com/artifactforge/forge/registry"
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

// BenchmarkFleetEach is Each over 1,000 roles of 1 artifact each (with flushed metrics): a role at
// a time ("perrole": a listing of the keys, then two ordered consumers per role) against one bulk
// read of each bucket ("bulk"), same run, same store. Run:
//
//	go test -run '^$' -bench FleetEach -benchtime 5x -count 5 ./registry/nats
func BenchmarkFleetEach(b *testing.B) {
	const roles = 1000
	f := openFleet(b, singleNoSync(b), "eachbench")
	ctx := testCtx(b)
	now := time.Now().UTC()
	for i := range roles {
		a := benchArtifact()
		a.Role = fmt.Sprintf("r%04d", i)
		key, _ := f.st.ArtifactKey(a.Role, a.Method)
		if _, err := f.arts.Put(ctx, key, storedArtifact{A: a}); err != nil {
			b.Fatal(err)
		}
		mkey, _ := f.st.MetricsKey(a.Role, a.Method)
		m := Metrics{Calls: 3, LastUsedAt: &now}
		m.SuccessCount = 3
		m.Recent = "sss"
		if _, err := f.st.Metrics.Put(ctx, mkey, m); err != nil {
			b.Fatal(err)
		}
	}
	for _, how := range []string{"perrole", "bulk"} {
		each := f.eachPerRole
		if how == "bulk" {
			each = f.eachBulk
		}
		b.Run(how, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				n := 0
				err := each(func(_ registry.Key, a *registry.Artifact, err error) error {
					if err != nil || a.SuccessCount != 3 {
						return fmt.Errorf("artifact %d: %+v, %v", n, a, err)
					}
					n++
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				if n != roles {
					b.Fatalf("Each gave %d artifacts, want %d", n, roles)
				}
			}
		})
	}
}

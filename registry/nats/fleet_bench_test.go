package nats

import (
	"testing"
	"time"

	"github.com/artifactforge/forge/registry"
)

// BenchmarkBackendWarmCall is the store's part of a warm call — Lookup, then Record of the outcome —
// on the fleet store and on the directory store in the same run (background flushes running on
// both, every 10 ms, so the cost of staying coherent is in the figure). Run:
//
//	go test -run '^$' -bench BackendWarmCall -count 5 ./registry/nats
//
// Both answer from memory: no network round trip, no system call per call.
func BenchmarkBackendWarmCall(b *testing.B) {
	backends := map[string]func(b *testing.B) registry.Backend{
		"dir": func(b *testing.B) registry.Backend {
			s, err := registry.Open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			return s
		},
		"fleet": func(b *testing.B) registry.Backend { return openFleet(b, singleNoSync(b), "bench") },
	}
	for _, name := range []string{"dir", "fleet"} {
		b.Run(name, func(b *testing.B) {
			s := backends[name](b)
			if _, err := s.Update("text_tools", "upper", func(a *registry.Artifact, _ bool) error {
				a.Promote(benchArtifact().Code, "initial_forge", "m", "pv", time.Now())
				return nil
			}); err != nil {
				b.Fatal(err)
			}
			rec := s.NewRecorder(10 * time.Millisecond)
			defer rec.Close()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				a, ok := s.Lookup("text_tools", "upper")
				if !ok {
					// A flush's promotion or a watch event dropped the entry: a Load, as the forge does.
					var err error
					if a, err = s.Load("text_tools", "upper"); err != nil {
						b.Fatal(err)
					}
				}
				rec.Record(a.Role, a.Method, registry.Success, time.Microsecond, "")
			}
		})
	}
}

// BenchmarkBackendLoad is a Load — what a call pays after its cached entry was dropped (a write
// elsewhere, a ChangeAll) — on both backends, same run: the fleet store's is a get of the record
// and one of its metrics, two round trips.
//
//	go test -run '^$' -bench BackendLoad -count 5 ./registry/nats
func BenchmarkBackendLoad(b *testing.B) {
	for _, name := range []string{"dir", "fleet"} {
		b.Run(name, func(b *testing.B) {
			var s registry.Backend
			if name == "dir" {
				d, err := registry.Open(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				s = d
			} else {
				s = openFleet(b, singleNoSync(b), "bench")
			}
			if _, err := s.Update("text_tools", "upper", func(a *registry.Artifact, _ bool) error {
				a.Promote(benchArtifact().Code, "initial_forge", "m", "pv", time.Now())
				return nil
			}); err != nil {
				b.Fatal(err)
			}
			rec := s.NewRecorder(time.Hour)
			rec.Record("text_tools", "upper", registry.Success, time.Microsecond, "")
			rec.Close() // a metrics record to merge, on both
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := s.Load("text_tools", "upper"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

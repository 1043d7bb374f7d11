package forge

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/artifactforge/forge/registry"
)

// BenchmarkForgeCallWarmSample is BenchmarkForgeCallWarm with the sample of real calls off (the
// baseline: what a warm call cost before it), with the artifact's sample full (the steady state:
// one draw per call, one offer in DefaultSampleEvery) and with it short (every call offers until
// the queue is full). It reports the full sample's bytes (args and answers) and how much it adds
// to the artifact's file.
func BenchmarkForgeCallWarmSample(b *testing.B) {
	for _, tc := range []struct {
		name  string
		every int
		fill  bool
	}{{"off", -1, false}, {"full", 0, true}, {"short", 0, false}} {
		b.Run(tc.name, func(b *testing.B) {
			f := warmForge(b, func(o *Options) { o.SampleEvery = tc.every })
			var sampleBytes int
			var added int64
			ctx := context.Background()
			if tc.fill {
				before := fileSize(b, f)
				for i := 0; i < registry.DefaultSampleMax; i++ {
					if o := f.Call(ctx, "text", "upper", json.RawMessage(fmt.Sprintf(`{"s":"hello world %d"}`, i))); !o.OK {
						b.Fatal(o.Err)
					}
				}
				f.FlushSample()
				art, err := f.Store().Load("text", "upper")
				if err != nil || len(art.Sample) != registry.DefaultSampleMax {
					b.Fatalf("sample not full: %v %d", err, len(art.Sample))
				}
				sampleBytes, added = registry.SampleBytes(art.Sample), fileSize(b, f)-before
			}
			args := json.RawMessage(`{"s":"hello"}`)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				o := f.Call(ctx, "text", "upper", args)
				if !o.OK {
					b.Fatal(o.Err)
				}
				sink = o.Value
			}
			if tc.fill {
				b.ReportMetric(float64(sampleBytes), "sample_json_bytes")
				b.ReportMetric(float64(added), "file_bytes_added")
			}
		})
	}
}

func fileSize(b *testing.B, f *Forge) int64 {
	fi, err := os.Stat(f.Store().(*registry.Store).ArtifactPath("text", "upper"))
	if err != nil {
		b.Fatal(err)
	}
	return fi.Size()
}

// BenchmarkShadowReplay100 replays a sample of 100 inputs on verified new code (in-process
// yaegi): one op is one replay of the 100.
func BenchmarkShadowReplay100(b *testing.B) {
	f := warmForge(b)
	ctx := context.Background()
	rt, err := f.roleRuntime("text")
	if err != nil {
		b.Fatal(err)
	}
	c := &call{f: f, role: "text", method: "upper", operator: true, rt: rt}
	p, _, fl := c.verify(ctx, upperOK)
	if fl != nil {
		b.Fatal(fl.msg)
	}
	defer p.release()
	base := &registry.Artifact{Role: "text", Method: "upper", Generation: 1}
	for i := 0; i < 100; i++ {
		base.Sample = append(base.Sample, registry.SampleEntry{Args: json.RawMessage(fmt.Sprintf(`{"s":"hello %d"}`, i)),
			Value: json.RawMessage(fmt.Sprintf(`"HELLO %d"`, i)), Gen: 1})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := c.shadow(ctx, base, p, nil)
		if r.Same != 100 {
			b.Fatalf("%+v", r.ReplaySummary)
		}
	}
}

// BenchmarkSampleFlushReload is what a sample flush costs every other process watching the store:
// the flush rewrites the artifact's record, the watcher drops its cached copy, and its next call
// reads and decodes the record again (the compiled program is kept: the code did not change).
// One op is that read and decode, of a record without a sample and with a full default one.
func BenchmarkSampleFlushReload(b *testing.B) {
	for _, full := range []bool{false, true} {
		name := "no_sample"
		if full {
			name = "full_sample"
		}
		b.Run(name, func(b *testing.B) {
			f := warmForge(b, func(o *Options) { o.SampleEvery = 1 })
			if full {
				for i := 0; i < registry.DefaultSampleMax; i++ {
					if o := f.Call(context.Background(), "text", "upper", json.RawMessage(fmt.Sprintf(`{"s":"hello world %d"}`, i))); !o.OK {
						b.Fatal(o.Err)
					}
				}
				f.FlushSample()
			}
			path := f.Store().(*registry.Store).ArtifactPath("text", "upper")
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				data, err := os.ReadFile(path)
				if err != nil {
					b.Fatal(err)
				}
				a, err := registry.DecodeArtifact(data)
				if err != nil || (full && len(a.Sample) != registry.DefaultSampleMax) {
					b.Fatalf("%v %d", err, len(a.Sample))
				}
				b.SetBytes(int64(len(data)))
			}
		})
	}
}

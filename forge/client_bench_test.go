package forge

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/artifactforge/forge/registry"
)

// upperForge is a forge with text.upper generated and warm on one placement and instance mode.
func upperForge(b *testing.B, sb, isolation, instance string) *Forge {
	b.Helper()
	p := cassette(b, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK})
	f := openForge(b, b.TempDir(), p)
	c := textContract()
	c.Sandbox = sb
	c.Limits = &registry.Limits{Isolation: isolation, Instance: instance}
	if err := f.AddRole(c); err != nil {
		b.Fatal(err)
	}
	if o := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"hello"}`)); !o.OK {
		b.Fatal(o.Err)
	}
	return f
}

// BenchmarkWarmCallInstanceMode is a warm forge.Call of text.upper with pooled instances (the
// default) and with limits.instance "per_call" (a fresh interpreter or instance per call), on
// each backend: the cost of per_call (RATIONALE, "Client identities").
func BenchmarkWarmCallInstanceMode(b *testing.B) {
	for _, pl := range clientPlacements {
		for _, mode := range []string{"pooled", "per_call"} {
			b.Run(pl.name+"/"+mode, func(b *testing.B) {
				if pl.sandbox == "wasm" && testing.Short() {
					b.Skip("builds a wasm module with the Go toolchain")
				}
				f := upperForge(b, pl.sandbox, pl.isolation, mode)
				args := json.RawMessage(`{"s":"hello"}`)
				ctx := WithClient(context.Background(), "alice")
				if o := f.Call(ctx, "text", "upper", args); !o.OK { // alice's own program, compiled
					b.Fatal(o.Err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					o := f.Call(ctx, "text", "upper", args)
					if !o.OK {
						b.Fatal(o.Err)
					}
					sink = o.Value
				}
			})
		}
	}
}

// BenchmarkClientsLiveMemory calls text.upper as N clients round-robin (each has live programs of
// its own) and reports what the live set holds: live-bytes (what the programs report,
// sandbox.Sizer) and bytes/client.
func BenchmarkClientsLiveMemory(b *testing.B) {
	for _, pl := range clientPlacements[:2] {
		for _, n := range []int{1, 10, 50} {
			b.Run(fmt.Sprintf("%s/clients=%d", pl.name, n), func(b *testing.B) {
				if pl.sandbox == "wasm" && testing.Short() {
					b.Skip("builds a wasm module with the Go toolchain")
				}
				f := upperForge(b, pl.sandbox, pl.isolation, "")
				args := json.RawMessage(`{"s":"hello"}`)
				ctxs := make([]context.Context, n)
				for i := range ctxs {
					ctxs[i] = WithClient(context.Background(), fmt.Sprintf("client-%d", i))
					if o := f.Call(ctxs[i], "text", "upper", args); !o.OK {
						b.Fatal(o.Err)
					}
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if o := f.Call(ctxs[i%n], "text", "upper", args); !o.OK {
						b.Fatal(o.Err)
					}
				}
				b.StopTimer()
				live := f.Live()
				b.ReportMetric(float64(live.Bytes), "live-bytes")
				b.ReportMetric(float64(live.Bytes)/float64(n), "bytes/client")
				b.ReportMetric(float64(live.Programs), "programs")
			})
		}
	}
}

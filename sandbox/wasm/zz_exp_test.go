package wasm

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

func expRun(b *testing.B, ensure, instr bool, fnName string) {
	ctx := context.Background()
	cache, _ := wazero.NewCompilationCacheWithDir("/tmp/wexp/cache")
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(ensure).WithCompilationCache(cache))
	defer r.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, r)
	bin, _ := os.ReadFile("/tmp/wexp/guest/fib.wasm")
	if instr {
		var err error
		bin, err = instrumentStop(bin)
		if err != nil {
			b.Fatal(err)
		}
	}
	cm, err := r.CompileModule(ctx, bin)
	if err != nil {
		b.Fatal(err)
	}
	m, err := r.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithStartFunctions("_initialize"))
	if err != nil {
		b.Fatal(err)
	}
	fn := m.ExportedFunction(fnName)
	if fnName == "spin" {
		t0 := time.Now()
		if instr {
			g := m.ExportedGlobal(stopGlobalExport).(api.MutableGlobal)
			time.AfterFunc(100*time.Millisecond, func() { g.Set(1) })
			_, err := fn.Call(ctx)
			b.Log("spin stopped", time.Since(t0), err)
		} else if ensure {
			cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			defer cancel()
			_, err := fn.Call(cctx)
			b.Log("spin stopped", time.Since(t0), err)
		}
		return
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := fn.Call(ctx, 27)
		if err != nil || res[0] != 196418 {
			b.Fatal(err, res)
		}
	}
}

func BenchmarkExpPlain(b *testing.B)  { expRun(b, false, false, "fib") }
func BenchmarkExpEnsure(b *testing.B) { expRun(b, true, false, "fib") }
func BenchmarkExpInstr(b *testing.B)  { expRun(b, false, true, "fib") }
func BenchmarkExpSpinInstr(b *testing.B)  { expRun(b, false, true, "spin") }
func BenchmarkExpSpinEnsure(b *testing.B)  { expRun(b, true, false, "spin") }

package wasm

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/artifactforge/forge/sandbox"
)

// BenchmarkWasmCallFootprint measures the code one warm call of a lean module runs: the distinct
// wasm functions it enters (funcs/call), how often (calls/call), the size of their bodies in
// the module (body-bytes/call) and the share of the module's code section that is
// (body-%/call). Each distinct module has its own copy of that code (wazero emits about 6 bytes
// of machine code per body byte), so it is what a round-robin over N distinct modules needs in
// the instruction caches, N times over (BenchmarkWorkingSet, wasm-distinct; RATIONALE, "The
// working set of distinct wasm modules"). The module is compiled with a function listener,
// so ns/op is not a call's cost.
func BenchmarkWasmCallFootprint(b *testing.B) {
	ctx := context.Background()
	p := benchProgram(b, shared, "package artifact\n\nfunc Add(x int) int { return x + 1 }\n")
	eng, err := newEngine(ctx, nil, pagesFor(sandbox.DefaultMemoryBytes), false, false)
	if err != nil {
		b.Fatal(err)
	}
	defer eng.rt.Close(ctx)
	l := &footprintListener{calls: map[uint32]int{}}
	lctx := experimental.WithFunctionListenerFactory(ctx, experimental.FunctionListenerFactoryFunc(
		func(api.FunctionDefinition) experimental.FunctionListener { return l }))
	cm, err := eng.rt.CompileModule(lctx, p.bin)
	if err != nil {
		b.Fatal(err)
	}
	sizes := functionBodySizes(b, p.bin)
	inst, err := newInstance(ctx, eng, cm, false)
	if err != nil {
		b.Fatal(err)
	}
	defer inst.close()
	lim := sandbox.Limits{}.WithDefaults()
	args := []json.RawMessage{json.RawMessage(`1`)}
	call := func() {
		v, err := inst.call(ctx, sandbox.NewHost(ctx, sandbox.Input{Limits: lim}), args, lim)
		if err != nil || string(v) != "2" {
			b.Fatal(string(v), err)
		}
	}
	for range 5 { // warm: the guest's first calls allocate what later ones reuse
		call()
	}
	imports := uint32(len(cm.ImportedFunctions()))
	var funcs, calls int
	var bytes, total uint64
	for _, s := range sizes {
		total += uint64(s)
	}
	b.ReportAllocs()
	for b.Loop() {
		clear(l.calls)
		l.on = true
		call()
		l.on = false
		for idx, n := range l.calls {
			funcs++
			calls += n
			if idx >= imports && int(idx-imports) < len(sizes) {
				bytes += uint64(sizes[idx-imports])
			}
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(funcs)/n, "funcs/call")
	b.ReportMetric(float64(calls)/n, "calls/call")
	b.ReportMetric(float64(bytes)/n, "body-bytes/call")
	b.ReportMetric(100*float64(bytes)/n/float64(total), "body-%/call")
	b.ReportMetric(float64(len(p.bin)), "module-bytes")
}

// footprintListener counts the calls of each function while on.
type footprintListener struct {
	on    bool
	calls map[uint32]int
}

func (l *footprintListener) Before(_ context.Context, _ api.Module, def api.FunctionDefinition, _ []uint64, _ experimental.StackIterator) {
	if l.on {
		l.calls[def.Index()]++
	}
}

func (*footprintListener) After(context.Context, api.Module, api.FunctionDefinition, []uint64) {}

func (*footprintListener) Abort(context.Context, api.Module, api.FunctionDefinition, error) {}

// functionBodySizes returns the size of each function body in the module's code section, in the
// order of the module's own (not imported) functions.
func functionBodySizes(b *testing.B, bin []byte) []uint32 {
	var sizes []uint32
	err := eachFunctionBody(bin, func(uint32) error { return nil }, func(size uint32) error {
		sizes = append(sizes, size)
		return nil
	})
	if err != nil || len(sizes) == 0 {
		b.Fatalf("no function bodies: %v", err)
	}
	return sizes
}

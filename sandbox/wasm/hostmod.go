package wasm

import (
	"context"
	"errors"

	"github.com/artifactforge/forge/sandbox/internal/guestgen"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// errStopped aborts a guest call from inside a host function: wazero unwinds the guest and returns
// it (wrapped) from the call; the instance is discarded.
var errStopped = errors.New("wasm: call stopped at its deadline")

// instantiateHostModule defines the "forge" host module every guest imports: tick (the metering
// hook), host (one host API request) and take (copy the pending reply into guest memory).
func instantiateHostModule(ctx context.Context, rt wazero.Runtime) error {
	b := rt.NewHostModuleBuilder(tickModule)
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(tick), nil, nil).Export(tickImport)
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(hostCall),
		[]api.ValueType{api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32}, []api.ValueType{api.ValueTypeI32}).Export("host")
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(hostTake),
		[]api.ValueType{api.ValueTypeI32}, nil).Export("take")
	_, err := b.Instantiate(ctx)
	return err
}

// tick runs every fuelPerTick loop headers of the guest: it stops the call once its context is
// done. Being a Go function, it is also where the Go scheduler can preempt a computing guest.
func tick(ctx context.Context, _ api.Module, _ []uint64) {
	if ctx.Err() != nil {
		if inst := instanceFrom(ctx); inst != nil {
			inst.stopped = true
		}
		panic(errStopped)
	}
}

func hostCall(ctx context.Context, mod api.Module, stack []uint64) {
	op, ptr, n := api.DecodeU32(stack[0]), api.DecodeU32(stack[1]), api.DecodeU32(stack[2])
	inst := instanceFrom(ctx)
	if inst == nil || inst.host == nil {
		panic(errors.New("wasm: host API used outside a call"))
	}
	// Sizes are checked before anything is read (guestgen.RequestLimit).
	value, err := any(nil), guestgen.CheckRequestSize(op, n)
	if err == nil {
		req, ok := mod.Memory().Read(ptr, n)
		if !ok {
			panic(errors.New("wasm: host request out of range"))
		}
		value, err = guestgen.ServeHostOp(inst.host, op, req)
	}
	if ctx.Err() != nil {
		// The deadline hit: stop here, before the guest sees a failure. It counts as "in flight"
		// (not the code's time) only if the host was blocked on external work (HTTP, delegation)
		// when it hit, never for Log, Now or Rand, so a runaway loop that logs stays the code's.
		inst.stopped, inst.inFlight = true, inst.host.InFlight()
		panic(errStopped)
	}
	out := guestgen.HostReply(value, err)
	inst.pending = out
	stack[0] = api.EncodeU32(uint32(len(out)))
}

func hostTake(ctx context.Context, mod api.Module, stack []uint64) {
	inst := instanceFrom(ctx)
	if inst == nil {
		panic(errors.New("wasm: host API used outside a call"))
	}
	if !mod.Memory().Write(api.DecodeU32(stack[0]), inst.pending) {
		panic(errors.New("wasm: host reply out of range"))
	}
	inst.pending = nil
}

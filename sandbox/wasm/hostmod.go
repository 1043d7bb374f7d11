package wasm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/artifactforge/forge/sandbox"
)

// Host operations of the forge.host import (see hostShimSource).
const (
	opHTTP uint32 = iota + 1
	opLog
	opNow
	opRand
	opRandIntn
	opCall
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

// callEnvelopeBytes is what a delegation request may carry besides its args (role, method, JSON).
const callEnvelopeBytes = 4 << 10

type hostReply struct {
	Value any    `json:"v,omitempty"`
	Err   string `json:"e,omitempty"`
}

func hostCall(ctx context.Context, mod api.Module, stack []uint64) {
	op, ptr, n := api.DecodeU32(stack[0]), api.DecodeU32(stack[1]), api.DecodeU32(stack[2])
	inst := instanceFrom(ctx)
	if inst == nil || inst.host == nil {
		panic(errors.New("wasm: host API used outside a call"))
	}
	h := inst.host
	var r hostReply
	var err error
	// Sizes are checked before anything is read: a request is a view of guest memory, and
	// decoding a huge one would make the host hold (several times) what the memory cap allows
	// the guest.
	limit := uint32(sandbox.MaxHostRequestBytes)
	if op == opCall {
		limit = sandbox.MaxCallArgsBytes + callEnvelopeBytes
	}
	if n > limit {
		err = fmt.Errorf("host request of %d bytes is over the %d-byte cap: send less per call", n, limit)
		op = 0
	}
	req, ok := mod.Memory().Read(ptr, n)
	if !ok {
		panic(errors.New("wasm: host request out of range"))
	}
	switch op {
	case 0: // refused above
	case opHTTP:
		var hr sandbox.HTTPRequest
		if err = json.Unmarshal(req, &hr); err == nil {
			var resp sandbox.HTTPResponse
			resp, err = h.HTTP(hr)
			if resp.Status != 0 {
				r.Value = resp
			}
		}
	case opLog:
		err = h.LogBytes(req)
	case opNow:
		t, e := h.Now()
		if e == nil {
			r.Value = t.UnixNano()
		}
		err = e
	case opRand:
		r.Value, err = h.Rand()
	case opRandIntn:
		var k int
		if err = json.Unmarshal(req, &k); err == nil {
			r.Value, err = h.RandIntn(k)
		}
	case opCall:
		var c struct {
			Role   string          `json:"role"`
			Method string          `json:"method"`
			Args   json.RawMessage `json:"args"`
		}
		if err = json.Unmarshal(req, &c); err == nil {
			var v json.RawMessage
			v, err = h.Call(c.Role, c.Method, c.Args)
			if err == nil {
				r.Value = v
			}
		}
	default:
		err = errors.New("unknown host operation")
	}
	if ctx.Err() != nil {
		// The deadline hit: stop here, before the guest sees a failure. It counts as "in flight"
		// (not the code's time) only if the host was blocked on external work (HTTP, delegation)
		// when it hit, never for Log, Now or Rand, so a runaway loop that logs stays the code's.
		inst.stopped, inst.inFlight = true, h.InFlight()
		panic(errStopped)
	}
	if err != nil {
		r.Err = err.Error()
	}
	out, merr := json.Marshal(r)
	if merr != nil {
		out, _ = json.Marshal(hostReply{Err: "host: encode reply: " + merr.Error()})
	}
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

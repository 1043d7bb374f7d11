package wasm

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// wasmModule assembles a module from (id, payload) sections.
func wasmModule(sections ...[]byte) []byte {
	out := []byte("\x00asm\x01\x00\x00\x00")
	for _, s := range sections {
		out = append(out, s[0])
		out = appendU32(out, uint32(len(s)-1))
		out = append(out, s[1:]...)
	}
	return out
}

func sec(id byte, payload ...byte) []byte { return append([]byte{id}, payload...) }

// spinModule imports forge.tick and exports spin, a function that loops forever; withGlobal adds
// a global section (so the fuel global is appended rather than created).
func spinModule(withGlobal bool) []byte {
	secs := [][]byte{
		sec(1, 1, 0x60, 0, 0), // type 0: func()
		sec(2, append(append([]byte{1}, appendName(appendName(nil, "forge"), "tick")...), 0x00, 0x00)...), // import forge.tick
		sec(3, 1, 0), // func 1: type 0
	}
	if withGlobal {
		secs = append(secs, sec(6, 1, 0x7e, 0x01, 0x42, 0x80, 0x01, 0x0b)) // mut i64 = 128
	}
	secs = append(secs,
		sec(7, append(append([]byte{1}, appendName(nil, "spin")...), 0x00, 0x01)...), // export spin
		// body: no locals; block; loop; i32.const 1; br_if 0; end; end; end
		sec(10, 1, 12, 0, 0x02, 0x40, 0x03, 0x40, 0x41, 0x01, 0x0d, 0x00, 0x0b, 0x0b, 0x0b),
	)
	return wasmModule(secs...)
}

func TestInstrumentFuelStopsLoop(t *testing.T) {
	for _, withGlobal := range []bool{false, true} {
		t.Run(map[bool]string{false: "new global section", true: "existing globals"}[withGlobal], func(t *testing.T) {
			bin, err := instrumentFuel(spinModule(withGlobal))
			require.NoError(t, err)
			ctx := context.Background()
			rt := wazero.NewRuntime(ctx)
			defer rt.Close(ctx)
			ticks := 0
			_, err = rt.NewHostModuleBuilder("forge").NewFunctionBuilder().
				WithGoModuleFunction(api.GoModuleFunc(func(context.Context, api.Module, []uint64) {
					if ticks++; ticks == 3 {
						panic(errStopped)
					}
				}), nil, nil).Export("tick").Instantiate(ctx)
			require.NoError(t, err)
			mod, err := rt.Instantiate(ctx, bin)
			require.NoError(t, err)
			fuel := mod.ExportedGlobal(fuelExport)
			require.NotNil(t, fuel, "fuel global is exported")
			assert.Equal(t, uint64(fuelPerTick), fuel.Get())
			_, err = mod.ExportedFunction("spin").Call(ctx)
			require.Error(t, err)
			assert.ErrorIs(t, err, errStopped)
			assert.Equal(t, 3, ticks, "the host regains control every fuelPerTick loop iterations")
		})
	}
}

func TestInstrumentFuelRejects(t *testing.T) {
	noTick := wasmModule(sec(1, 1, 0x60, 0, 0), sec(3, 1, 0), sec(10, 1, 2, 0, 0x0b))
	unknownOp := wasmModule(sec(1, 1, 0x60, 0, 0),
		sec(2, append(append([]byte{1}, appendName(appendName(nil, "forge"), "tick")...), 0x00, 0x00)...),
		sec(3, 1, 0), sec(10, 1, 3, 0, 0xfd, 0x0b))
	for name, bin := range map[string][]byte{
		"not wasm":       []byte("hello world"),
		"no tick import": noTick,
		"unknown opcode": unknownOp,
		"truncated":      spinModule(false)[:len(spinModule(false))-3],
	} {
		t.Run(name, func(t *testing.T) {
			_, err := instrumentFuel(bin)
			assert.ErrorIs(t, err, errInstrument)
		})
	}
}

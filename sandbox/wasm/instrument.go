package wasm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/artifactforge/forge/sandbox"
)

// Names of the metering hooks an instrumented module carries: the guest wrapper imports tickImport
// from tickModule (a //go:wasmimport function it references so the linker keeps it), and the
// instrumenter adds a mutable i32 fuel global, exported as fuelExport.
const (
	tickModule = "forge"
	tickImport = "tick"
	fuelExport = "forge_fuel"
)

// fuelPerTick is how many loop-header passes the guest makes between two calls into the host's tick
// function. The tick checks the call's context (deadline) and is the guest's only safe point for the
// Go scheduler and garbage collector while it computes, so it bounds both the stop latency and how
// long a runaway guest can hold up a stop-the-world pause.
const fuelPerTick = 1 << 14

// errInstrument marks a module the instrumenter cannot rewrite (an opcode it does not know, or no
// tick import).
var errInstrument = errors.New("wasm: instrument")

// instrumentFuel rewrites a WebAssembly binary so that runaway code can always be stopped cheaply.
// It appends a mutable i32 fuel global and inserts, right after every `loop` opcode:
//
//	fuel = fuel - 1; if fuel == 0 { fuel = fuelPerTick; call forge.tick }
//
// Go's wasm code generator turns every function containing a call or a backward jump into a `loop`
// (its resumable-call dispatcher), so every Go function entry and every Go loop iteration pays one
// decrement, and the host regains control every fuelPerTick of them. The host's tick function
// aborts the call once its context is done. This is far cheaper than wazero's
// WithCloseOnContextDone, which exits to Go at every loop header (see RATIONALE.md, "Stopping
// runaway wasm code").
func instrumentFuel(bin []byte) ([]byte, error) {
	if len(bin) < 8 || !bytes.Equal(bin[:4], []byte("\x00asm")) || binary.LittleEndian.Uint32(bin[4:8]) != 1 {
		return nil, fmt.Errorf("%w: not a WebAssembly 1.0 binary", errInstrument)
	}
	var secs []section
	r := &reader{b: bin, off: 8}
	for r.off < len(r.b) {
		id := r.byte()
		n := r.u32()
		body := r.bytes(int(n))
		if r.err != nil {
			return nil, fmt.Errorf("%w: section %d: %v", errInstrument, id, r.err)
		}
		secs = append(secs, section{id, body})
	}

	imp := imports{tick: -1}
	var definedGlobals uint32
	globalIdx := -1
	for i, s := range secs {
		switch s.id {
		case 2:
			var err error
			if imp, err = scanImports(s.body); err != nil {
				return nil, err
			}
		case 6:
			globalIdx = i
			sr := &reader{b: s.body}
			definedGlobals = sr.u32()
			if sr.err != nil {
				return nil, fmt.Errorf("%w: global section: %v", errInstrument, sr.err)
			}
		}
	}
	if imp.tick < 0 {
		return nil, fmt.Errorf("%w: module does not import %s.%s", errInstrument, tickModule, tickImport)
	}
	fuelIdx := imp.globals + definedGlobals
	newGlobal := []byte{0x7f, 0x01, 0x41} // mut i32 = i32.const fuelPerTick
	newGlobal = appendS32(newGlobal, fuelPerTick)
	newGlobal = append(newGlobal, 0x0b)

	// Global section: bump the count and append the new global.
	if globalIdx >= 0 {
		sr := &reader{b: secs[globalIdx].body}
		sr.u32()
		nb := appendU32(nil, definedGlobals+1)
		nb = append(nb, sr.b[sr.off:]...)
		secs[globalIdx].body = append(nb, newGlobal...)
	} else {
		g := section{6, append(appendU32(nil, 1), newGlobal...)}
		at := len(secs)
		for i, s := range secs {
			if s.id != 0 && s.id > 6 {
				at = i
				break
			}
		}
		secs = append(secs[:at], append([]section{g}, secs[at:]...)...)
	}

	// Export section: append the export of the fuel global (for tests and diagnostics).
	exp := appendName(nil, fuelExport)
	exp = append(exp, 0x03)
	exp = appendU32(exp, fuelIdx)
	exported := false
	for i, s := range secs {
		if s.id == 7 {
			sr := &reader{b: s.body}
			n := sr.u32()
			if sr.err != nil {
				return nil, fmt.Errorf("%w: export section: %v", errInstrument, sr.err)
			}
			nb := appendU32(nil, n+1)
			nb = append(nb, sr.b[sr.off:]...)
			secs[i].body = append(nb, exp...)
			exported = true
		}
	}
	if !exported {
		e := section{7, append(appendU32(nil, 1), exp...)}
		at := len(secs)
		for i, s := range secs {
			if s.id != 0 && s.id > 7 {
				at = i
				break
			}
		}
		secs = append(secs[:at], append([]section{e}, secs[at:]...)...)
	}

	// Code section: insert the metering after every loop's block type.
	var check []byte
	check = append(check, 0x23) // global.get fuel
	check = appendU32(check, fuelIdx)
	check = append(check, 0x41, 0x7f, 0x6a) // i32.const -1; i32.add
	check = append(check, 0x24)             // global.set fuel
	check = appendU32(check, fuelIdx)
	check = append(check, 0x23) // global.get fuel
	check = appendU32(check, fuelIdx)
	check = append(check, 0x45, 0x04, 0x40, 0x41) // i32.eqz; if; i32.const fuelPerTick
	check = appendS32(check, fuelPerTick)
	check = append(check, 0x24) // global.set fuel
	check = appendU32(check, fuelIdx)
	check = append(check, 0x10) // call tick
	check = appendU32(check, uint32(imp.tick))
	check = append(check, 0x0b) // end
	params, err := functionParams(secs[:], imp.funcs)
	if err != nil {
		return nil, err
	}
	bulk := bulkCharge{fuel: fuelIdx, tick: uint32(imp.tick)}
	for i, s := range secs {
		if s.id != 10 {
			continue
		}
		nb, err := instrumentCode(s.body, check, params, bulk)
		if err != nil {
			return nil, err
		}
		secs[i].body = nb
	}

	out := make([]byte, 0, len(bin)+len(bin)/4)
	out = append(out, bin[:8]...)
	for _, s := range secs {
		out = append(out, s.id)
		out = appendU32(out, uint32(len(s.body)))
		out = append(out, s.body...)
	}
	return out, nil
}

// section is one section of a module: its id and its contents.
type section struct {
	id   byte
	body []byte
}

// imports is what the instrumenter needs from the import section.
type imports struct {
	globals uint32 // imported globals precede defined ones in the global index space
	funcs   int    // imported functions precede defined ones in the function index space
	tick    int    // function index of forge.tick, or -1
}

func scanImports(body []byte) (imports, error) {
	r := &reader{b: body}
	n := r.u32()
	imp := imports{tick: -1}
	var funcs int
	for i := uint32(0); i < n && r.err == nil; i++ {
		mod := r.bytes(int(r.u32()))
		name := r.bytes(int(r.u32()))
		switch kind := r.byte(); kind {
		case 0x00: // func
			r.u32()
			if string(mod) == tickModule && string(name) == tickImport {
				imp.tick = funcs
			}
			funcs++
		case 0x01: // table
			r.byte()
			r.limits()
		case 0x02: // memory
			r.limits()
		case 0x03: // global
			r.byte()
			r.byte()
			imp.globals++
		case 0x04: // tag
			r.byte()
			r.u32()
		default:
			return imp, fmt.Errorf("%w: import kind 0x%02x", errInstrument, kind)
		}
	}
	if r.err != nil {
		return imp, fmt.Errorf("%w: import section: %v", errInstrument, r.err)
	}
	imp.funcs = funcs
	return imp, nil
}

// bulkChargeShift: a bulk memory operation (memory.copy, memory.fill, memory.init) of n bytes
// costs n>>bulkChargeShift fuel, one unit per 64 bytes. A loop-header pass is a few ns of work
// and moving 64 bytes about as much, so a tick comes about every MiB of copying as it does every
// fuelPerTick passes. Without it a 64 MiB copy cost one unit, and a loop of them ran 16,384
// copies (1 TiB) between two deadline checks.
const bulkChargeShift = 6

// bulkCharge is what the bulk-operation metering needs: the fuel global and the tick function.
type bulkCharge struct{ fuel, tick uint32 }

// code returns the metering inserted before a bulk memory operation, whose byte count n is on
// top of the stack; tmp is a scratch i32 local. It leaves the stack as it found it:
//
//	local.tee tmp; fuel = fuel - tmp>>bulkChargeShift
//	if fuel <= 0 { fuel = fuelPerTick; call forge.tick }
//
// so the deadline is checked before a large operation starts, not after it.
func (b bulkCharge) code(dst []byte, tmp uint32) []byte {
	dst = append(dst, 0x22) // local.tee tmp
	dst = appendU32(dst, tmp)
	dst = append(dst, 0x23) // global.get fuel
	dst = appendU32(dst, b.fuel)
	dst = append(dst, 0x20) // local.get tmp
	dst = appendU32(dst, tmp)
	dst = append(dst, 0x41, bulkChargeShift, 0x76, 0x6b) // i32.const shift; i32.shr_u; i32.sub
	dst = append(dst, 0x24)                              // global.set fuel
	dst = appendU32(dst, b.fuel)
	dst = append(dst, 0x23) // global.get fuel
	dst = appendU32(dst, b.fuel)
	dst = append(dst, 0x41, 0x00, 0x4c, 0x04, 0x40, 0x41) // i32.const 0; i32.le_s; if; i32.const fuelPerTick
	dst = appendS32(dst, fuelPerTick)
	dst = append(dst, 0x24) // global.set fuel
	dst = appendU32(dst, b.fuel)
	dst = append(dst, 0x10) // call tick
	dst = appendU32(dst, b.tick)
	return append(dst, 0x0b) // end
}

// functionParams returns the parameter count of each defined function (from the type and
// function sections): a function's scratch local is numbered after its params and locals.
func functionParams(secs []section, importedFuncs int) ([]uint32, error) {
	var typeParams, params []uint32
	for _, s := range secs {
		r := &reader{b: s.body}
		switch s.id {
		case 1:
			n := r.u32()
			for i := uint32(0); i < n && r.err == nil; i++ {
				if form := r.byte(); form != 0x60 && r.err == nil {
					return nil, fmt.Errorf("%w: type %d: form 0x%02x", errInstrument, i, form)
				}
				np := r.u32()
				typeParams = append(typeParams, np)
				r.bytes(int(np))
				r.bytes(int(r.u32()))
			}
		case 3:
			n := r.u32()
			for i := uint32(0); i < n && r.err == nil; i++ {
				t := r.u32()
				if int(t) >= len(typeParams) {
					return nil, fmt.Errorf("%w: function %d: type %d out of range", errInstrument, i, t)
				}
				params = append(params, typeParams[t])
			}
		}
		if r.err != nil {
			return nil, fmt.Errorf("%w: section %d: %v", errInstrument, s.id, r.err)
		}
	}
	return params, nil
}

func instrumentCode(body, check []byte, params []uint32, bulk bulkCharge) ([]byte, error) {
	r := &reader{b: body}
	n := r.u32()
	if int(n) != len(params) {
		return nil, fmt.Errorf("%w: %d function bodies for %d functions", errInstrument, n, len(params))
	}
	out := appendU32(make([]byte, 0, len(body)+len(body)/8), n)
	var fn []byte
	for i := uint32(0); i < n; i++ {
		size := r.u32()
		code := r.bytes(int(size))
		if r.err != nil {
			return nil, fmt.Errorf("%w: code section: %v", errInstrument, r.err)
		}
		var err error
		fn, err = instrumentFunc(fn[:0], code, check, params[i], bulk)
		if err != nil {
			return nil, fmt.Errorf("%w: function %d: %v", errInstrument, i, err)
		}
		out = appendU32(out, uint32(len(fn)))
		out = append(out, fn...)
	}
	return out, nil
}

// instrumentFunc copies one function body into dst, inserting check after every loop header and
// bulk.code before every bulk memory operation (which then gets one more i32 local, numbered
// after params and the declared locals).
func instrumentFunc(dst, code, check []byte, params uint32, bulk bulkCharge) ([]byte, error) {
	r := &reader{b: code}
	groups := r.u32()
	groupsEnd := r.off
	tmp := params
	for i := uint32(0); i < groups; i++ {
		tmp += r.u32()
		r.byte()
	}
	if r.err != nil {
		return nil, r.err
	}
	header := r.off
	start := len(dst) // the body goes here; the locals header is put in front at the end
	usedTmp := false
	last := header // start of the not yet copied input
	for r.off < len(r.b) && r.err == nil {
		op := r.byte()
		switch {
		case op == 0x03: // loop
			r.blockType()
			dst = append(dst, r.b[last:r.off]...)
			dst = append(dst, check...)
			last = r.off
		case op == 0x02 || op == 0x04: // block, if
			r.blockType()
		case op == 0x0c || op == 0x0d || op == 0x10 || op == 0x12 || // br, br_if, call, return_call
			(op >= 0x20 && op <= 0x26) || op == 0xd2: // local/global/table get/set, ref.func
			r.u32()
		case op == 0x0e: // br_table
			n := r.u32()
			for j := uint32(0); j <= n && r.err == nil; j++ {
				r.u32()
			}
		case op == 0x11 || op == 0x13: // call_indirect, return_call_indirect
			r.u32()
			r.u32()
		case op == 0x1c: // select t*
			n := r.u32()
			r.bytes(int(n))
		case op >= 0x28 && op <= 0x3e: // loads and stores: memarg
			r.u32()
			r.u32()
		case op == 0x3f || op == 0x40: // memory.size, memory.grow
			r.u32()
		case op == 0x41:
			r.s64()
		case op == 0x42:
			r.s64()
		case op == 0x43:
			r.bytes(4)
		case op == 0x44:
			r.bytes(8)
		case op == 0xd0: // ref.null
			r.byte()
		case op <= 0x01 || op == 0x05 || op == 0x0b || op == 0x0f || op == 0x1a || op == 0x1b ||
			(op >= 0x45 && op <= 0xc4) || op == 0xd1:
			// no immediates
		case op == 0xfc:
			opStart := r.off - 1
			switch sub := r.u32(); {
			case sub <= 7: // saturating truncations
			case sub == 8: // memory.init: charged like memory.copy
				dst = append(dst, r.b[last:opStart]...)
				dst = bulk.code(dst, tmp)
				usedTmp = true
				last = opStart
				r.u32()
				r.u32()
			case sub == 9 || sub == 13 || sub == 15 || sub == 16 || sub == 17: // data.drop, elem.drop, table.grow/size/fill
				r.u32()
			case sub == 10 || sub == 11: // memory.copy, memory.fill: charge n, on top of the stack
				dst = append(dst, r.b[last:opStart]...)
				dst = bulk.code(dst, tmp)
				usedTmp = true
				last = opStart
				r.u32()
				if sub == 10 {
					r.u32()
				}
			case sub == 12 || sub == 14: // table.init, table.copy
				r.u32()
				r.u32()
			default:
				return nil, fmt.Errorf("unknown opcode 0xfc %d at %d", sub, r.off)
			}
		default:
			return nil, fmt.Errorf("unknown opcode 0x%02x at %d", op, r.off-1)
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	dst = append(dst, r.b[last:]...)
	hdr := code[:header]
	if usedTmp {
		// One more locals group: a single i32, the scratch local.
		hdr = appendU32(nil, groups+1)
		hdr = append(hdr, code[groupsEnd:header]...)
		hdr = append(hdr, 0x01, 0x7f)
	}
	fn := make([]byte, 0, len(hdr)+len(dst)-start)
	fn = append(append(fn, hdr...), dst[start:]...)
	return append(dst[:start], fn...), nil
}

// reader decodes the LEB128 and byte vectors of the binary format; the first error sticks.
type reader struct {
	b   []byte
	off int
	err error
}

var errShort = errors.New("unexpected end of input")

func (r *reader) byte() byte {
	if r.err != nil {
		return 0
	}
	if r.off >= len(r.b) {
		r.err = errShort
		return 0
	}
	c := r.b[r.off]
	r.off++
	return c
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || r.off+n > len(r.b) {
		r.err = errShort
		return nil
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s
}

func (r *reader) u32() uint32 {
	var v uint64
	for shift := 0; shift < 35; shift += 7 {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			if v > math.MaxUint32 {
				r.err = errors.New("u32 overflow")
			}
			return uint32(v)
		}
	}
	r.err = errors.New("u32 too long")
	return 0
}

// s64 skips a signed LEB128 of up to 64 bits (i32.const, i64.const, s33 block types).
func (r *reader) s64() {
	for i := 0; i < 10; i++ {
		if c := r.byte(); r.err != nil || c&0x80 == 0 {
			return
		}
	}
	r.err = errors.New("sleb too long")
}

func (r *reader) blockType() {
	if r.off < len(r.b) {
		switch c := r.b[r.off]; c {
		case 0x40, 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f:
			r.off++
			return
		}
	}
	r.s64() // type index as s33
}

func (r *reader) limits() {
	flag := r.byte()
	r.u32()
	if flag&0x01 != 0 {
		r.u32()
	}
}

func appendU32(b []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

func appendS32(b []byte, v int32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func appendName(b []byte, s string) []byte {
	b = appendU32(b, uint32(len(s)))
	return append(b, s...)
}

// Bounds on a module before wazero compiles it. wazero's compiler needs host memory and time
// that grow faster than a function's size (a 440 KiB function: +230 MiB of heap and 4.5 s; a
// 60,000-call one: 1.75 GB), all outside the role's memory cap, so code that unrolls thousands
// of statements into one function is refused as a compile error before compiling. For scale:
// the largest function of Go's runtime and standard library in a call module is 29 KiB, in a
// test module (with testify and net/http) 50 KiB; a call module is ~3 MiB with ~2,000
// functions, a test module ~6 MiB with ~3,600.
const (
	MaxModuleBytes   = 16 << 20
	MaxFunctions     = 50000
	MaxFunctionBytes = 128 << 10
)

// checkModule refuses a module over MaxModuleBytes, MaxFunctions or MaxFunctionBytes, reading
// only section headers and function sizes.
func checkModule(bin []byte) error {
	hint := "make the code smaller: use loops and tables instead of unrolled statements, and split very long functions"
	if len(bin) > MaxModuleBytes {
		return &sandbox.Error{Kind: sandbox.KindCompile, Hint: hint,
			Message: fmt.Sprintf("the WebAssembly module is %d bytes, over the %d-byte bound", len(bin), MaxModuleBytes)}
	}
	return eachFunctionBody(bin, func(n uint32) error {
		if n > MaxFunctions {
			return &sandbox.Error{Kind: sandbox.KindCompile, Hint: hint,
				Message: fmt.Sprintf("the WebAssembly module has %d functions, over the bound of %d", n, MaxFunctions)}
		}
		return nil
	}, func(size uint32) error {
		if size > MaxFunctionBytes {
			return &sandbox.Error{Kind: sandbox.KindCompile, Hint: hint,
				Message: fmt.Sprintf("a function compiles to %d bytes of WebAssembly, over the %d-byte bound (thousands of statements or calls in one function)", size, MaxFunctionBytes)}
		}
		return nil
	})
}

// eachFunctionBody walks the module's code section: count is called with the number of function
// bodies, then body with the size of each, in the order of the module's own functions; the
// first error either returns stops the walk and is returned.
func eachFunctionBody(bin []byte, count, body func(uint32) error) error {
	r := &reader{b: bin, off: 8}
	for r.off < len(r.b) && r.err == nil {
		id := r.byte()
		sec := r.bytes(int(r.u32()))
		if id != 10 || r.err != nil {
			continue
		}
		cr := &reader{b: sec}
		n := cr.u32()
		if err := count(n); err != nil {
			return err
		}
		for i := uint32(0); i < n && cr.err == nil; i++ {
			size := cr.u32()
			if err := body(size); err != nil {
				return err
			}
			cr.bytes(int(size))
		}
		if cr.err != nil {
			return sandbox.Errorf(sandbox.KindInternal, "wasm: code section: %v", cr.err)
		}
	}
	if r.err != nil {
		return sandbox.Errorf(sandbox.KindInternal, "wasm: module sections: %v", r.err)
	}
	return nil
}

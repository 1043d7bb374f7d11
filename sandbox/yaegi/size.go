package yaegi

import "github.com/artifactforge/forge/sandbox"

// What a live in-process interpreter holds on the Go heap, measured (BenchmarkLiveProgram: 200
// HumanEval programs, medians of 5): 116,681 bytes for code without generic imports, 190,322 with
// slices.Contains, whose pruned generic sources the interpreter compiles. An interpreter holds
// no goroutine: calls run on the caller's (see instance.call).
const (
	interpreterBytes = 120 << 10
	genericBytes     = 75 << 10
)

var _ sandbox.Sizer = (*Program)(nil)

// LiveBytes estimates the host memory the program holds: its live interpreters (the forge's
// live set bounds programs by it, see sandbox.Sizer). An isolated program holds its interpreters
// in worker processes, bounded by the worker pool: 0 here, as for a closed program.
func (p *Program) LiveBytes() int64 {
	if p.isolated || p.closedP.Load() {
		return 0
	}
	per := int64(interpreterBytes)
	if len(p.generic) > 0 {
		per += genericBytes
	}
	return int64(len(p.sem))*per + int64(len(p.code))
}

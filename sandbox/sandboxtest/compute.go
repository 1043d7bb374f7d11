package sandboxtest

import (
	"embed"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/artifactforge/forge/sandbox/sandboxtest/compute"
)

// ComputeCase is one compute-heavy program for comparing backends with native Go: Code (package
// artifact) is the source of Native, called with N; Args and Want are the call's JSON.
type ComputeCase struct {
	Name, Code, Args, Want string
	N                      int
	Native                 func(int) int
}

//go:embed compute/*.go
var computeSrc embed.FS

// computeCode is the artifact source of one file of package compute.
func computeCode(file string) string {
	b, err := computeSrc.ReadFile("compute/" + file)
	if err != nil {
		panic(err)
	}
	return strings.Replace(string(b), "package compute", "package artifact", 1)
}

func computeCase(name, file string, native func(int) int, n int) ComputeCase {
	return ComputeCase{Name: name, Code: computeCode(file), Args: "[" + strconv.Itoa(n) + "]",
		Want: strconv.Itoa(native(n)), N: n, Native: native}
}

// FibCode is recursive fib (compute.Fib): call heavy, the worst case for interpreters and Go's
// wasm code.
var FibCode = computeCode("fib.go")

// SieveCode counts primes with a sieve (compute.Primes): loop and memory heavy.
var SieveCode = computeCode("sieve.go")

// ComputeCases are the compute benchmarks every backend runs beside native Go (the Native
// function of each): calls, loops, and the everyday work of a generated tool (JSON, maps,
// strings, sorting, allocation). Each takes a millisecond or a few natively.
var ComputeCases = []ComputeCase{
	computeCase("fib27", "fib.go", compute.Fib, 27),
	computeCase("sieve2M", "sieve.go", compute.Primes, 2_000_000),
	computeCase("json", "json.go", compute.JSONRoundTrip, 50),
	computeCase("words", "words.go", compute.WordCount, 50_000),
	computeCase("sort", "sort.go", compute.SortInts, 100_000),
	computeCase("strbuild", "strbuild.go", compute.BuildString, 20_000),
	computeCase("alloc", "alloc.go", compute.Trees, 10),
}

// CPUMeter reports a benchmark's CPU time per op (metric "cpu-ns/op") beside its wall time: on a
// shared machine the wall time of a run counts the time other processes held the core, the
// thread's CPU time does not. Start locks the goroutine to its thread; Stop reports and unlocks.
// Work the benchmark hands to other threads (the host's concurrent GC) is not counted.
type CPUMeter struct {
	start time.Duration
	ok    bool
}

// StartCPU starts a CPUMeter (call it before b.Loop).
func StartCPU() *CPUMeter {
	runtime.LockOSThread()
	d, ok := ThreadCPU()
	return &CPUMeter{start: d, ok: ok}
}

// Stop reports cpu-ns/op for b's b.N iterations (call it after b.Loop).
func (m *CPUMeter) Stop(b *testing.B) {
	defer runtime.UnlockOSThread()
	if d, ok := ThreadCPU(); ok && m.ok && b.N > 0 {
		b.ReportMetric(float64(d-m.start)/float64(b.N), "cpu-ns/op")
	}
}

package sandboxtest

import (
	"embed"
	"strconv"
	"strings"

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

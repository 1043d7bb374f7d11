package main

import (
	"strings"
	"testing"
)

const sample = `goos: linux
BenchmarkComputeNative/fib27-2   	     100	   1000000 ns/op	   1000000 cpu-ns/op	       0 B/op	       0 allocs/op
BenchmarkComputeNative/fib27-2   	     100	   3000000 ns/op	   1000000 cpu-ns/op	       0 B/op	       0 allocs/op
BenchmarkComputeNative/fib27-2   	     100	   2000000 ns/op	   1000000 cpu-ns/op	       0 B/op	       0 allocs/op
BenchmarkComputeWasm/fib27-2     	      20	   5000000 ns/op	   3000000 cpu-ns/op	     600 B/op	       9 allocs/op
BenchmarkComputeWasm/fib27-2     	      20	   4000000 ns/op	   4000000 cpu-ns/op	     600 B/op	       9 allocs/op
BenchmarkComputeNative/json-2    	     100	     20000 ns/op
BenchmarkComputeYaegi/json-2     	      20	     30000 ns/op
BenchmarkComputeNativeWorker/json-2 	     100	     24000 ns/op
BenchmarkWasmWarmCall-2          	  100000	      4300 ns/op
PASS
ok  	github.com/artifactforge/forge/sandbox/wasm	12.1s
`

func TestTable(t *testing.T) {
	s, err := parse(strings.NewReader(sample), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.failed {
		t.Error("failed without a FAIL line")
	}
	got := table(s)
	want := `case           native       wasm  wasm/n   (cpu)      yaegi yaegi/n   (cpu)     worker worker/n   (cpu)
fib27          2.00ms     4.50ms    2.2x    3.5x          -       -       -          -       -       -
json           20.0µs          -       -       -     30.0µs    1.5x       -     24.0µs    1.2x       -
medians of up to 3 runs; x/n = sandbox / native wall time per call (JSON in and out for the sandboxes; worker: sandbox/native), (cpu) the same of the calling thread's CPU time
`
	if got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
}

func TestBenchLine(t *testing.T) {
	for _, c := range []struct {
		line, backend, name string
		ns, cpu             float64
		ok                  bool
	}{
		{"BenchmarkComputeWasm/sieve2M-8  10  12.5 ns/op", "Wasm", "sieve2M", 12.5, 0, true},
		{"BenchmarkComputeWasm/sieve2M-8  10  12.5 ns/op  9 cpu-ns/op  3 B/op", "Wasm", "sieve2M", 12.5, 9, true},
		{"BenchmarkComputeYaegi/a-b-2  10  7 ns/op", "Yaegi", "a-b", 7, 0, true},
		{"BenchmarkComputeWasm/x  10  7 ns/op", "Wasm", "x", 7, 0, true}, // GOMAXPROCS=1: no suffix
		{"BenchmarkComputeOther/x-2  10  7 ns/op", "", "", 0, 0, false},
		{"BenchmarkComputeWasm/x-2  --- FAIL", "", "", 0, 0, false},
		{"BenchmarkWasmWarmCall-2  10  7 ns/op", "", "", 0, 0, false},
	} {
		be, name, ns, cpu, ok := benchLine(c.line)
		if be != c.backend || name != c.name || ns != c.ns || cpu != c.cpu || ok != c.ok {
			t.Errorf("%q: got %q %q %v %v %v", c.line, be, name, ns, cpu, ok)
		}
	}
}

func TestFailMarks(t *testing.T) {
	s, _ := parse(strings.NewReader("--- FAIL: BenchmarkComputeWasm/json\nFAIL\n"), nil)
	if !s.failed {
		t.Error("FAIL not noticed")
	}
}

// Command benchtable turns `go test -bench` output of the compute benchmarks into one table:
// for each case of sandboxtest.ComputeCases, the median ns/op of BenchmarkComputeNative,
// BenchmarkComputeWasm, BenchmarkComputeYaegi and BenchmarkComputeNativeWorker, each sandbox's ratio to native, and the same
// ratio of the calling thread's CPU time (cpu-ns/op, where the benchmarks report it), which a
// shared machine's other processes do not inflate.
//
//	go test -run '^$' -bench '^BenchmarkCompute' -count 5 ./sandbox/wasm ./sandbox/yaegi | go run ./internal/benchtable
//
// It reads stdin, copies it to stderr (the raw figures stay visible) and writes the table to
// stdout; a benchmark that failed (a FAIL line) makes it exit 1 after the table.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// backends are the columns, in order: the suffix of BenchmarkCompute<backend>.
var backends = []string{"Native", "Wasm", "Yaegi", "NativeWorker"}

// label is a backend's column name: NativeWorker (sandbox/native: native code in a locked-down
// worker process) is "worker".
func label(be string) string {
	if be == "NativeWorker" {
		return "worker"
	}
	return strings.ToLower(be)
}

// samples holds the ns/op and cpu-ns/op figures per case and backend, and the cases in
// first-seen order.
type samples struct {
	cases  []string
	ns     map[string]map[string][]float64 // case -> backend -> ns/op of each run
	cpu    map[string]map[string][]float64 // case -> backend -> cpu-ns/op of each run
	failed bool
}

// parse reads go test -bench output: lines such as
// "BenchmarkComputeWasm/fib27-2   20   7341219 ns/op   ...".
func parse(r io.Reader, echo io.Writer) (samples, error) {
	s := samples{ns: map[string]map[string][]float64{}, cpu: map[string]map[string][]float64{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if echo != nil {
			fmt.Fprintln(echo, line)
		}
		if strings.HasPrefix(line, "FAIL") || strings.HasPrefix(line, "--- FAIL") {
			s.failed = true
		}
		backend, name, ns, cpu, ok := benchLine(line)
		if !ok {
			continue
		}
		if s.ns[name] == nil {
			s.ns[name] = map[string][]float64{}
			s.cpu[name] = map[string][]float64{}
			s.cases = append(s.cases, name)
		}
		s.ns[name][backend] = append(s.ns[name][backend], ns)
		if cpu > 0 {
			s.cpu[name][backend] = append(s.cpu[name][backend], cpu)
		}
	}
	return s, sc.Err()
}

// benchLine decodes one result line of a compute benchmark: ns/op, and cpu-ns/op if reported
// (else 0).
func benchLine(line string) (backend, name string, ns, cpu float64, ok bool) {
	f := strings.Fields(line)
	if len(f) < 4 || !strings.HasPrefix(f[0], "BenchmarkCompute") {
		return "", "", 0, 0, false
	}
	full := strings.TrimPrefix(f[0], "BenchmarkCompute")
	backend, name, found := strings.Cut(full, "/")
	if !found || !slices.Contains(backends, backend) {
		return "", "", 0, 0, false
	}
	if i := strings.LastIndexByte(name, '-'); i > 0 { // the -GOMAXPROCS suffix
		if _, err := strconv.Atoi(name[i+1:]); err == nil {
			name = name[:i]
		}
	}
	for i := 2; i+1 < len(f); i++ {
		v, err := strconv.ParseFloat(f[i], 64)
		switch {
		case err != nil:
		case f[i+1] == "ns/op":
			ns, ok = v, true
		case f[i+1] == "cpu-ns/op":
			cpu = v
		}
	}
	if !ok {
		return "", "", 0, 0, false
	}
	return backend, name, ns, cpu, true
}

// median of xs (not empty); xs is sorted in place.
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// table formats the medians and ratios; a backend with no figure for a case shows "-".
func table(s samples) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-10s %10s", "case", label(backends[0]))
	for _, be := range backends[1:] {
		be = label(be)
		fmt.Fprintf(&b, " %10s %7s %7s", be, be+"/n", "(cpu)")
	}
	b.WriteByte('\n')
	runs := 0
	for _, c := range s.cases {
		ns, cpu := medians(s.ns[c]), medians(s.cpu[c])
		fmt.Fprintf(&b, "%-10s %10s", c, duration(ns["Native"]))
		for _, be := range backends[1:] {
			fmt.Fprintf(&b, " %10s %7s %7s", duration(ns[be]), ratio(ns[be], ns["Native"]), ratio(cpu[be], cpu["Native"]))
		}
		b.WriteByte('\n')
		for _, xs := range s.ns[c] {
			runs = max(runs, len(xs))
		}
	}
	fmt.Fprintf(&b, "medians of up to %d runs; x/n = sandbox / native wall time per call (JSON in and out for the sandboxes; worker: sandbox/native), (cpu) the same of the calling thread's CPU time\n", runs)
	return b.String()
}

// medians maps each backend to the median of its figures (absent: none).
func medians(by map[string][]float64) map[string]float64 {
	m := map[string]float64{}
	for be, xs := range by {
		if len(xs) > 0 {
			m[be] = median(xs)
		}
	}
	return m
}

// duration prints ns as a short duration ("-" for none).
func duration(ns float64) string {
	switch {
	case ns == 0:
		return "-"
	case ns >= 1e9:
		return fmt.Sprintf("%.2fs", ns/1e9)
	case ns >= 1e6:
		return fmt.Sprintf("%.2fms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.1fµs", ns/1e3)
	}
	return fmt.Sprintf("%.0fns", ns)
}

func ratio(x, native float64) string {
	if x == 0 || native == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fx", x/native)
}

func main() {
	s, err := parse(os.Stdin, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	if len(s.cases) == 0 {
		fmt.Fprintln(os.Stderr, "benchtable: no BenchmarkCompute{Native,Wasm,Yaegi,NativeWorker} results on stdin: pipe `go test -bench '^BenchmarkCompute'` output into it")
		os.Exit(1)
	}
	fmt.Print(table(s))
	if s.failed {
		fmt.Fprintln(os.Stderr, "benchtable: a benchmark failed (FAIL above)")
		os.Exit(1)
	}
}

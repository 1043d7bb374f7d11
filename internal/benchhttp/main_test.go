package main

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

const heyReport = `
Summary:
  Total:	5.0050 secs
  Requests/sec:	9213.4528

Latency distribution:
  10% in 0.0021 secs
  50% in 0.0045 secs
  99% in 0.0220 secs

Status code distribution:
  [200]	46114 responses
`

func TestParseHey(t *testing.T) {
	x, err := parseHey("u", []byte(heyReport))
	if err != nil {
		t.Fatal(err)
	}
	if x.rps != 9213.4528 || x.p50 != 0.0045 || x.p99 != 0.0220 || x.n != 46114 {
		t.Fatalf("got %+v", x)
	}
	// hey built from its repository's head (go install github.com/rakyll/hey@latest, as the
	// Makefile suggests) doubles the percent sign.
	x, err = parseHey("u", []byte(strings.ReplaceAll(heyReport, "% in", "%% in")))
	if err != nil || x.p50 != 0.0045 || x.p99 != 0.0220 {
		t.Fatalf("go-installed hey's report: %+v %v", x, err)
	}
	for name, out := range map[string]string{
		"a non-200 status": heyReport + "  [400]\t12 responses\n",
		"errors":           heyReport + "\nError distribution:\n  [3]\tdial tcp: connection refused\n",
		"no report":        "hey: usage",
	} {
		if _, err := parseHey("u", []byte(out)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestMedian(t *testing.T) {
	rps := func(x result) float64 { return x.rps }
	if m := median([]result{{rps: 3}, {rps: 1}, {rps: 2}}, rps); m != 2 {
		t.Fatalf("odd: %v", m)
	}
	if m := median([]result{{rps: 4}, {rps: 1}, {rps: 2}, {rps: 3}}, rps); m != 2.5 {
		t.Fatalf("even: %v", m)
	}
}

// procCPU reads a process's CPU time as getrusage counts it (here, this process's own).
func TestProcCPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/PID/stat is Linux's")
	}
	for start := selfCPU(); selfCPU()-start < 100*time.Millisecond; {
	}
	self, proc := selfCPU(), procCPU(os.Getpid())
	if proc < self-50*time.Millisecond || proc > self+50*time.Millisecond { // ticks of 10 ms
		t.Fatalf("procCPU %v, getrusage %v", proc, self)
	}
}

// The pair's cores and the CPU-bound share: a target whose pair spends a third more CPU a call
// than the floor's reaches 75% of the floor's calls/s on the same share of the cores.
func TestCoresAndCPUBound(t *testing.T) {
	floor := result{rps: 20000, srv: 20e-6, cli: 30e-6}
	x := result{rps: 12000, srv: 36.7e-6, cli: 30e-6}
	if c := floor.cores(); c < 0.999 || c > 1.001 {
		t.Fatalf("floor cores %v", c)
	}
	if c := x.cores(); c < 0.80 || c > 0.801 {
		t.Fatalf("target cores %v", c)
	}
	if b := cpuBound(floor, x); b < 0.749 || b > 0.751 {
		t.Fatalf("cpuBound %v", b)
	}
	if b := cpuBound(floor, result{}); b != 0 {
		t.Fatalf("no CPU figures: %v", b)
	}
}

package nats

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMain fails the package if servers, connections or watchers outlive the tests: after the
// run, the goroutine count must come back to where it started (servers and clients wind down
// asynchronously, so it is given a few seconds).
func TestMain(m *testing.M) {
	before := runtime.NumGoroutine()
	code := m.Run()
	if code == 0 {
		deadline := time.Now().Add(10 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			fmt.Fprintf(os.Stderr, "registry/nats: %d goroutines left behind (%d before the tests):\n%s\n", n-before, before, leftovers(string(buf)))
			code = 1
		}
	}
	os.Exit(code)
}

// leftovers keeps the stacks that are not the test runner's own.
func leftovers(all string) string {
	var out []string
	for _, g := range strings.Split(all, "\n\n") {
		if strings.Contains(g, "TestMain") || strings.Contains(g, "testing.(*M)") {
			continue
		}
		out = append(out, g)
	}
	return strings.Join(out, "\n\n")
}

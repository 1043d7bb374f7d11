package wasm

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/artifactforge/forge/sandbox/sandboxtest"
)

// testCacheDir is shared by every test and benchmark in the package (and across runs), so each
// module is built and compiled once (sandboxtest.BuildCacheDir).
var testCacheDir string

// shared is the one Sandbox the tests use; the corpus runner gets it behind a Close that does
// nothing.
var shared *Sandbox

// testMachineWarmDir keeps the machine's warm-up markers and locks of the tests out of the
// user's cache directory.
var testMachineWarmDir = machineWarmDir

func TestMain(m *testing.M) {
	testCacheDir = sandboxtest.BuildCacheDir()
	warmDir, err := os.MkdirTemp("", "forge-wasm-warm-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testMachineWarmDir = func() (string, error) { return warmDir, nil }
	machineWarmDir = testMachineWarmDir
	shared, err = New(Options{CacheDir: testCacheDir})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	shared.Close()
	os.RemoveAll(warmDir)
	// Keep the shared cache from growing without end across runs (modules of code that tests no
	// longer compile, compiled code of older toolchains): drop what no run used for two days.
	if _, err := PruneCache(testCacheDir, time.Now().Add(-48*time.Hour), false); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

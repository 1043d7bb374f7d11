package wasm

import (
	"testing"
	"time"

	"github.com/artifactforge/forge/sandbox/sandboxtest"
)

// FuzzWasm feeds arbitrary source through parse, policy, build, compile and run in wazero: the test
// process survives and every call answers within its bound (`make fuzz`; about one program a second,
// since each builds a module).
func FuzzWasm(f *testing.F) {
	sandboxtest.FuzzSeeds(f, "../testdata/valid", "../testdata/hostile")
	f.Fuzz(func(t *testing.T, code, args string) {
		sandboxtest.FuzzProgram(t, shared, code, args, sandboxtest.FuzzOptions{CompileBound: 2 * time.Minute})
	})
}

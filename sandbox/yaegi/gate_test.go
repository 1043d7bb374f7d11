package yaegi

import (
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/artifactforge/forge/sandbox/gate"
	"github.com/artifactforge/forge/sandbox/sandboxtest"
	"github.com/artifactforge/forge/sandbox/yaegi/symbols"
)

// TestHostExportsAreTheHostAPI: forge/host in the interpreter exports exactly gate.HostAPI, the
// list the gate lets guest code reference.
func TestHostExportsAreTheHostAPI(t *testing.T) {
	assert.Equal(t, gate.HostAPI(), slices.Sorted(maps.Keys(hostExports(nil))))
}

// TestTestClockOnlyInTestInterpreters: time.Now and time.Since are added to test interpreters'
// time table and never to the shared table artifacts use.
func TestTestClockOnlyInTestInterpreters(t *testing.T) {
	for name := range testClock {
		_, inShared := symbols.Symbols["time/time"][name]
		assert.False(t, inShared, "time.%s is in the shared time table", name)
		_, inTest := withTestClock(symbols.Symbols["time/time"])[name]
		assert.True(t, inTest, "time.%s is missing from the test time table", name)
	}
}

// TestTestFileMayUseTheClock: issue 14 on this backend (see sandboxtest.RunClockTests).
func TestTestFileMayUseTheClock(t *testing.T) {
	sb := New(Options{})
	defer sb.Close()
	sandboxtest.RunClockTests(t, sb)
}

package yaegi

import (
	"go/token"
	"maps"
	"slices"
	"strings"
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
	sandboxtest.RunHumanEvalClockTests(t, sb)
}

// TestGateAllowlistMatchesTables: the gate's allowlist (sandbox/gate/zz_allowlist.go) lists
// exactly the exported names of the symbol tables the interpreter loads (shared, and copied per
// interpreter). It fails when the tables
// were regenerated or edited without the allowlist: run `go generate ./sandbox/yaegi/symbols`.
func TestGateAllowlistMatchesTables(t *testing.T) {
	var paths []string
	for key, table := range symbols.Symbols {
		path := key[:strings.LastIndex(key, "/")]
		paths = append(paths, path)
		var exported []string
		for name := range table {
			if token.IsExported(name) {
				exported = append(exported, name)
			}
		}
		for name := range symbols.Copies[key] { // mutable variables, copied per interpreter
			exported = append(exported, name)
		}
		slices.Sort(exported)
		names, ok := gate.TableNames(path)
		if assert.True(t, ok, "%s has a table but is not in the gate's allowlist", path) {
			assert.Equal(t, exported, names, "%s: the gate's allowlist differs from the table (run go generate ./sandbox/yaegi/symbols)", path)
		}
	}
	slices.Sort(paths)
	assert.Equal(t, gate.TablePaths(), paths)
}

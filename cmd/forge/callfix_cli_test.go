package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
)

const cToFCode = "package artifact\n\nfunc CToF(c float64) float64 { return c*9/5 + 32 }\n"

// unitsStore makes a store whose units.c_to_f is generated and persisted by a first call.
func unitsStore(t *testing.T) string {
	t.Helper()
	store := t.TempDir()
	contract := `{"role":"units","purpose":"unit conversion","methods":{"c_to_f":"func CToF(c float64) float64"},
"acceptance":{"examples":[{"method":"c_to_f","args":{"c":100},"expect":212}]}}`
	cf := filepath.Join(t.TempDir(), "units.json")
	require.NoError(t, os.WriteFile(cf, []byte(contract), 0o644))
	require.Equal(t, 0, bin(t, nil, nil, storeArgs(store, "role", "add", "-f", cf)...).code)
	line, err := json.Marshal(map[string]any{"role": "units", "method": "c_to_f", "kind": "generate", "attempt": 1, "code": cToFCode})
	require.NoError(t, err)
	cassette := filepath.Join(t.TempDir(), "units.jsonl")
	require.NoError(t, os.WriteFile(cassette, append(line, '\n'), 0o644))
	r := bin(t, nil, nil, storeArgs(store, "--provider", "replay:"+cassette, "call", "units", "c_to_f", "c=1")...)
	require.Equal(t, 0, r.code, r.stderr)
	return store
}

func loadUnits(t *testing.T, store string) *registry.Artifact {
	t.Helper()
	s, err := registry.Open(store)
	require.NoError(t, err)
	a, err := s.Load("units", "c_to_f")
	require.NoError(t, err)
	return a
}

// Issue 9 item 1, through the binary: a regen whose provider answers no code leaves the healthy
// code as it was and says why; the next call runs it, with no provider and no repair.
func TestBinFailedRegenDegradesNothing(t *testing.T) {
	store := unitsStore(t)
	before := loadUnits(t, store)

	r := bin(t, nil, nil, storeArgs(store, "regen", "units", "c_to_f", "--provider", "command:echo sorry, no code")...)
	assert.Equal(t, 1, r.code, r.stderr)
	assert.Contains(t, r.stderr, "no generated code passed verification")
	assert.Contains(t, r.stderr, "the current generation 1 of units.c_to_f is unchanged")

	after := loadUnits(t, store)
	assert.Equal(t, before.Lifecycle, after.Lifecycle)
	assert.NotEqual(t, registry.Degraded, after.Lifecycle)
	assert.Equal(t, before.Counters, after.Counters)
	assert.Equal(t, 1, after.Generation)

	r = bin(t, nil, nil, storeArgs(store, "--json", "call", "units", "c_to_f", "c=1")...)
	require.Equal(t, 0, r.code, r.stderr)
	var o struct {
		Value json.RawMessage `json:"value"`
		Meta  struct {
			ProgramSource string `json:"program_source"`
			ProviderCalls int    `json:"provider_calls"`
		} `json:"meta"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &o), r.stdout)
	assert.JSONEq(t, `33.8`, string(o.Value))
	assert.Equal(t, "persisted", o.Meta.ProgramSource)
	assert.Zero(t, o.Meta.ProviderCalls)
}

// Issue 9 item 2, through the binary: two regens at once both succeed; the second joins or waits
// for the first and never runs the fresh code with empty args or counts a failure.
func TestBinConcurrentRegens(t *testing.T) {
	store := unitsStore(t)
	answer := filepath.Join(t.TempDir(), "answer.sh")
	code := "package artifact\n\n// v2\nfunc CToF(c float64) float64 { return c*9/5 + 32 }\n"
	script := "#!/bin/sh\ncat >/dev/null\nsleep 2\ncat <<'EOF'\n```go\n" + code + "```\nEOF\n"
	require.NoError(t, os.WriteFile(answer, []byte(script), 0o755))

	var wg sync.WaitGroup
	res := make([]binResult, 2)
	for i := range res {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i] = bin(t, nil, nil, storeArgs(store, "regen", "units", "c_to_f", "--provider", "command:"+answer)...)
		}()
	}
	wg.Wait()
	for i, r := range res {
		assert.Equal(t, 0, r.code, "regen %d: %s", i, r.stderr)
		assert.NotContains(t, r.stderr, "missing argument")
	}
	a := loadUnits(t, store)
	assert.Zero(t, a.FailureCount, "no failure counted")
	assert.NotEqual(t, registry.Degraded, a.Lifecycle)
	assert.Equal(t, "operator:regen", a.History[0].Trigger)
}

// Issue 9 item 6, through the binary: events dropped by a forge are reported by doctor.
func TestBinDoctorReportsDroppedEvents(t *testing.T) {
	store := unitsStore(t)
	r := bin(t, nil, nil, storeArgs(store, "--json", "doctor")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, `"events_dropped": 0`)
	rec := `{"time":"2026-11-26T07:00:00Z","pid":42,"dropped":7}` + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(store, "events", "dropped.jsonl"), []byte(rec), 0o644))
	r = bin(t, nil, nil, storeArgs(store, "doctor")...)
	require.Equal(t, 0, r.code, "dropped events are not damage: %s", r.stderr)
	assert.Contains(t, r.stdout, "events dropped: 7")
}

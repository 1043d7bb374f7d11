package forge

import (
	"bytes"
	"encoding/json"
	"flag"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/fixtures/baselines"
)

var updateBaselines = flag.Bool("update", false, "rewrite the baseline traces in fixtures/baselines/")

// TestHumanEvalBaseline compares the HumanEval-X scenario's event trace, normalized, with the
// recorded baseline (fixtures/baselines/<date>/humaneval.jsonl). -update rewrites it.
func TestHumanEvalBaseline(t *testing.T) {
	rep := humanEvalScenario(t)
	var raw bytes.Buffer
	enc := json.NewEncoder(&raw)
	for _, e := range rep.events {
		require.NoError(t, enc.Encode(e))
	}
	got, err := baselines.Normalize(raw.Bytes())
	require.NoError(t, err)
	require.NoError(t, baselines.Compare("humaneval.jsonl", got, *updateBaselines))
}

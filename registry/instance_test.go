package registry

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestContractInstanceMode(t *testing.T) {
	for _, mode := range []string{"", "pooled", "per_call"} {
		_, err := DecodeContract([]byte(`{"role":"r","purpose":"p","limits":{"instance":"` + mode + `"}}`))
		require.NoError(t, err, mode)
	}
	_, err := DecodeContract([]byte(`{"role":"r","purpose":"p","limits":{"instance":"per-call"}}`))
	if assert.Error(t, err) {
		assert.Contains(t, err.Error(), `use "per_call"`)
	}
}

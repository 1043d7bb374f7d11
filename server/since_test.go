package server

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// GET /v1/stats?since= reads an age as `forge stats --since` and MCP forge_stats do
// (forge.ParseAge): days included; what is not an age is a 400 that says how to write one.
func TestStatsSinceIsTheCLIsAge(t *testing.T) {
	_, ts := newTestServer(t, openForge(t, t.TempDir()), Options{})
	for since, want := range map[string]int{"7d": 200, "24h": 200, "0s": 200, "-1h": 400, "week": 400} {
		var b struct {
			Error struct{ Message string } `json:"error"`
		}
		assert.Equal(t, want, get(t, ts.URL+"/v1/stats?since="+since, &b), since)
		if want == 400 {
			assert.Contains(t, b.Error.Message, "7d", since)
		}
	}
}

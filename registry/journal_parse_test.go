package registry

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fast journal decoder agrees with encoding/json on every line appendRecord writes, and
// declines (leaving the line to encoding/json) whatever it does not fully understand.
func TestParseRecordFastMatchesJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	classes := []string{"", "", "", "intrinsic", "caller"}
	fast := 0
	for i := 0; i < 2000; i++ {
		var d delta
		d.calls = rng.Int64N(1000)
		pick := func() int64 {
			if rng.IntN(3) == 0 {
				return 0
			}
			return rng.Int64N(1 << 40)
		}
		d.c = Counters{SuccessCount: pick(), FailureCount: pick(), IntrinsicFailureCount: pick(), AdaptiveFailureCount: pick(),
			ExtrinsicFailureCount: pick(), CallerFailureCount: pick(), TotalDurationNanos: pick(), MaxDurationNanos: pick()}
		d.recent = []byte(strings.Repeat("sia", rng.IntN(4)))
		d.gen = rng.IntN(3)
		if c := classes[rng.IntN(len(classes))]; c != "" {
			d.lastClass, d.lastReason = c, "boom \"quoted\" \\ ünïcode\n"
		}
		at := time.Unix(rng.Int64N(2e9), rng.Int64N(1e9)).UTC()
		line := appendRecord(nil, rng.Int64N(1e12)+1, Key{"role_" + string(rune('a'+i%26)), "m1"}, at, &d)
		line = line[:len(line)-1] // readJournal hands lines without their newline

		var want, got journalRecord
		require.NoError(t, json.Unmarshal(line, &want))
		if parseRecordFast(line, &got) {
			fast++
			assert.True(t, want.At.Equal(got.At), "%s", line)
			want.At, got.At = time.Time{}, time.Time{}
			assert.Equal(t, want, got, "%s", line)
		} else {
			assert.NotEmpty(t, d.lastClass, "a record without a failure class must take the fast path: %s", line)
		}
		require.NoError(t, decodeRecord(line, &got))
		assert.True(t, want.At.Equal(got.At) || want.At.IsZero())
	}
	assert.Greater(t, fast, 1000)

	for _, bad := range []string{
		`{"seq":1,"role":"r","method":"m","at":"2026-01-01T00:00:00Z","calls":1,"s":1,"x":2}`,
		`{"seq":1,"role":"r\"","method":"m","at":"2026-01-01T00:00:00Z","calls":1}`,
		`{"role":"r","seq":1,"method":"m","at":"2026-01-01T00:00:00Z","calls":1}`,
		`{"seq":1,"role":"r","method":"m","at":"2026-01-01T00:00:00Z","calls":1} `,
		`{"seq":1e3,"role":"r","method":"m","at":"2026-01-01T00:00:00Z","calls":1}`,
		`{"seq":1,"role":"r","method":"m","at":"yesterday","calls":1}`,
		`{"seq":1,"role":"r","method":"m","at":"2026-01-01T00:00:00Z","calls":1,"s":1`,
	} {
		var r journalRecord
		assert.False(t, parseRecordFast([]byte(bad), &r), bad)
	}
}

package registry

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The recent window buffered per artifact keeps the last RecentWindow outcomes in order, through
// wrap-arounds, takes and give-backs, whether recorded by key or through a handle.
func TestRecordBufferRecentWindowRing(t *testing.T) {
	b := NewRecordBuffer()
	h := b.Handle("r", "m")
	var want strings.Builder
	for i := range RecentWindow + 7 {
		o := Success
		if i%5 == 0 {
			o = IntrinsicFailure
		}
		if i%2 == 0 {
			h.Record(o, time.Millisecond, "x")
		} else {
			b.Record("r", "m", o, time.Millisecond, "x")
		}
		want.WriteByte(outcomeLetters[o])
	}
	last := func(s string) string { return s[max(0, len(s)-RecentWindow):] }
	got := b.Take()[Key{"r", "m"}]
	assert.Equal(t, last(want.String()), got.Counters.Recent)
	assert.Equal(t, int64(RecentWindow+7), got.Calls)
	assert.Empty(t, b.Take(), "taken: nothing buffered")

	h.Record(AdaptiveFailure, time.Millisecond, "y")
	h.Record(Success, time.Millisecond, "")
	b.GiveBack(Key{"r", "m"}, got) // older than the two just recorded
	again := b.Take()[Key{"r", "m"}]
	assert.Equal(t, last(got.Counters.Recent+string(outcomeLetters[AdaptiveFailure])+string(outcomeLetters[Success])), again.Counters.Recent)
	assert.Equal(t, got.Calls+2, again.Calls)
}

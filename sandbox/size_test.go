package sandbox

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"256MB", 256 << 20}, {"1MiB", 1 << 20}, {"64k", 64 << 10}, {"10", 10}, {"2G", 2 << 30},
		{" 3 kb ", 3 << 10}, {"1b", 1}, {"1TiB", 1 << 40}, {"1024GiB", 1 << 40}, {"1099511627776", 1 << 40},
	} {
		got, err := ParseSize(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
	for _, tc := range []struct{ in, errHas string }{
		{"", "is not a size"}, {"MB", "is not a size"}, {"1.5MB", "is not a size"}, {"12XB", "is not a size"},
		{"-1MB", "is not a size"}, {"0", "positive"}, {"0MB", "positive"}, {"-5", "positive"},
		// The overflows of the old parsers: 9999999999G wrapped around to a negative size.
		{"9999999999G", "too large: the largest size is 1TiB"},
		{"99999999999999999999", "too large"},
		{"9223372036854775807", "too large"},
		{"1025GiB", "too large"}, {"2TB", "too large"}, {"1099511627777", "too large"},
	} {
		got, err := ParseSize(tc.in)
		if assert.Error(t, err, "%q gave %d", tc.in, got) {
			assert.Contains(t, err.Error(), tc.errHas, tc.in)
		}
		assert.Zero(t, got, tc.in)
	}
}

func TestFormatSize(t *testing.T) {
	for _, n := range []int64{1 << 30, 64 << 20, 1000, 1536, 1 << 40} {
		got := FormatSize(n)
		back, err := ParseSize(got)
		require.NoError(t, err, got)
		assert.Equal(t, n, back, got)
	}
	assert.Equal(t, "1GiB", FormatSize(1<<30))
	assert.Equal(t, "1000B", FormatSize(1000))
	assert.Equal(t, "1536B", FormatSize(1536))
}

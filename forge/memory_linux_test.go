package forge

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCgroupLimit(t *testing.T) {
	for in, want := range map[string]int64{"max\n": 0, "2147483648\n": 2 << 30, "": 0, "-1": 0, "9223372036854771712\n": 9223372036854771712} {
		assert.Equal(t, want, cgroupLimit(in), "%q", in)
	}
	assert.Positive(t, usableMemory(), "this machine's memory")
}

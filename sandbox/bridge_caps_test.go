package sandbox

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// capProbe records how far past its end the slice handed to UnmarshalJSON reaches.
type capProbe struct {
	past  int
	bytes string
}

func (c *capProbe) UnmarshalJSON(b []byte) error {
	c.past, c.bytes = cap(b)-len(b), string(b[len(b):cap(b)])
	return nil
}

// probeAny takes the UseNumber path of UnmarshalArg (it holds an interface).
type probeAny struct {
	P capProbe
	X any
}

func TestUnmarshalArgNoCapacityPastEnd(t *testing.T) {
	buf := []byte(`{"n": 1}` + `, "the next argument, or an earlier caller's data"`)
	var c capProbe
	require.NoError(t, UnmarshalArg(buf[:8], &c))
	assert.Equal(t, 0, c.past, "UnmarshalJSON could read past its argument")

	buf = []byte(`{"P": {}, "X": 1}` + `, "secret"`)
	var a probeAny
	require.NoError(t, UnmarshalArg(buf[:17], &a))
	assert.Equal(t, 1, a.X)
	// This path decodes from the decoder's own buffer: capacity past the field may exist, but
	// it never holds the caller's bytes past the argument.
	assert.NotContains(t, a.P.bytes, "secret")
}

func TestCapMessage(t *testing.T) {
	assert.Equal(t, "short", CapMessage("short"))
	long := strings.Repeat("é", MaxErrorBytes) // 2 bytes each: the cut falls mid-rune
	got := CapMessage(long)
	assert.True(t, utf8.ValidString(got))
	assert.LessOrEqual(t, len(got), MaxErrorBytes+len(CapMarker)+10)
	assert.Contains(t, got, "more bytes cut]")
}

// TestLogCaps: empty lines count against the byte cap, and the line count is capped too (a
// host.Log("") loop made 2.6 M lines in 10 s).
func TestLogCaps(t *testing.T) {
	h := NewHost(context.Background(), Input{Caps: Capabilities{Log: true}})
	for range 10 * MaxLogLines {
		require.NoError(t, h.Log(""))
	}
	logs := h.Logs()
	assert.Len(t, logs, MaxLogLines)
	assert.Contains(t, logs[len(logs)-1], "line cap")

	h = NewHost(context.Background(), Input{Caps: Capabilities{Log: true}, Limits: Limits{OutputBytes: 100}})
	for range 1000 {
		require.NoError(t, h.LogBytes([]byte("")))
	}
	logs = h.Logs()
	assert.Len(t, logs, 101, "each empty line costs a byte of the 100-byte cap (100 lines, then the marker)")
	assert.Contains(t, logs[len(logs)-1], "output cap")

	h = NewHost(context.Background(), Input{Caps: Capabilities{Log: true}, Limits: Limits{OutputBytes: 100}})
	h.AppendLogBytes(make([]byte, 1<<20))
	assert.Equal(t, []string{"[log truncated: output cap reached]"}, h.Logs(), "an oversized line is not copied")
}

// TestCallArgsCap: delegated args over MaxCallArgsBytes never reach the forge's call path.
func TestCallArgsCap(t *testing.T) {
	called := false
	h := NewHost(context.Background(), Input{Caps: Capabilities{Call: true}, Call: func(context.Context, string, string, json.RawMessage) (json.RawMessage, error) {
		called = true
		return json.RawMessage(`1`), nil
	}})
	big := json.RawMessage("[" + strings.Repeat("0,", MaxCallArgsBytes/2) + "0]")
	_, err := h.Call("r", "m", big)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cap")
	assert.False(t, called)
	_, err = h.Call("r", "m", json.RawMessage(`[1]`))
	require.NoError(t, err)
	assert.True(t, called)
}

// TestFinishCapsMessages: whatever a backend reports, the error leaving Finish is bounded.
func TestFinishCapsMessages(t *testing.T) {
	h := NewHost(context.Background(), Input{})
	err := h.Finish(nil, &Error{Kind: KindReturned, Message: strings.Repeat("x", 40<<20)})
	require.Error(t, err)
	assert.LessOrEqual(t, len(AsError(err).Message), MaxErrorBytes+64)
}

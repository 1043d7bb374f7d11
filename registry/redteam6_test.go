package registry

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRedteam6JSONErrorsDoNotEchoHugeNames: a contract (or any request an edge decodes refusing
// unknown fields) with an unknown field of 100 KB got a 100 KB error back, into the reply, the
// log and the event of the refused definition. The name is cut; the error still names it.
func TestRedteam6JSONErrorsDoNotEchoHugeNames(t *testing.T) {
	big := strings.Repeat("é", 50_000) // 100 KB, two bytes a rune: the cut keeps whole runes
	_, err := DecodeContract([]byte(`{"role":"text","purpose":"p","methods":{"upper":"func Upper(s string) string"},"` + big + `":1}`))
	require.ErrorIs(t, err, ErrInvalidContract)
	assert.Less(t, len(err.Error()), 300, "%.300s", err.Error())
	assert.Contains(t, err.Error(), `unknown field "`+strings.Repeat("é", 32)+`…" (a field name of 100000 bytes)`)
	_, err = DecodeContract([]byte(`{"role":"text","purpose":"p","methods":{"upper":"func Upper(s string) string"},"capabilites":{}}`))
	assert.Contains(t, err.Error(), `unknown field "capabilites"`, "a short name is said whole")

	for _, tc := range []struct{ in, want string }{
		{`json: unknown field "x"`, `json: unknown field "x"`},
		{"arguments: json: unknown field \"" + strings.Repeat("a", 65) + "\"", "arguments: json: unknown field \"" + strings.Repeat("a", 64) + "…\" (a field name of 65 bytes)"},
		{"unexpected EOF", "unexpected EOF"},
	} {
		assert.Equal(t, tc.want, JSONErrText(errors.New(tc.in)))
	}
}

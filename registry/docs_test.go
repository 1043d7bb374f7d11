package registry

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocsAreChecked: docs for an undeclared method, a parameter the signature does not have, or
// an example whose args do not fit the signature are problems Check names by field.
func TestDocsAreChecked(t *testing.T) {
	for _, tc := range []struct {
		name, docs string
		fields     []string
	}{
		{"good", `{"upper":{"description":"upper-cases s","params":{"s":"the text"},"examples":[{"args":{"s":"a"},"result":"A"}]}}`, nil},
		{"unknown method", `{"lower":{"description":"x"}}`, []string{"docs.lower"}},
		{"unknown param", `{"upper":{"params":{"text":"the text"}}}`, []string{"docs.upper.params.text"}},
		{"args do not fit", `{"upper":{"examples":[{"args":{"s":3}},{"args":{"t":"a"}}]}}`, []string{"docs.upper.examples[0].args", "docs.upper.examples[1].args"}},
	} {
		data := `{"role":"text","purpose":"p","methods":{"upper":"func Upper(s string) string"},"docs":` + tc.docs + `}`
		_, ps := CheckContract([]byte(data), Maxima{})
		assert.Equal(t, tc.fields, problemFields(ps), "%s: %v", tc.name, ps)
	}
}

// TestDocsLeaveTheFingerprint: docs are for agents; adding or editing them changes no
// fingerprint, so no artifact goes stale; a contract written before docs existed decodes as before.
func TestDocsLeaveTheFingerprint(t *testing.T) {
	old := `{"role":"text","purpose":"p","methods":{"upper":"func Upper(s string) string"}}`
	c, err := DecodeContract([]byte(old))
	require.NoError(t, err)
	withDocs := c
	withDocs.Docs = map[string]MethodDoc{"upper": {Description: "upper-cases s"}}
	assert.Equal(t, c.Fingerprint(), withDocs.Fingerprint())
	b, _ := json.Marshal(withDocs)
	back, err := DecodeContract(b)
	require.NoError(t, err)
	assert.Equal(t, "upper-cases s", back.Docs["upper"].Description)
}

// TestDefinedBy: PutRole records the client a contract is defined by; the same contract put
// again without a name keeps it, a changed one without a name has none.
func TestDefinedBy(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	defer s.Close()
	c := Contract{Role: "text", Purpose: "p"}
	rec, err := s.PutRole(c.By("agent-a"), time.Now())
	require.NoError(t, err)
	assert.Equal(t, "agent-a", rec.DefinedBy)
	rec, err = s.PutRole(c, time.Now())
	require.NoError(t, err)
	assert.Equal(t, "agent-a", rec.DefinedBy, "the same contract again")
	got, err := s.Role("text")
	require.NoError(t, err)
	assert.Equal(t, "agent-a", got.DefinedBy, "stored")
	c.Purpose = "q"
	rec, err = s.PutRole(c, time.Now())
	require.NoError(t, err)
	assert.Empty(t, rec.DefinedBy)
}

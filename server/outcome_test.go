package server

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/forge"
)

// writeOutcome writes the document json.Encoder wrote before AppendJSON, and a value that is not
// JSON is a 500 saying so, not an empty body.
func TestWriteOutcomeBody(t *testing.T) {
	o := forge.Outcome{OK: true, Value: json.RawMessage(`{"s":"<HELLO>"}`), Meta: forge.Meta{ProgramSource: forge.SourcePersisted, ArtifactGen: 2, Duration: 1234, Decision: "execute:healthy"}}
	w := httptest.NewRecorder()
	writeOutcome(w, &o, false)
	var want bytes.Buffer
	type doc forge.Outcome // encoding/json's own document, without AppendJSON
	require.NoError(t, json.NewEncoder(&want).Encode((*doc)(&o)))
	assert.Equal(t, 200, w.Code)
	assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
	assert.Equal(t, want.String(), w.Body.String())

	bad := forge.Outcome{OK: true, Value: json.RawMessage(`{"s":`)}
	w = httptest.NewRecorder()
	writeOutcome(w, &bad, false)
	assert.Equal(t, 500, w.Code)
	assert.Contains(t, w.Body.String(), "could not be written as JSON")
	assert.True(t, json.Valid(w.Body.Bytes()), w.Body.String())
}

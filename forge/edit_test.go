package forge

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEditGoesThroughTheGate(t *testing.T) {
	store := t.TempDir()
	f := openForge(t, store, cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK}))
	require.NoError(t, f.AddRole(textContract()))
	require.True(t, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)

	o := f.Edit(context.Background(), "text", "upper", upperWrong)
	require.False(t, o.OK, "code that fails the acceptance example is refused")
	assert.Equal(t, "gate", o.Err.Type)
	assert.Contains(t, o.Err.Message, "acceptance example")
	art, err := f.Store().Load("text", "upper")
	require.NoError(t, err)
	assert.Equal(t, 1, art.Generation, "nothing stored")

	edited := upperOK + "\n// edited by an operator\n"
	o = f.Edit(context.Background(), "text", "upper", edited)
	require.True(t, o.OK, "%+v", o.Err)
	assert.Equal(t, 2, o.Meta.ArtifactGen)
	art, err = f.Store().Load("text", "upper")
	require.NoError(t, err)
	assert.Equal(t, "operator:edit", art.History[0].Trigger)
	assert.Equal(t, edited, art.Code)
	o = f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"b"}`))
	require.True(t, o.OK, "%+v", o.Err)
	assert.Equal(t, 2, o.Meta.ArtifactGen)

	assert.False(t, f.Edit(context.Background(), "nope", "upper", upperOK).OK)
}

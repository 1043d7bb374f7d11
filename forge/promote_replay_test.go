package forge

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
)

// blessedGen2 is gen2Accepted, blessed.
func blessedGen2(t *testing.T) *Forge {
	t.Helper()
	f := gen2Accepted(t)
	require.NoError(t, f.Bless("text", "upper", false))
	return f
}

// A rollback puts other code in front of callers: on a blessed artifact, code that changes
// sampled answers is refused with the inputs and both answers, unless the changes are accepted.
func TestRollbackOfBlessedArtifactReplaysTheSample(t *testing.T) {
	f := blessedGen2(t)
	ctx := context.Background()
	_, err := f.RollbackWith(ctx, "text", "upper", 0, PromoteOptions{})
	require.ErrorIs(t, err, ErrReplayChanged)
	assert.Contains(t, err.Error(), `args {"s":"abc"}: was "abc", now "ABC"`)
	assert.Contains(t, err.Error(), "--accept-changes")
	art, _ := f.Store().Load("text", "upper")
	assert.Equal(t, 2, art.Generation, "nothing rolled back")
	assert.Equal(t, registry.Blessed, art.Lifecycle)

	art, err = f.RollbackWith(ctx, "text", "upper", 1, PromoteOptions{AcceptChanges: true})
	require.NoError(t, err)
	assert.Equal(t, 3, art.Generation)
	require.NotNil(t, art.History[0].Replay)
	assert.Equal(t, registry.ReplaySummary{Replayed: 2, Same: 1, Changed: 1, Accepted: true}, *art.History[0].Replay)
	require.Len(t, art.Sample, 2, "the rolled-back code's answers are the new sample")
	for _, e := range art.Sample {
		assert.Equal(t, 3, e.Gen)
	}

	lines := operatorLines(t, f)
	var rb []Event
	for _, e := range lines {
		if e.Action == OpRollback {
			rb = append(rb, e)
		}
	}
	require.Len(t, rb, 2)
	assert.False(t, rb[0].OK)
	assert.Contains(t, rb[0].Replay, "not promoted: the artifact is blessed")
	assert.Equal(t, 2, rb[0].ArtifactGen)
	assert.True(t, rb[1].OK)
	assert.Equal(t, "replayed 2 sampled input(s): 1 same, 1 changed (accepted)", rb[1].Replay)
}

// A rollback whose code keeps every sampled answer goes through as before, with the replay's
// count in its history entry.
func TestRollbackKeepingAnswersIsNotBlocked(t *testing.T) {
	p := cassette(t,
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK},
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 2, Code: strings.Replace(upperOK, "Upper(s string) string", "Upper(s string) (out string)", 1)})
	f := openForge(t, t.TempDir(), p, sampleEvery, func(o *Options) { o.MaxProviderCalls = 1 })
	require.NoError(t, f.AddRole(textContract()))
	callAll(t, f, "first", "abc")
	require.True(t, f.Regenerate(context.Background(), "text", "upper").OK)
	callAll(t, f, "xyz")
	require.NoError(t, f.Bless("text", "upper", false))
	art, err := f.RollbackWith(context.Background(), "text", "upper", 0, PromoteOptions{})
	require.NoError(t, err)
	assert.Equal(t, 3, art.Generation)
	require.NotNil(t, art.History[0].Replay)
	assert.Equal(t, 2, art.History[0].Replay.Replayed)
	assert.Equal(t, 2, art.History[0].Replay.Same)
}

// Lifting a quarantine replays the sample on the code about to answer again: answers that
// changed (here a sample recorded by another runtime) keep the quarantine unless accepted.
func TestLiftQuarantineReplaysTheSample(t *testing.T) {
	p := cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK})
	f := openForge(t, t.TempDir(), p, sampleEvery)
	require.NoError(t, f.AddRole(textContract()))
	callAll(t, f, "first", "abc", "hello")
	_, err := f.Store().Update("text", "upper", func(a *registry.Artifact, _ bool) error {
		a.Sample[0].Value = json.RawMessage(`"not what the code says"`)
		return nil
	})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, f.QuarantineContext(ctx, "text", "upper"))

	o := f.LiftQuarantine(ctx, "text", "upper")
	require.False(t, o.OK)
	assert.Contains(t, o.Err.Message, "the quarantine of text.upper stands")
	assert.Contains(t, o.Err.Message, `was "not what the code says", now "ABC"`)
	require.NotNil(t, o.Meta.Replay)
	assert.Equal(t, 1, o.Meta.Replay.Changed)
	art, _ := f.Store().Load("text", "upper")
	assert.Equal(t, registry.Quarantined, art.Lifecycle)
	// A rollback to the current generation is the other way to lift a quarantine.
	_, err = f.RollbackWith(ctx, "text", "upper", 1, PromoteOptions{})
	require.ErrorIs(t, err, ErrReplayChanged)
	art, _ = f.Store().Load("text", "upper")
	assert.Equal(t, registry.Quarantined, art.Lifecycle)

	o = f.LiftQuarantineWith(ctx, "text", "upper", PromoteOptions{AcceptChanges: true})
	require.True(t, o.OK, "%+v", o.Err)
	art, _ = f.Store().Load("text", "upper")
	assert.Equal(t, registry.Candidate, art.Lifecycle)
	for _, e := range art.Sample {
		assert.NotContains(t, string(e.Value), "not what", "the sample holds the answers the code gives now")
	}
}

// Restoring quarantined code that changes answers of a blessed artifact's sample rolls it back
// at once: the blessed code answers again, the restored code stays in the history.
func TestRestoreOfCodeChangingAnswersIsRolledBack(t *testing.T) {
	store := t.TempDir()
	gen1 := func() *countingProvider {
		return cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK})
	}
	f := openForge(t, store, gen1(), sampleEvery)
	require.NoError(t, f.AddRole(textContract()))
	callAll(t, f, "first")
	require.NoError(t, f.Close())
	// A hand edit of the stored code (its checksum no longer matches): quarantined on load.
	path := filepath.Join(store, "tools", "text", "upper.json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var raw map[string]any
	require.NoError(t, json.Unmarshal(data, &raw))
	raw["code"] = upperExceptB
	edited, _ := json.Marshal(raw)
	require.NoError(t, os.WriteFile(path, edited, 0o644))
	// The next process's first call finds it damaged and writes the method again; its calls fill
	// the sample; an operator blesses it.
	f = openForge(t, store, gen1(), sampleEvery)
	callAll(t, f, "again", "abc", "hello")
	require.NoError(t, f.Bless("text", "upper", false))
	m, err := f.Maintainer()
	require.NoError(t, err)
	q, err := m.Quarantined()
	require.NoError(t, err)
	require.Len(t, q, 1)

	_, err = f.RestoreQuarantined(context.Background(), q[0].ID)
	require.ErrorIs(t, err, ErrReplayChanged)
	assert.Contains(t, err.Error(), `args {"s":"abc"}: was "ABC", now "abc"`)
	assert.Contains(t, err.Error(), "the restored code of text.upper (gen-2) was rolled back: ")
	assert.Contains(t, err.Error(), "`forge rollback text upper 2 --accept-changes`")
	art, err := f.Store().Load("text", "upper")
	require.NoError(t, err)
	assert.Equal(t, 3, art.Generation)
	assert.Equal(t, upperOK, art.Code, "the blessed code answers again")
	assert.Equal(t, registry.Blessed, art.Lifecycle)
	assert.Equal(t, upperExceptB, art.History[1].Code, "the restored code is kept")
	assert.Len(t, art.Sample, 2)
	lines := operatorLines(t, f)
	last := lines[len(lines)-1]
	assert.Equal(t, OpRestore, last.Action)
	assert.False(t, last.OK)
	assert.Contains(t, last.Replay, "1 changed")
}

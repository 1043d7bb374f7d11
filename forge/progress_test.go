package forge

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 23 item 10: a call that generates reports its steps to the caller's progress func
// (WithProgress) and to the live subscribers (what /v1/events streams): what it waits for, a
// re-ask after an answer failed verification, and how it ended; a call served by persisted code
// reports none.
func TestGenerationStepsAreReported(t *testing.T) {
	f := openForge(t, t.TempDir(), codeAnswers(upperWrong, upperOK))
	require.NoError(t, f.AddRole(textContract()))
	sub := f.Subscribe(Filter{Role: "text"})
	defer sub.Close()
	changes := f.Subscribe(Filter{ChangesOnly: true})
	defer changes.Close()

	var mu sync.Mutex
	var got []GenerationStep
	ctx := WithProgress(context.Background(), func(g GenerationStep) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, g)
	})
	o := f.Call(ctx, "text", "upper", json.RawMessage(`{"s":"a"}`))
	require.True(t, o.OK, "%+v", o.Err)
	require.Equal(t, 2, o.Meta.ProviderCalls)

	mu.Lock()
	steps := make([]string, len(got))
	for i, g := range got {
		steps[i] = g.Step
		assert.Equal(t, "text", g.Role)
		assert.Equal(t, "upper", g.Method)
		assert.NotZero(t, g.TraceID)
		assert.NotEmpty(t, g.Message)
	}
	mu.Unlock()
	assert.Equal(t, []string{StepAsking, StepAnswered, StepRejected, StepAsking, StepAnswered, StepPersisted}, steps)
	assert.Contains(t, got[0].Message, "waiting for the model")
	assert.Equal(t, 1, got[0].Attempt)
	assert.Contains(t, got[2].Message, "acceptance example 1")
	assert.Contains(t, got[2].Message, "asking the model again (attempt 2 of")
	assert.Equal(t, 2, got[3].Attempt)
	assert.Contains(t, got[5].Message, "generation 1")

	// The same steps on the live stream, then the call's own event.
	var live []string
	deadline := time.After(time.Minute) // a hang bound
	for len(live) < len(steps)+1 {
		select {
		case e := <-sub.C:
			if e.Kind == LiveGeneration {
				require.NotNil(t, e.Generation)
				assert.Equal(t, got[0].TraceID, e.Generation.TraceID)
				live = append(live, e.Generation.Step)
			} else if e.Kind == LiveCall {
				live = append(live, "call")
			}
		case <-deadline:
			t.Fatalf("live events: %v", live)
		}
	}
	assert.Equal(t, append(steps, "call"), live)
	for len(changes.C) > 0 {
		e := <-changes.C
		assert.NotEqual(t, LiveGeneration, e.Kind, "a step is no change")
	}

	// Persisted code: no steps.
	mu.Lock()
	got = nil
	mu.Unlock()
	require.True(t, f.Call(ctx, "text", "upper", json.RawMessage(`{"s":"b"}`)).OK)
	mu.Lock()
	assert.Empty(t, got)
	mu.Unlock()
}

// A generation that ends without usable code says so as its last step.
func TestGenerationStepsSayWhenNothingPassed(t *testing.T) {
	f := openForge(t, t.TempDir(), codeAnswers(upperWrong), func(o *Options) { o.MaxProviderCalls = 2 })
	require.NoError(t, f.AddRole(textContract()))
	var got []GenerationStep
	ctx := WithProgress(context.Background(), func(g GenerationStep) { got = append(got, g) })
	o := f.Call(ctx, "text", "upper", json.RawMessage(`{"s":"a"}`))
	require.False(t, o.OK)
	require.NotEmpty(t, got)
	last := got[len(got)-1]
	assert.Equal(t, StepFailed, last.Step)
	assert.Contains(t, last.Message, "no generated code passed verification")
	assert.Equal(t, 2, last.MaxAttempts)
}

package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

// syncBuffer is a bytes.Buffer safe for the spinner's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSlowStepsShowProgress (issue 9, item 18): a step still running after the threshold shows a
// spinner on a terminal (a plain line with -v elsewhere) and says when it is done; a step that
// ends before the threshold shows nothing. The threshold is a parameter: 0 is "already slow",
// an hour is "never slow", so nothing here depends on the machine's speed.
func TestSlowStepsShowProgress(t *testing.T) {
	for _, terminal := range []bool{true, false} {
		var w syncBuffer
		p := &slowSteps{w: &w, terminal: terminal, after: 0}
		done := p.step("compiling upper for the wasm sandbox")
		// Wait until the step is shown (a hang bound, not a speed bound).
		deadline := time.Now().Add(time.Minute)
		for !strings.Contains(w.String(), "compiling upper") && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		done()
		assert.Contains(t, w.String(), "compiling upper for the wasm sandbox", "terminal=%v", terminal)
		assert.Contains(t, w.String(), "done in", "terminal=%v", terminal)

		var quiet syncBuffer
		p = &slowSteps{w: &quiet, terminal: terminal, after: time.Hour}
		p.step("a cached compile")()
		assert.Empty(t, quiet.String(), "a fast step shows nothing")
	}
	var nilSteps *slowSteps
	nilSteps.step("nothing")() // --json: a nil reporter is a no-op
}

func TestStepsAreOffUnderJSONAndWhenNotAsked(t *testing.T) {
	var errb bytes.Buffer
	assert.Nil(t, (&app{stderr: &errb}).steps(), "not a terminal, not verbose: nothing")
	assert.NotNil(t, (&app{stderr: &errb, verbose: true}).steps())
	assert.Nil(t, (&app{stderr: &errb, verbose: true, jsonOut: true}).steps(), "nothing of it under --json")
}

type fakeSandbox struct{ compiled, tested int }

func (f *fakeSandbox) Compile(context.Context, sandbox.Source) (sandbox.Program, error) {
	f.compiled++
	return nil, nil
}
func (f *fakeSandbox) Run(context.Context, sandbox.Program, sandbox.Input) (sandbox.Output, error) {
	return sandbox.Output{}, nil
}
func (f *fakeSandbox) Close() error { return nil }
func (f *fakeSandbox) Test(context.Context, sandbox.Source, string, sandbox.Input) ([]sandbox.TestResult, error) {
	f.tested++
	return nil, nil
}

func TestWithProgressKeepsTheTester(t *testing.T) {
	fake := &fakeSandbox{}
	steps := &slowSteps{w: &syncBuffer{}, after: time.Hour}
	sb := withProgress(fake, "wasm", steps)
	tester, ok := sb.(sandbox.Tester)
	require.True(t, ok, "the gate finds the acceptance-test runner through the wrapper")
	_, _ = sb.Compile(context.Background(), sandbox.Source{})
	_, _ = tester.Test(context.Background(), sandbox.Source{}, "", sandbox.Input{})
	assert.Equal(t, 1, fake.compiled)
	assert.Equal(t, 1, fake.tested)
	assert.Same(t, fake, withProgress(fake, "wasm", nil), "no reporter: no wrapper")
}

// TestBinProviderRetriesVisibleWithVerbose (item 18): an HTTP provider's retries are told on
// stderr with -v, and not without it, nor under --json.
func TestBinProviderRetriesVisibleWithVerbose(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Header().Set("Retry-After", "0")
		http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	store := t.TempDir()
	require.Equal(t, 0, bin(t, nil, nil, storeArgs(store, "role", "add", "--role", "text", "--purpose", "string tools")...).code)
	env := []string{"OPENAI_BASE_URL=" + srv.URL + "/v1/", "OPENAI_API_KEY=test", "FORGE_MAX_PROVIDER_CALLS=1"}

	r := bin(t, nil, env, storeArgs(store, "-v", "call", "text", "upper", "s=a", "--provider", "openai:test-model")...)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "forge: provider: text.upper:")
	assert.Contains(t, r.stderr, "retry 1 of 2")
	assert.GreaterOrEqual(t, hits.Load(), int64(3), "the first attempt and two retries")

	r = bin(t, nil, env, storeArgs(store, "call", "text", "upper", "s=a", "--provider", "openai:test-model")...)
	assert.Equal(t, 1, r.code)
	assert.NotContains(t, r.stderr, "retry 1 of 2")

	r = bin(t, nil, env, storeArgs(store, "-v", "--json", "call", "text", "upper", "s=a", "--provider", "openai:test-model")...)
	assert.Equal(t, 1, r.code)
	assert.NotContains(t, r.stderr, "retry 1 of 2")
	oneJSONDoc(t, r.stdout)
}

// TestCountedStepsAreSteps (issue 26 item 3: one progress mechanism in the CLI): bench's phases
// are counted steps of the same reporter as a call's slow steps: the same start and end lines
// with -v, a bar counting the work on a terminal, and the count never goes back.
func TestCountedStepsAreSteps(t *testing.T) {
	for _, terminal := range []bool{true, false} {
		var w syncBuffer
		p := &slowSteps{w: &w, terminal: terminal}
		c := p.count("bench: cold (first call: compile)", 10)
		c.set(4)
		c.set(3)
		assert.EqualValues(t, 4, c.last, "terminal=%v", terminal)
		c.set(10)
		c.finish()
		out := w.String()
		assert.Contains(t, out, "forge: bench: cold (first call: compile): done in", "terminal=%v", terminal)
		if terminal {
			assert.Contains(t, out, "(4/10)", "the bar counts the work (drawn at most every 100 ms)")
		} else {
			assert.True(t, strings.HasPrefix(out, "forge: bench: cold (first call: compile) ...\n"), out)
		}
	}
	var nilStep *countedStep
	nilStep.set(1)
	nilStep.finish()
}

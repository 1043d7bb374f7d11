package server

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/provider/replay"
	"github.com/artifactforge/forge/registry"
)

// outcomeOf posts args to the call endpoint and decodes the Outcome, whatever the status code.
func outcomeOf(t *testing.T, base, role, method, args string) forge.Outcome {
	t.Helper()
	_, body := post(t, base+"/v1/call/"+role+"/"+method, "", args)
	var o forge.Outcome
	require.NoError(t, json.Unmarshal(body, &o), "%s", body)
	return o
}

// Issue 23 item 3 over HTTP: {"s":null} is a caller error naming s, on the generating call
// (before any code is written) and on a persisted method's call; it used to answer "".
func TestHTTPNullArgIsACallerError(t *testing.T) {
	f := openForge(t, t.TempDir())
	_, ts := newTestServer(t, f, Options{})
	for i := range 2 {
		o := outcomeOf(t, ts.URL, "text", "upper", `{"s":null}`)
		require.False(t, o.OK, "call %d answered %s", i+1, o.Value)
		assert.Equal(t, "caller", o.Err.Class)
		assert.Equal(t, "args", o.Err.Type)
		assert.Contains(t, o.Err.Message, "param s")
		assert.Zero(t, o.Meta.ProviderCalls)
		if i == 0 {
			require.True(t, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
		}
	}
	o := outcomeOf(t, ts.URL, "text", "upper", `{"s":"go"}`)
	require.True(t, o.OK, "%+v", o.Err)
	assert.JSONEq(t, `"GO"`, string(o.Value))
}

// Issue 23 item 10 over SSE: /v1/events streams the steps of a generation the server runs
// (event: generation) before the call's own event; a persisted call has none.
func TestEventsStreamGenerationSteps(t *testing.T) {
	f := openForge(t, t.TempDir())
	_, ts := newTestServer(t, f, Options{})
	ev, stop := openEvents(t, ts.URL+"/v1/events?role=text")
	defer stop()
	done := make(chan []string, 1)
	go func() {
		var kinds []string
		for {
			kind, e, err := ev.next()
			if err != nil {
				done <- append(kinds, "error: "+err.Error())
				return
			}
			switch kind {
			case forge.LiveGeneration:
				kinds = append(kinds, kind+":"+e.Generation.Step)
			case forge.LiveCall:
				done <- append(kinds, kind)
				return
			}
		}
	}()
	o := outcomeOf(t, ts.URL, "text", "upper", `{"s":"a"}`)
	require.True(t, o.OK, "%+v", o.Err)
	var kinds []string
	select {
	case kinds = <-done:
	case <-time.After(hang):
		t.Fatal("no call event on the stream (a hang)")
	}
	assert.Equal(t, []string{"generation:asking", "generation:answered", "generation:persisted", "call"}, kinds)
}

// Issue 23 item 1 over HTTP: a zero-argument method called with an empty body answers on the
// call that generates it.
func TestHTTPZeroArgFirstCallAnswers(t *testing.T) {
	line, _ := json.Marshal(map[string]any{"role": "ver", "method": "get", "kind": "generate", "attempt": 1,
		"code": "package artifact\n\nfunc Get() string { return \"v1\" }\n"})
	p, err := replay.New("test", line)
	require.NoError(t, err)
	f, err := forge.Open(forge.Options{Store: t.TempDir(), Provider: p, DefaultSandbox: "yaegi"})
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	require.NoError(t, f.AddRole(registry.Contract{Role: "ver", Purpose: "the version", Methods: map[string]string{"get": "func Get() string"}}))
	_, ts := newTestServer(t, f, Options{})
	for _, src := range []string{forge.SourceGenerated, forge.SourcePersisted} {
		o := outcomeOf(t, ts.URL, "ver", "get", "")
		require.True(t, o.OK, "%+v", o.Err)
		assert.Equal(t, src, o.Meta.ProgramSource)
		assert.JSONEq(t, `"v1"`, string(o.Value))
	}
}

package forge

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
)

// upperEchoes fails its own call's input by echoing it, as code often does: the acceptance
// examples pass, the leader's call fails with its input in the text.
const upperEchoes = `package artifact

import "strings"

func Upper(s string) string {
	if strings.Contains(s, "secret") {
		panic("cannot upper " + s)
	}
	return strings.ToUpper(s)
}
`

// TestRedteam6GenerationStepsWithholdAnotherClientsFailureText: a generation's steps went to
// every subscriber of the role (forge serve's /v1/events?role=...) with the failure's text, which
// echoes the input of the client whose call led it. A subscriber that is another client reads the
// step without it; the leading client, the operator and a forge without client identities
// (Viewer "") read it whole.
func TestRedteam6GenerationStepsWithholdAnotherClientsFailureText(t *testing.T) {
	p := cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperEchoes},
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 2, Code: upperEchoes},
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 3, Code: upperEchoes})
	f := openForge(t, t.TempDir(), p)
	require.NoError(t, f.AddRole(textContract()))
	subs := map[string]*Subscription{}
	for _, v := range []string{"", "alice", "bob"} {
		subs[v] = f.Subscribe(Filter{Role: "text", Viewer: v})
		defer subs[v].Close()
	}
	o := f.Call(WithClient(context.Background(), "alice"), "text", "upper", json.RawMessage(`{"s":"alice-secret"}`))
	require.False(t, o.OK)
	require.Contains(t, o.Err.Message, "alice-secret", "the caller reads its own failure")
	steps := func(v string) (msgs []string) {
		for {
			select {
			case e := <-subs[v].C:
				if e.Generation != nil {
					msgs = append(msgs, e.Generation.Step+": "+e.Generation.Message)
				}
			default:
				return msgs
			}
		}
	}
	all, own, other := steps(""), steps("alice"), steps("bob")
	require.NotEmpty(t, all)
	assert.Equal(t, all, own, "the leading client reads its steps whole")
	require.Len(t, other, len(all), "another client gets every step")
	echoed := 0
	for i := range all {
		if assert.NotContains(t, other[i], "alice-secret", "another client's input") && all[i] != other[i] {
			echoed++
			assert.Contains(t, other[i], "withheld", "says the text was withheld")
		}
	}
	assert.Positive(t, echoed, "a step echoed the input: %q", all)
}

// TestRedteam6ArtifactForWithholdsTheFailureReason: the artifact's last failure reason (the text
// of the last failed call, any client's) is withheld from a named client; the class stays.
func TestRedteam6ArtifactForWithholdsTheFailureReason(t *testing.T) {
	for _, tc := range []struct {
		client, want string
	}{{"", "cannot upper \"alice-secret\""}, {"bob", WithheldFailureReason}, {"alice", WithheldFailureReason}} {
		a := ArtifactFor(WithClient(context.Background(), tc.client), &registry.Artifact{LastFailureClass: "intrinsic", LastFailureReason: "cannot upper \"alice-secret\""})
		assert.Equal(t, tc.want, a.LastFailureReason, "client %q", tc.client)
		assert.Equal(t, "intrinsic", a.LastFailureClass)
	}
	assert.Empty(t, FailureReasonFor(WithClient(context.Background(), "bob"), ""), "no failure: nothing said")
}

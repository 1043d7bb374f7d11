package forge

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/learner"
)

// TestAgentKnowledge: an agent records, recalls and confirms lessons through the library API;
// the client is the provenance, a lesson reaches only the prompts of roles the client may use,
// and a client reads and confirms only what may reach its roles (issue 24 item 5).
func TestAgentKnowledge(t *testing.T) {
	store := t.TempDir()
	m := newScript(map[string][]string{"alpha.day": {goodInt("day")}, "beta.day": {goodInt("day")}})
	f := openForge(t, store, m)
	for _, r := range []string{"alpha", "beta"} {
		require.NoError(t, f.AddRole(intContract(r, "day")))
	}
	bot := WithClientRoles(WithClient(context.Background(), "bot"), []string{"alpha"})
	other := WithClientRoles(WithClient(context.Background(), "other"), []string{"beta"})

	l, created, err := f.Record(bot, RecordRequest{Content: "day numbers\n## Task\nare small ints", Reasoning: "seen", Domain: "forge"})
	require.NoError(t, err)
	assert.True(t, created)
	assert.Equal(t, "day numbers ## Task are small ints", l.Content, "one line: a lesson cannot start a heading")
	assert.Equal(t, Provenance{Source: learner.FromAgent, Client: "bot", Roles: []string{"alpha"}}, l.Provenance)

	var ke *KnowledgeError
	_, _, err = f.Record(bot, RecordRequest{Content: "x", Domain: "beta"})
	require.True(t, errors.As(err, &ke), "%v", err)
	assert.Equal(t, "refused", ke.Kind)
	assert.Contains(t, ke.Msg, "may not use role beta")
	_, _, err = f.Record(bot, RecordRequest{Content: " ", Domain: "alpha"})
	require.True(t, errors.As(err, &ke))
	assert.Equal(t, "invalid", ke.Kind)

	hits, err := f.Recall(bot, RecallRequest{Query: "day numbers"})
	require.NoError(t, err)
	require.Len(t, hits, 1)
	assert.Equal(t, "bot", hits[0].Provenance.Client)
	hits, err = f.Recall(other, RecallRequest{Query: "day numbers"})
	require.NoError(t, err)
	assert.Empty(t, hits, "a client of beta does not read a lesson scoped to alpha")
	_, err = f.Confirm(other, "forge", l.Content)
	require.True(t, errors.As(err, &ke))
	assert.Equal(t, "not_found", ke.Kind)
	c, err := f.Confirm(bot, "forge", "DAY NUMBERS ## TASK ARE SMALL INTS")
	require.NoError(t, err)
	assert.InDelta(t, 0.2, c.Confidence, 1e-9)

	for _, r := range []string{"alpha", "beta"} {
		o := f.Call(context.Background(), r, "day", json.RawMessage(`{}`))
		require.True(t, o.OK, "%v", o.Err)
	}
	assert.Contains(t, m.prompts["alpha"][0], `- client "bot" noted: "day numbers ## Task are small ints"`)
	assert.NotContains(t, m.prompts["beta"][0], "day numbers", "a lesson never reaches a role its client may not use")
	e, _ := f.Learner().List(learner.ForgeDomain)
	require.Len(t, e, 1)
	assert.InDelta(t, 0.3, e[0].Confidence, 1e-9, "the agent's confirm, then alpha's first-attempt pass with it in the prompt; the recalls confirmed nothing")

	// Without client roles in the context the client may use every role.
	any := WithClient(context.Background(), "free")
	l, _, err = f.Record(any, RecordRequest{Content: "beta days count from one", Domain: "beta", Category: "fact"})
	require.NoError(t, err)
	assert.Equal(t, []string{"beta"}, l.Provenance.Roles, "a role's lesson reaches that role only")

	off := openForge(t, t.TempDir(), m, func(o *Options) { o.NoLearning = true })
	_, err = off.Recall(bot, RecallRequest{Query: "x"})
	require.True(t, errors.As(err, &ke))
	assert.Equal(t, "off", ke.Kind)
}

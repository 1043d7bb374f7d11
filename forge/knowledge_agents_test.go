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
	third := WithClientRoles(WithClient(context.Background(), "third"), []string{"alpha"}) // bot's own does not count
	c, err := f.Confirm(third, "forge", "DAY NUMBERS ## TASK ARE SMALL INTS")
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

// TestAgentConfirmsCountOncePerClient: no single client can raise a lesson's confidence alone
// (a lesson with more confidence ranks first in prompts and is evicted last): confirming or
// recording again one's own lesson does not count, another client's confirmation counts once.
func TestAgentConfirmsCountOncePerClient(t *testing.T) {
	f := openForge(t, t.TempDir(), newScript(nil))
	require.NoError(t, f.AddRole(intContract("alpha", "day")))
	bot := WithClientRoles(WithClient(context.Background(), "bot"), []string{"alpha"})
	other := WithClientRoles(WithClient(context.Background(), "other"), []string{"alpha"})
	l, _, err := f.Record(bot, RecordRequest{Content: "days are 1 to 31", Domain: "alpha"})
	require.NoError(t, err)
	start := l.Confidence

	var ke *KnowledgeError
	for range 5 {
		_, err = f.Confirm(bot, "alpha", "days are 1 to 31")
		require.True(t, errors.As(err, &ke), "a client's confirmation of its own lesson is refused: %v", err)
		assert.Equal(t, KnowledgeRefused, ke.Kind)
		assert.Contains(t, ke.Msg, "counts each client once")
		l, created, err := f.Record(bot, RecordRequest{Content: "Days are 1 to 31 ", Domain: "alpha"})
		require.NoError(t, err)
		assert.False(t, created)
		assert.Equal(t, start, l.Confidence, "recording one's own lesson again does not confirm it")
	}
	l, err = f.Confirm(other, "alpha", "days are 1 to 31")
	require.NoError(t, err)
	assert.Greater(t, l.Confidence, start, "another client's confirmation counts")
	once := l.Confidence
	_, err = f.Confirm(other, "alpha", "days are 1 to 31")
	require.True(t, errors.As(err, &ke), "%v", err)
	l, _, err = f.Record(other, RecordRequest{Content: "days are 1 to 31", Domain: "alpha"})
	require.NoError(t, err)
	assert.Equal(t, once, l.Confidence, "once per client, confirmed or recorded")

	// The operator vouches as often as it likes (it is trusted); forge's own confirmations (a
	// lesson that helped a generation pass) are not a client's.
	e, err := f.learn.Confirm("alpha", "days are 1 to 31")
	require.NoError(t, err)
	assert.Greater(t, e.Confidence, once)
}

package nats

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/learner"
)

// TestFleetKnowledgeUnderTheLearner runs the learner on the fleet store's documents, as two
// machines would: 4 learner stores on 2 store handles record into one domain at once and lose
// nothing; a damaged document is quarantined by a reader (as an entry the doctor lists), the
// other domains untouched.
func TestFleetKnowledgeUnderTheLearner(t *testing.T) {
	url := singleNoSync(t)
	fs := []*FleetStore{openFleet(t, url, "learn"), openFleet(t, url, "learn")}
	openOn := func(f *FleetStore) *learner.Store {
		s, err := learner.OpenDocs(f.Knowledge(), learner.Options{Revalidate: -1})
		require.NoError(t, err)
		return s
	}
	const writers, each = 4, 6
	errs := make(chan error, writers)
	for w := range writers {
		go func() {
			s := openOn(fs[w%2])
			for i := range each {
				if _, _, err := s.Record(learner.Entry{Content: fmt.Sprintf("writer %d lesson %d", w, i), Domain: "shared"}); err != nil {
					errs <- err
					return
				}
				if _, _, err := s.Record(learner.Entry{Content: "common lesson", Domain: "shared"}); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range writers {
		require.NoError(t, <-errs)
	}
	all, err := openOn(fs[1]).List("shared")
	require.NoError(t, err)
	assert.Len(t, all, writers*each+1, "no update lost")
	for _, e := range all {
		if e.Content == "common lesson" {
			assert.Equal(t, writers*each-1, e.UseCount)
		}
	}

	docs := fs[0].Knowledge()
	require.NoError(t, docs.Modify("bad.yaml", func([]byte) ([]byte, error) { return []byte("- content: [unclosed\n"), nil }))
	listed, err := openOn(fs[1]).List("")
	require.NoError(t, err)
	assert.Len(t, listed, writers*each+1, "the damaged domain is skipped, the others read")
	names, err := docs.Names()
	require.NoError(t, err)
	assert.NotContains(t, names, "bad.yaml", "quarantined")
	pending, err := fs[0].Quarantined()
	require.NoError(t, err)
	require.Len(t, pending, 1)
	assert.Equal(t, "knowledge", pending[0].Kind)
	assert.True(t, strings.HasSuffix(pending[0].Path, "knowledge.bad=2Eyaml"), pending[0].Path)
}

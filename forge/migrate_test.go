package forge

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
)

// failingImporter fails every import of one method and counts the others.
type failingImporter struct {
	bad string
	n   atomic.Int64
}

func (f *failingImporter) ImportRole(registry.RoleRecord) error { return nil }
func (f *failingImporter) ImportArtifact(a *registry.Artifact) error {
	if a.Method == f.bad {
		return errors.New("disk full")
	}
	f.n.Add(1)
	return nil
}

// The parallel writers stop at a failure and name the artifact, however many fail; none hangs.
func TestMigrateImportStopsAtAFailure(t *testing.T) {
	var arts []*registry.Artifact
	for i := range 200 {
		arts = append(arts, &registry.Artifact{Role: "r", Method: fmt.Sprintf("m%03d", i%50)})
	}
	imp := &failingImporter{bad: "m007"}
	err := importArtifacts(imp, arts)
	require.NotNil(t, err)
	assert.Equal(t, "artifact r.m007", err.what)
	assert.EqualError(t, err.err, "disk full")
	assert.Less(t, imp.n.Load(), int64(200))
	imp = &failingImporter{bad: "none"}
	assert.Nil(t, importArtifacts(imp, arts))
	assert.Equal(t, int64(200), imp.n.Load())
}

// jsonDiff names the first field that differs between two records by value, leaves out the
// store-local fields, and tells a field that is absent from one that is null.
func TestMigrateJSONDiff(t *testing.T) {
	type rec struct {
		A     int               `json:"a"`
		B     *string           `json:"b,omitempty"`
		N     json.Number       `json:"n,omitempty"`
		Stamp string            `json:"stamp,omitempty"`
		M     map[string]int64  `json:"metrics_applied,omitempty"`
		X     map[string]string `json:"x,omitempty"`
	}
	s := "s"
	for _, c := range []struct {
		name      string
		want, got rec
		diff      string
	}{
		{"same", rec{A: 1, B: &s}, rec{A: 1, B: &s}, ""},
		{"store-local fields", rec{A: 1, Stamp: "x", M: map[string]int64{"j1": 3}}, rec{A: 1, Stamp: "y"}, ""},
		{"a number", rec{A: 1}, rec{A: 2}, "field a is 1 in the source and 2 in the destination"},
		{"the same number written otherwise", rec{N: "1.0"}, rec{N: "1"}, ""},
		{"a big number", rec{N: "9007199254740993"}, rec{N: "9007199254740992"}, "field n is"},
		{"absent in the destination", rec{B: &s}, rec{}, "field b is \"s\" in the source and absent in the destination"},
		{"map order", rec{X: map[string]string{"a": "1", "b": "2"}}, rec{X: map[string]string{"b": "2", "a": "1"}}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := jsonDiff(c.want, c.got)
			if c.diff == "" {
				assert.Empty(t, d)
			} else {
				assert.Contains(t, d, c.diff)
			}
		})
	}
}

package nats

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
)

// TestFleetDoctorQuarantinesDamagedRecords: records damaged behind the store's back (garbage, a
// hand-edited code or contract) are found by Doctor, moved to quarantine entries and reported;
// restore takes a usable one back, refuses an unusable one with advice, and dismiss drops it.
func TestFleetDoctorQuarantinesDamagedRecords(t *testing.T) {
	url := singleNoSync(t)
	f := openFleet(t, url, "doctor")
	ctx := testCtx(t)
	_, err := f.PutRole(registry.Contract{Role: "r", Purpose: "tools"}, time.Now())
	require.NoError(t, err)
	for _, m := range []string{"good", "garbage", "edited"} {
		_, err := f.Update("r", m, func(a *registry.Artifact, _ bool) error {
			a.Promote("package artifact // "+m, "initial_forge", "m", "pv", time.Now())
			return nil
		})
		require.NoError(t, err)
	}
	put := func(key string, data []byte) {
		t.Helper()
		_, err := f.st.Data.Put(ctx, key, data)
		require.NoError(t, err)
	}
	akey := func(m string) string { k, _ := f.st.ArtifactKey("r", m); return k }
	put(akey("garbage"), []byte("{not json"))
	e, err := f.st.Data.Get(ctx, akey("edited"))
	require.NoError(t, err)
	put(akey("edited"), []byte(strings.Replace(string(e.Value()), "// edited", "// edited by hand", 1)))
	rkey, _ := f.st.RoleKey("r")
	e, err = f.st.Data.Get(ctx, rkey)
	require.NoError(t, err)
	put(rkey, []byte(strings.Replace(string(e.Value()), `"purpose":"tools"`, `"purpose":"better tools"`, 1)))

	other := openFleet(t, url, "doctor")
	_, err = other.Load("r", "garbage")
	assert.ErrorIs(t, err, registry.ErrCorrupt)
	_, err = other.Role("r")
	assert.ErrorIs(t, err, registry.ErrCorrupt)

	rep, err := other.Doctor()
	require.NoError(t, err)
	assert.Equal(t, 4, rep.Checked)
	require.Len(t, rep.Quarantined, 3, "%+v", rep.Quarantined)
	assert.Len(t, rep.Pending, 3)
	assert.True(t, rep.Damaged())
	byWhat := map[string]registry.QuarantineReport{}
	for _, q := range rep.Quarantined {
		byWhat[q.Kind+":"+q.Method] = q
		assert.Contains(t, q.Reason, "corrupt")
	}
	_, err = other.Load("r", "garbage")
	assert.ErrorIs(t, err, registry.ErrNotFound, "moved away")
	a, err := other.Load("r", "good")
	require.NoError(t, err)
	assert.Equal(t, 1, a.Generation)

	rep2, err := other.Doctor()
	require.NoError(t, err)
	assert.Empty(t, rep2.Quarantined, "nothing new")
	assert.Len(t, rep2.Pending, 3)

	_, err = other.Restore(byWhat["artifact:garbage"].ID, time.Now())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "forge quarantine dismiss")
	q, err := other.Dismiss(byWhat["artifact:garbage"].ID)
	require.NoError(t, err)
	assert.Equal(t, "garbage", q.Method)

	rr, err := other.Restore(byWhat["role:"].ID, time.Now())
	require.NoError(t, err)
	assert.Equal(t, "accepted", rr.Action)
	r, err := f.Role("r")
	require.NoError(t, err)
	assert.Equal(t, "better tools", r.Purpose)
	assert.Equal(t, r.Contract.Fingerprint(), r.Fingerprint)

	rr, err = other.Restore(byWhat["artifact:edited"].ID, time.Now())
	require.NoError(t, err)
	assert.Equal(t, "accepted", rr.Action)
	a, err = f.Load("r", "edited")
	require.NoError(t, err)
	assert.Equal(t, "package artifact // edited by hand", a.Code)
	assert.Equal(t, registry.Candidate, a.Lifecycle)

	pending, err := f.Quarantined()
	require.NoError(t, err)
	assert.Empty(t, pending)
	_, err = f.Dismiss("nope")
	assert.ErrorIs(t, err, registry.ErrNotFound)

	// Knowledge: a quarantined document is an entry too, and restores as it was.
	docs := f.Knowledge()
	require.NoError(t, docs.Modify("go.yaml", func([]byte) ([]byte, error) { return []byte("x: [\n"), nil }))
	where := docs.Quarantine("go.yaml", errors.New("does not parse"))
	require.Contains(t, where, "quarantine.")
	pending, err = f.Quarantined()
	require.NoError(t, err)
	require.Len(t, pending, 1)
	assert.Equal(t, "knowledge", pending[0].Kind)
	_, err = f.Restore(pending[0].ID, time.Now())
	require.NoError(t, err)
	data, _, err := docs.Read("go.yaml")
	require.NoError(t, err)
	assert.Equal(t, "x: [\n", string(data))

	// An update over a damaged record sets it aside once and writes a new artifact.
	put(akey("good"), []byte(`{"schema_version":1,"role":"r"`))
	calls := 0
	_, err = f.Update("r", "good", func(a *registry.Artifact, exists bool) error {
		calls++
		assert.False(t, exists)
		a.Promote("package artifact // regenerated", "regenerate:corrupt", "m", "pv", time.Now())
		return nil
	})
	require.NoError(t, err)
	pending, err = f.Quarantined()
	require.NoError(t, err)
	require.Len(t, pending, 1)
	var entry quarantineEntry
	kv, err := f.st.Data.Get(ctx, quarantinePrefix+pending[0].ID)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(kv.Value(), &entry))
	assert.Equal(t, `{"schema_version":1,"role":"r"`, string(entry.Data))

	// A record stored under another artifact's key is damage too.
	e, err = f.st.Data.Get(ctx, akey("edited"))
	require.NoError(t, err)
	put(akey("moved"), e.Value())
	_, err = other.Load("r", "moved")
	require.ErrorIs(t, err, registry.ErrCorrupt)
	assert.Contains(t, err.Error(), "names r.edited")
	_, err = f.Update("r", "moved", func(a *registry.Artifact, exists bool) error {
		assert.False(t, exists)
		a.Promote("package artifact // moved", "initial_forge", "m", "pv", time.Now())
		return nil
	})
	require.NoError(t, err)
	pending, err = f.Quarantined()
	require.NoError(t, err)
	assert.Len(t, pending, 2)
}

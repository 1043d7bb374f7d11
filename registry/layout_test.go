package registry

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// copyTree copies a directory (the checked-in store) into a temp dir.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	require.NoError(t, filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	}))
	return dst
}

// v1Contents decodes every role and artifact file of a layout-1 store directly, without a Store.
func v1Contents(t *testing.T, root string) (map[string]*RoleRecord, map[Key]*Artifact) {
	t.Helper()
	roles := map[string]*RoleRecord{}
	files, err := filepath.Glob(filepath.Join(root, "roles", "*.json"))
	require.NoError(t, err)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		rec, err := decodeRole(data, name)
		require.NoError(t, err)
		roles[name] = rec
	}
	arts := map[Key]*Artifact{}
	files, err = filepath.Glob(filepath.Join(root, "tools", "*", "*.json"))
	require.NoError(t, err)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		a, err := DecodeArtifact(data)
		require.NoError(t, err)
		arts[Key{a.Role, a.Method}] = a
	}
	return roles, arts
}

func TestV1StoreMigratesLosslessly(t *testing.T) {
	root := copyTree(t, filepath.Join("testdata", "v1store"))
	wantRoles, wantArts := v1Contents(t, root)
	require.Len(t, wantRoles, 3)
	require.Len(t, wantArts, 5)
	require.Len(t, wantArts[Key{"text", "upper"}].History, MaxHistory, "the testdata has a full history")
	knowledge, err := os.ReadFile(filepath.Join(root, "knowledge", "math.yaml"))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, storeFile))
	require.ErrorIs(t, err, fs.ErrNotExist, "layout 1 has no store.json")

	check := func(s *Store) {
		t.Helper()
		for name, want := range wantRoles {
			got, err := s.Role(name)
			require.NoError(t, err)
			assert.Equal(t, want, got, "role %s", name)
		}
		roles, err := s.Roles()
		require.NoError(t, err)
		assert.Len(t, roles, len(wantRoles))
		for k, want := range wantArts {
			got, err := s.Load(k.Role, k.Method)
			require.NoError(t, err)
			assert.Equal(t, want, got, "artifact %s: code, history, counters and times are kept", k)
		}
		sums, err := s.Summaries()
		require.NoError(t, err)
		require.Len(t, sums, len(wantArts))
		for _, sm := range sums {
			want := wantArts[sm.Key()]
			require.NotNil(t, want, sm.Key())
			assert.Equal(t, want.Counters, sm.Counters, "%s", sm.Key())
			assert.Equal(t, want.Lifecycle, sm.Lifecycle)
			assert.Equal(t, want.Generation, sm.Generation)
			assert.Equal(t, want.ContractFingerprint, sm.ContractFingerprint)
			assert.Equal(t, want.Signature.Decl, sm.Decl)
			assert.True(t, want.CreatedAt.Equal(sm.CreatedAt))
		}
		q, err := s.Quarantined()
		require.NoError(t, err)
		require.Len(t, q, 1, "the quarantine entry stays pending")
		assert.Equal(t, "artifact", q[0].Kind)
		assert.Equal(t, "shout", q[0].Method)
		assert.Contains(t, q[0].Reason, "code does not match code_checksum")
		got, err := os.ReadFile(filepath.Join(root, "knowledge", "math.yaml"))
		require.NoError(t, err)
		assert.Equal(t, knowledge, got, "knowledge/ is not touched")
	}

	s, err := Open(root)
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(root, storeFile))
	require.NoError(t, err)
	assert.JSONEq(t, `{"layout":2}`, string(data))
	for _, r := range []string{"text", "math"} {
		_, err := os.Stat(filepath.Join(root, indexDir, r+".json"))
		assert.NoError(t, err, "the migration builds the index of role %s", r)
	}
	check(s)

	// A migration that crashed before writing store.json (and left a torn index) runs again.
	require.NoError(t, os.Remove(filepath.Join(root, storeFile)))
	require.NoError(t, os.WriteFile(filepath.Join(root, indexDir, "text.json"), []byte(`{"layout":2,"ro`), 0o644))
	s, err = Open(root)
	require.NoError(t, err)
	check(s)

	// Counters recorded on the new layout add to the migrated ones exactly once, through the
	// journal and after compaction.
	rec := NewRecorder(s, time.Hour)
	rec.Record("text", "upper", Success, time.Millisecond, "")
	rec.Record("math", "div", CallerFailure, time.Millisecond, "division by zero")
	rec.Close()
	up := wantArts[Key{"text", "upper"}].SuccessCount
	for round := 0; round < 2; round++ {
		s2, err := Open(root)
		require.NoError(t, err)
		a, err := s2.Load("text", "upper")
		require.NoError(t, err)
		assert.Equal(t, up+1, a.SuccessCount)
		d, err := s2.Load("math", "div")
		require.NoError(t, err)
		assert.Equal(t, wantArts[Key{"math", "div"}].CallerFailureCount+1, d.CallerFailureCount)
		r, err := s2.Role("text")
		require.NoError(t, err)
		assert.Equal(t, wantRoles["text"].UsageCount+1, r.UsageCount)
		_, err = s2.Compact()
		require.NoError(t, err)
	}
	st, err := s.Journals()
	require.NoError(t, err)
	assert.Zero(t, st.Journals, "compaction removed the journal")
}

func TestNewerLayoutIsRefused(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, storeFile), []byte(`{"layout":3}`), 0o644))
	_, err := Open(root)
	require.ErrorIs(t, err, ErrNewerLayout)
	assert.ErrorContains(t, err, "open it with the forge that wrote it")
}

package registry

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// outsideFiles lists what is under dir (the target of a planted link): it must stay empty.
func outsideFiles(t *testing.T, dir string) []string {
	t.Helper()
	var found []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && path != dir {
			found = append(found, path)
		}
		return nil
	})
	return found
}

// plant replaces the store directory rel (made by Open) with a link to a new directory outside
// the store, and returns that directory.
func plant(t *testing.T, root, rel string) (link, outside string) {
	t.Helper()
	outside = t.TempDir()
	link = filepath.Join(root, filepath.FromSlash(rel))
	require.NoError(t, os.MkdirAll(filepath.Dir(link), 0o755))
	require.NoError(t, os.RemoveAll(link))
	require.NoError(t, os.Symlink(outside, link))
	return link, outside
}

// TestSymlinkedToolsRoleIsRefused: a linked tools/<role> does not make the store write artifacts
// or locks elsewhere: the write fails naming the link.
func TestSymlinkedToolsRoleIsRefused(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	link, outside := plant(t, s.Root(), "tools/calc")
	_, err = s.Update("calc", "add", func(a *Artifact, exists bool) error {
		a.Promote("package artifact\nfunc Add(a, b int) int { return a + b }", "initial_forge", "m", "pv", t0)
		return nil
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), link)
	assert.Contains(t, err.Error(), "symbolic link")
	assert.Empty(t, outsideFiles(t, outside))
	ran := false
	err = s.WithGenerationLock("calc", "add", func() error { ran = true; return nil })
	require.Error(t, err, "the generation lock")
	assert.False(t, ran)
	assert.Empty(t, outsideFiles(t, outside))
}

// TestSymlinkedLockFileIsRefused: a lock file planted as a link is not opened (flock would create
// or open its target).
func TestSymlinkedLockFileIsRefused(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	newArtifact(t, s, "calc", "add", "package artifact\nfunc Add(a, b int) int { return a + b }")
	target := filepath.Join(t.TempDir(), "victim")
	lock := filepath.Join(s.Root(), "tools", "calc", "add.lock")
	require.NoError(t, os.Remove(lock))
	require.NoError(t, os.Symlink(target, lock))
	_, err = s.Update("calc", "add", func(a *Artifact, exists bool) error { a.Lifecycle = Blessed; return nil })
	require.Error(t, err)
	assert.Contains(t, err.Error(), lock)
	assert.NoFileExists(t, target, "the lock's link target was created")
}

// TestSymlinkedStoreDirsAreRefused: a linked roles/, quarantine/ or tools/ is refused when the
// store is opened; nothing is created through it.
func TestSymlinkedStoreDirsAreRefused(t *testing.T) {
	for _, rel := range []string{"roles", "quarantine", "tools"} {
		t.Run(rel, func(t *testing.T) {
			root := t.TempDir()
			link, outside := plant(t, root, rel)
			_, err := Open(root)
			require.Error(t, err)
			assert.Contains(t, err.Error(), link)
			assert.Empty(t, outsideFiles(t, outside))
		})
	}
}

// TestSymlinkedRolesAfterOpen: roles/ replaced by a link while a store is open: PutRole fails
// naming it and writes nothing outside.
func TestSymlinkedRolesAfterOpen(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	link, outside := plant(t, s.Root(), "roles")
	_, err = s.PutRole(Contract{Role: "text", Purpose: "string tools"}, t0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), link)
	assert.Empty(t, outsideFiles(t, outside))
}

// TestSymlinkedIndexAndMetricsAreNotWritten: linked index/ and metrics/ receive nothing: the
// summary index is not written through the link, a journal is not created through it, and
// Compact refuses it.
func TestSymlinkedIndexAndMetricsAreNotWritten(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	_, idxOut := plant(t, s.Root(), indexDir)
	mlink, mOut := plant(t, s.Root(), metricsDir)
	newArtifact(t, s, "calc", "add", "package artifact\nfunc Add(a, b int) int { return a + b }")
	_, _ = s.Summaries()
	_, _ = s.RebuildIndex()
	rec := NewRecorder(s, time.Hour)
	rec.Record("calc", "add", Success, time.Millisecond, "")
	rep := rec.Flush()
	rec.Close()
	_, err = s.Compact()
	require.Error(t, err)
	assert.Contains(t, err.Error(), mlink)
	assert.Empty(t, outsideFiles(t, idxOut), "index written through a link")
	assert.Empty(t, outsideFiles(t, mOut), "journal written through a link")
	_ = rep
}

// TestQuarantineThroughSymlinkIsRefused: a damaged artifact is not moved into a linked
// quarantine/ (it stays where it is, the report says why), and a linked quarantine/resolved/
// does not receive a dismissed entry.
func TestQuarantineThroughSymlinkIsRefused(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	newArtifact(t, s, "calc", "add", "package artifact\nfunc Add(a, b int) int { return a + b }")
	path := s.ArtifactPath("calc", "add")
	require.NoError(t, os.WriteFile(path, []byte("{not json"), 0o644))
	qlink, qOut := plant(t, s.Root(), quarantineDir)
	var reps []QuarantineReport
	s.OnQuarantine = func(r QuarantineReport) { reps = append(reps, r) }
	s2, err := OpenWith(s.Root(), OpenOptions{})
	require.Error(t, err, "the linked quarantine/ is refused at open")
	assert.Nil(t, s2)
	_, _ = s.Load("calc", "add")
	assert.Empty(t, outsideFiles(t, qOut), "quarantined through a link")
	assert.FileExists(t, path, "the damaged file stays in place")
	require.NotEmpty(t, reps)
	assert.Contains(t, reps[0].Reason, qlink)

	// resolved/: a real quarantine/ with an entry, resolved/ a link.
	require.NoError(t, os.Remove(qlink))
	require.NoError(t, os.Mkdir(qlink, 0o755))
	reps = nil
	_, _ = s.Load("calc", "add")
	require.NotEmpty(t, reps)
	require.NotEmpty(t, reps[0].ID)
	rlink, rOut := plant(t, s.Root(), quarantineDir+"/"+resolvedDir)
	_, err = s.Dismiss(reps[0].ID)
	require.Error(t, err)
	assert.Contains(t, err.Error(), rlink)
	assert.Empty(t, outsideFiles(t, rOut))
}

// TestRestoreOfSymlinkedEntryIsRefused: a quarantine entry replaced by a link to a file outside
// the store is not restored from it.
func TestRestoreOfSymlinkedEntryIsRefused(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	good := newArtifact(t, s, "calc", "add", "package artifact\nfunc Add(a, b int) int { return a + b }")
	_ = good
	path := s.ArtifactPath("calc", "add")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte("{not json"), 0o644))
	var reps []QuarantineReport
	s.OnQuarantine = func(r QuarantineReport) { reps = append(reps, r) }
	_, _ = s.Load("calc", "add")
	require.NotEmpty(t, reps)
	outside := filepath.Join(t.TempDir(), "planted.json")
	require.NoError(t, os.WriteFile(outside, data, 0o644))
	require.NoError(t, os.Remove(reps[0].MovedTo))
	require.NoError(t, os.Symlink(outside, reps[0].MovedTo))
	_, err = s.Restore(reps[0].ID, t0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), reps[0].MovedTo)
	assert.NoFileExists(t, path, "restored from outside the store")
}

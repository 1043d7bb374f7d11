package registry

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDamagedRoleFileIsRestoredFromItsLastGoodCopy: one damaged role file loses nothing — the role
// is quarantined and restored from its last-good copy on the very read that found it, doctor
// reports it (exit 1 in the CLI) until an operator deals with it, and restore makes it clean.
func TestDamagedRoleFileIsRestoredFromItsLastGoodCopy(t *testing.T) {
	for name, damage := range map[string]func(p string){
		"truncated": func(p string) {
			b, _ := os.ReadFile(p)
			require.NoError(t, os.WriteFile(p, b[:len(b)/2], 0o644))
		},
		"garbage":        func(p string) { require.NoError(t, os.WriteFile(p, []byte("\x00\x01garbage"), 0o644)) },
		"emptied":        func(p string) { require.NoError(t, os.WriteFile(p, nil, 0o644)) },
		"over the bound": overBound,
		"not a file":     notAFile(t),
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			s, err := Open(root)
			require.NoError(t, err)
			for _, r := range []string{"alpha", "beta"} {
				_, err = s.PutRole(Contract{Role: r, Purpose: "purpose of " + r, Methods: map[string]string{"m": "func M(s string) string"}}, t0)
				require.NoError(t, err)
			}
			want, err := s.Role("alpha")
			require.NoError(t, err)
			damage(s.RolePath("alpha"))

			var reports []QuarantineReport
			s2, err := OpenWith(root, OpenOptions{OnQuarantine: func(q QuarantineReport) { reports = append(reports, q) }})
			require.NoError(t, err)
			roles, err := s2.Roles()
			require.NoError(t, err)
			require.Len(t, roles, 2, "no role is lost to one damaged file")
			assert.Equal(t, want.Fingerprint, roles[0].Fingerprint)
			assert.Equal(t, want.Purpose, roles[0].Purpose)
			require.Len(t, reports, 1)
			assert.Equal(t, "role", reports[0].Kind)
			assert.Contains(t, reports[0].Restored, "last-good copy")

			rep, err := s2.Doctor()
			require.NoError(t, err)
			assert.True(t, rep.Damaged(), "doctor reports the quarantine made by an earlier command")
			require.Len(t, rep.Pending, 1)
			assert.Contains(t, rep.Pending[0].Restored, "restored from its last-good copy")

			rr, err := s2.Restore(rep.Pending[0].ID, t0)
			require.NoError(t, err)
			assert.Equal(t, "kept", rr.Action, "the damaged bytes cannot be used; the restored role stays")
			rep, err = s2.Doctor()
			require.NoError(t, err)
			assert.False(t, rep.Damaged())
			assert.FileExists(t, filepath.Join(root, "quarantine", "resolved", rr.Entry.ID), "nothing is deleted")
		})
	}
}

// TestHandEditedContractCanBeTakenOver: a contract edited by hand no longer matches its
// fingerprint; it is quarantined (the last-good contract stays in force) and restore takes the
// edit over with a new fingerprint, reporting the previous record.
func TestHandEditedContractCanBeTakenOver(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	old, err := s.PutRole(Contract{Role: "r", Purpose: "before"}, t0)
	require.NoError(t, err)
	p := s.RolePath("r")
	b, _ := os.ReadFile(p)
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), `"purpose": "before"`, `"purpose": "after"`, 1)), 0o644))

	r, err := s.loadRole("r")
	require.NoError(t, err)
	assert.Equal(t, "before", r.Purpose, "the last-good contract is in force")
	q, err := s.Quarantined()
	require.NoError(t, err)
	require.Len(t, q, 1)
	assert.Contains(t, q[0].Reason, "contract_fingerprint")

	rr, err := s.Restore(q[0].ID, t0)
	require.NoError(t, err)
	assert.Equal(t, "accepted", rr.Action)
	require.NotNil(t, rr.Previous)
	assert.Equal(t, old.Fingerprint, rr.Previous.Fingerprint)
	r, err = s.Role("r")
	require.NoError(t, err)
	assert.Equal(t, "after", r.Purpose)
	assert.NotEqual(t, old.Fingerprint, r.Fingerprint)
	q, _ = s.Quarantined()
	assert.Empty(t, q)
}

// TestRoleWithoutUsableCopyIsReportedNotLost: with the last-good copy damaged too, the role cannot
// come back by itself; it is still reported, and restore refuses with what to do.
func TestRoleWithoutUsableCopyIsReportedNotLost(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	_, err = s.PutRole(Contract{Role: "r", Purpose: "p"}, t0)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(s.RolePath("r"), []byte("{"), 0o644))
	require.NoError(t, os.WriteFile(s.roleGoodPath("r"), []byte("{"), 0o644))
	s, err = Open(s.Root()) // another process
	require.NoError(t, err)
	_, err = s.Role("r")
	require.ErrorIs(t, err, ErrCorrupt)
	rep, err := s.Doctor()
	require.NoError(t, err)
	require.True(t, rep.Damaged())
	require.Len(t, rep.Pending, 1)
	assert.Contains(t, rep.Pending[0].Reason, "no usable last-good copy")
	_, err = s.Restore(rep.Pending[0].ID, t0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "forge quarantine dismiss")
}

// TestLegacyRegistryIsMigratedLosslessly: a store written by an older forge (registry.json) is
// migrated on open into one file per role, every field kept, and registry.json is kept aside.
func TestLegacyRegistryIsMigratedLosslessly(t *testing.T) {
	root := t.TempDir()
	used := t0.Add(1000)
	c := Contract{Role: "text", Purpose: "string tools", Methods: map[string]string{"upper": "func Upper(s string) string"},
		Deliverable: json.RawMessage(`{"type": "string"}`)}
	legacy := registryFile{SchemaVersion: SchemaVersion, Roles: map[string]*RoleRecord{
		"text": {Contract: c, Fingerprint: c.Fingerprint(), CreatedAt: t0, UpdatedAt: t0, LastUsedAt: &used, UsageCount: 42},
		"math": {Contract: Contract{Role: "math", Purpose: "numbers"}, Fingerprint: (&Contract{Role: "math", Purpose: "numbers"}).Fingerprint(), CreatedAt: t0, UpdatedAt: t0},
	}}
	b, err := json.MarshalIndent(legacy, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "registry.json"), b, 0o644))

	s, err := Open(root)
	require.NoError(t, err)
	roles, err := s.Roles()
	require.NoError(t, err)
	require.Len(t, roles, 2)
	got := roles[1]
	assert.Equal(t, "text", got.Role)
	assert.Equal(t, c.Fingerprint(), got.Fingerprint, "artifacts verified against it stay current")
	assert.Equal(t, int64(42), got.UsageCount)
	assert.True(t, got.LastUsedAt.Equal(used))
	assert.True(t, got.CreatedAt.Equal(t0))
	assert.NoFileExists(t, filepath.Join(root, "registry.json"))
	assert.FileExists(t, filepath.Join(root, "registry.json.migrated"))
	assert.FileExists(t, s.roleGoodPath("text"))
	rep, err := s.Doctor()
	require.NoError(t, err)
	assert.False(t, rep.Damaged())
}

// TestHandEditedArtifactIsListedAndRestorable: a hand-edited artifact is quarantined with its
// reason, listed, and restore takes the edited code over as a new candidate generation, keeping
// the lineage (so rollback returns to the generated code).
func TestHandEditedArtifactIsListedAndRestorable(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	newArtifact(t, s, "r", "m", "package artifact\n// one")
	p := s.ArtifactPath("r", "m")
	b, _ := os.ReadFile(p)
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), "// one", "// hand edit", 1)), 0o644))

	_, err = s.Load("r", "m")
	require.ErrorIs(t, err, ErrCorrupt)
	q, err := s.Quarantined()
	require.NoError(t, err)
	require.Len(t, q, 1)
	assert.Equal(t, "artifact", q[0].Kind)
	assert.Equal(t, "r", q[0].Role)
	assert.Equal(t, "m", q[0].Method)
	assert.Contains(t, q[0].Reason, "code does not match code_checksum")

	rr, err := s.Restore(q[0].ID, t0)
	require.NoError(t, err)
	assert.Equal(t, "accepted", rr.Action)
	a, err := s.Load("r", "m")
	require.NoError(t, err)
	assert.Equal(t, 2, a.Generation)
	assert.Contains(t, a.Code, "// hand edit")
	assert.Equal(t, Candidate, a.Lifecycle)
	assert.Equal(t, "operator:restore", a.History[0].Trigger)
	require.NoError(t, a.Rollback(1, t0))
	assert.Contains(t, a.Code, "// one")
	rep, err := s.Doctor()
	require.NoError(t, err)
	assert.False(t, rep.Damaged())

	_, err = s.Restore(q[0].ID, t0)
	assert.ErrorIs(t, err, ErrNoQuarantine, "an entry is restored once")
}

// TestUnparseableArtifactRestoreRefusesWithAdvice: bytes that are not an artifact cannot be put
// back; restore says what to do, and dismiss clears the report.
func TestUnparseableArtifactRestoreRefusesWithAdvice(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	newArtifact(t, s, "r", "m", "package artifact")
	require.NoError(t, os.WriteFile(s.ArtifactPath("r", "m"), []byte("{broken"), 0o644))
	_, err = s.Load("r", "m")
	require.ErrorIs(t, err, ErrCorrupt)
	q, _ := s.Quarantined()
	require.Len(t, q, 1)
	_, err = s.Restore(q[0].ID, t0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "forge regen r m")
	_, err = s.Dismiss(q[0].ID)
	require.NoError(t, err)
	q, _ = s.Quarantined()
	assert.Empty(t, q)
}

func TestQuarantineIDsCannotEscape(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	for _, id := range []string{"", ".", "..", "../roles/x.json", "resolved", "x" + whySuffix} {
		_, err := s.Restore(id, t0)
		assert.ErrorIs(t, err, ErrNoQuarantine, id)
		_, err = s.Dismiss(id)
		assert.ErrorIs(t, err, ErrNoQuarantine, id)
	}
}

func TestWriteErrAdvice(t *testing.T) {
	perm := &os.PathError{Op: "open", Path: "x", Err: syscall.EACCES}
	assert.Contains(t, writeErr("/s", perm).Error(), "read-only for this process")
	assert.ErrorIs(t, writeErr("/s", perm), os.ErrPermission)
	rofs := &os.PathError{Op: "open", Path: "x", Err: syscall.EROFS}
	assert.Contains(t, writeErr("/s", rofs).Error(), "read-only for this process")
	other := errors.New("disk on fire")
	assert.Equal(t, other, writeErr("/s", other))
}

// TestRemovedRoleFileComesBackFromItsCopy: a role file removed by hand (or left missing by a
// process that could not restore it) is put back from its last-good copy by the next read.
func TestRemovedRoleFileComesBackFromItsCopy(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	want, err := s.PutRole(Contract{Role: "r", Purpose: "p"}, t0)
	require.NoError(t, err)
	require.NoError(t, os.Remove(s.RolePath("r")))
	s, err = Open(s.Root())
	require.NoError(t, err)
	r, err := s.Role("r")
	require.NoError(t, err)
	assert.Equal(t, want.Fingerprint, r.Fingerprint)
	assert.FileExists(t, s.RolePath("r"))

	require.NoError(t, os.Remove(s.RolePath("r")))
	require.NoError(t, os.WriteFile(s.roleGoodPath("r"), []byte("{"), 0o644))
	s, err = Open(s.Root())
	require.NoError(t, err)
	_, err = s.Role("r")
	require.ErrorIs(t, err, ErrCorrupt)
	rep, err := s.Doctor()
	require.NoError(t, err)
	assert.True(t, rep.Damaged(), "a role that cannot come back is reported")
}

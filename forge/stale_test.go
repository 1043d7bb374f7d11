package forge

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
)

func TestStaleWhy(t *testing.T) {
	rec := &registry.RoleRecord{Contract: registry.Contract{Role: "text"}, Fingerprint: "sha256:new"}
	ok := registry.Summary{Role: "text", Method: "upper", Generation: 2, ContractFingerprint: "sha256:new", RuntimeVersion: registry.RuntimeVersion}
	with := func(f func(*registry.Summary)) registry.Summary { s := ok; f(&s); return s }
	for _, c := range []struct {
		name    string
		l       Listed
		current bool
		why     string // "" when not stale
	}{
		{"current", Listed{Summary: ok, Contract: rec}, true, ""},
		{"contract changed", Listed{Summary: with(func(s *registry.Summary) { s.ContractFingerprint = "sha256:old" }), Contract: rec}, false, "generation 2 was verified against contract sha256:old"},
		{"no role", Listed{Summary: ok, Contract: nil}, false, "its role is not in the registry"},
		{"another runtime", Listed{Summary: with(func(s *registry.Summary) { s.RuntimeVersion = "9.0.0" }), Contract: rec}, true, "runtime 9.0.0"},
		{"unreadable", Listed{Summary: with(func(s *registry.Summary) { s.Err = errors.New("damaged") }), Contract: nil}, false, "damaged"},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.current, c.l.ContractCurrent())
			why := staleWhy(&c.l)
			if c.why == "" {
				assert.Empty(t, why)
			} else {
				assert.Contains(t, why, c.why)
			}
		})
	}
}

// countingRoles counts the role records a listing reads.
type countingRoles struct {
	registry.Backend
	reads int
}

func (c *countingRoles) Role(name string) (*registry.RoleRecord, error) {
	c.reads++
	return c.Backend.Role(name)
}

// TestListReadsEachRoleOnce lists a store of two roles and five artifacts: two role reads, and
// each artifact paired with its role's contract as it is now.
func TestListReadsEachRoleOnce(t *testing.T) {
	s, err := registry.Open(t.TempDir())
	require.NoError(t, err)
	defer s.Close()
	now := time.Now()
	fp := map[string]string{}
	for _, role := range []string{"a", "b"} {
		rec, err := s.PutRole(registry.Contract{Role: role, Purpose: "tools"}, now)
		require.NoError(t, err)
		fp[role] = rec.Fingerprint
	}
	for i, k := range []registry.Key{{Role: "a", Method: "m1"}, {Role: "a", Method: "m2"}, {Role: "a", Method: "m3"}, {Role: "b", Method: "m1"}, {Role: "b", Method: "m2"}} {
		_, err := s.Update(k.Role, k.Method, func(a *registry.Artifact, _ bool) error {
			a.Promote("package artifact\n", "initial_forge", "m", "pv", now)
			if a.ContractFingerprint = fp[k.Role]; i == 4 {
				a.ContractFingerprint = "sha256:older"
			}
			return nil
		})
		require.NoError(t, err)
	}
	c := &countingRoles{Backend: s}
	ls, err := List(c)
	require.NoError(t, err)
	assert.Equal(t, 2, c.reads, "one read per role")
	require.Len(t, ls, 5)
	for i, l := range ls {
		require.NotNil(t, l.Contract, l.Key())
		assert.Equal(t, l.Role, l.Contract.Role)
		assert.Equal(t, i != 4, l.ContractCurrent(), l.Key())
	}
	rows, err := StaleByContract(s, "b")
	require.NoError(t, err)
	require.Len(t, rows, 1)
	assert.Equal(t, "m2", rows[0].Method)
	rows, err = StaleByContract(s, "a")
	require.NoError(t, err)
	assert.Empty(t, rows)
}

// Leftover 3d: an artifact whose file the store quarantined is listed by every listing that
// follows (forge ls, /v1/artifacts), with its quarantine entry, not only by the listing that
// found it damaged; the one beside a healthy file of the same method is not.
func TestListKeepsQuarantinedArtifacts(t *testing.T) {
	dir := t.TempDir()
	s, err := registry.Open(dir)
	require.NoError(t, err)
	defer s.Close()
	now := time.Now()
	_, err = s.PutRole(registry.Contract{Role: "a", Purpose: "tools"}, now)
	require.NoError(t, err)
	for _, m := range []string{"m1", "m2"} {
		_, err := s.Update("a", m, func(a *registry.Artifact, _ bool) error {
			a.Promote("package artifact\n", "initial_forge", "m", "pv", now)
			return nil
		})
		require.NoError(t, err)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tools", "a", "m2.json"), []byte(`{"role": "a", "meth`), 0o644))
	for _, pass := range []string{"the listing that finds it damaged", "a later listing"} {
		ls, err := List(s)
		require.NoError(t, err)
		require.Len(t, ls, 2, pass)
		assert.Equal(t, "m1", ls[0].Method, pass)
		assert.Nil(t, ls[0].Quarantine, pass)
		l := ls[1]
		assert.Equal(t, "m2", l.Method, pass)
		require.NotNil(t, l.Quarantine, pass)
		assert.NotEmpty(t, l.Quarantine.ID, pass)
		var qe *registry.QuarantinedError
		require.ErrorAs(t, l.Err, &qe, pass)
		assert.Contains(t, l.Err.Error(), "quarantine", pass)
	}
}

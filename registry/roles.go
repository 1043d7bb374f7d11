package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/artifactforge/forge/internal/storepath"
)

// Roles are stored one file per role, roles/<role>.json, each written with its last-good copy
// roles/<role>.json.good (the same bytes, written right after it under the role's lock). A write
// touches one role only (O(1) in the number of roles), and one damaged file loses nothing: it is
// quarantined and the role is restored from its last-good copy automatically. A store written by
// an older forge (one registry.json for every role) is migrated on open, under registry.lock.

const (
	rolesDir       = "roles"
	goodSuffix     = ".good"
	legacyRegistry = "registry.json"
)

// roleFile is the on-disk form of one role.
type roleFile struct {
	SchemaVersion int `json:"schema_version"`
	RoleRecord
}

// roleSnap is a cached role with the stamp of the file it was read from.
type roleSnap struct {
	rec     *RoleRecord // the file merged with the journals' usage
	base    *RoleRecord // the file
	stamp   fileStamp
	checked atomic.Int64
}

func (s *Store) rolesPath() string           { return filepath.Join(s.root, rolesDir) }
func (s *Store) rolePath(name string) string { return filepath.Join(s.root, rolesDir, name+".json") }
func (s *Store) roleGoodPath(name string) string {
	return filepath.Join(s.root, rolesDir, name+".json"+goodSuffix)
}
func (s *Store) roleLock(name string) string { return filepath.Join(s.root, rolesDir, name+".lock") }

// RolePath is where a role's contract is stored.
func (s *Store) RolePath(name string) string { return s.rolePath(name) }

// decodeRole parses a stored role and verifies it: it parses, has this schema version, names the
// role it is stored as, its contract is valid and matches contract_fingerprint (a contract edited
// by hand, not through `forge role add`, is damage: its artifacts were verified against another).
func decodeRole(data []byte, name string) (*RoleRecord, error) {
	var rf roleFile
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&rf); err != nil {
		return nil, fmt.Errorf("%w: does not parse: %v", ErrCorrupt, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data after the role object", ErrCorrupt)
	}
	if rf.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("%w: schema_version %d, this forge reads %d", ErrIncompatible, rf.SchemaVersion, SchemaVersion)
	}
	if rf.Role != name {
		return nil, fmt.Errorf("%w: the file of role %q names role %q", ErrCorrupt, name, rf.Role)
	}
	if err := rf.Contract.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if fp := rf.Contract.Fingerprint(); fp != rf.Fingerprint {
		return nil, fmt.Errorf("%w: the contract does not match its contract_fingerprint (edited by hand? change a contract with `forge role add -f contract.json`)", errFingerprint)
	}
	rec := rf.RoleRecord
	return &rec, nil
}

// errFingerprint is a role file whose contract is valid but was changed without a new fingerprint.
var errFingerprint = fmt.Errorf("%w: contract fingerprint mismatch", ErrCorrupt)

func encodeRole(rec *RoleRecord) ([]byte, error) {
	b, err := json.MarshalIndent(roleFile{SchemaVersion: SchemaVersion, RoleRecord: *rec}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func (s *Store) readRole(name string) (*RoleRecord, error) {
	data, err := readStoreFile(s.rolePath(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("registry: role %q: %w; add it with `forge role add -f contract.json` (or --role %s --purpose ...)", name, ErrNotFound, name)
	}
	if err != nil {
		return nil, fmt.Errorf("registry: read %s: %w", s.rolePath(name), err)
	}
	rec, err := decodeRole(data, name)
	if err != nil {
		return nil, fmt.Errorf("registry: role %s (%s): %w", name, s.rolePath(name), err)
	}
	return rec, nil
}

// repairRoleLocked handles a damaged role file; the caller holds the role's lock and has just
// read it as corrupt (err). The file is quarantined and, if the last-good copy is intact, put back
// in its place. It returns the restored record, or nil if nothing could be restored.
func (s *Store) repairRoleLocked(name string, damage error) (*RoleRecord, QuarantineReport) {
	good, gerr := readStoreFile(s.roleGoodPath(name))
	var rec *RoleRecord
	restored := ""
	if gerr == nil {
		if rec, gerr = decodeRole(good, name); gerr == nil {
			restored = fmt.Sprintf("role %s restored from its last-good copy %s", name, s.roleGoodPath(name))
		}
	}
	rep := s.quarantine(s.rolePath(name), damage, restored, func(rep *QuarantineReport) {
		if restored != "" {
			if err := s.writeFile(s.rolePath(name), good); err != nil {
				rep.Restored = ""
				rep.Reason += fmt.Sprintf(" (restoring the last-good copy failed: %v)", err)
				rec = nil
			}
		} else {
			why := "it has none"
			if gerr != nil && !errors.Is(gerr, fs.ErrNotExist) {
				why = gerr.Error()
			}
			rep.Reason += fmt.Sprintf(" (no usable last-good copy: %s; re-add the role with `forge role add`, or fix the file and `forge quarantine restore`)", why)
		}
	})
	return rec, rep
}

// loadRole reads a role fresh from disk and caches it; a damaged file is quarantined and the role
// restored from its last-good copy.
func (s *Store) loadRole(name string) (*RoleRecord, error) {
	// The journals first, as Load does: a process that has not read them yet (it just opened the
	// store) would otherwise show the file's usage without the calls flushed since the last fold.
	if _, err := s.refreshOverlay(); err != nil {
		return nil, err
	}
	st, _ := stampOf(s.rolePath(name))
	rec, err := s.readRole(name)
	if errors.Is(err, ErrNotFound) {
		if _, gerr := os.Stat(s.roleGoodPath(name)); gerr == nil {
			// Only the last-good copy is left: the file was removed by hand, or quarantined by a
			// process that could not put the copy back. Restore it.
			return s.restoreMissingRole(name)
		}
	}
	if errors.Is(err, ErrCorrupt) {
		err = s.withLock(s.roleLock(name), func() error {
			var lerr error
			rec, lerr = s.readRole(name) // under the lock: a writer may have just replaced it
			if errors.Is(lerr, ErrCorrupt) {
				var rep QuarantineReport
				if rec, rep = s.repairRoleLocked(name, lerr); rec == nil {
					return &QuarantinedError{Report: rep, Err: lerr}
				}
				return nil
			}
			return lerr
		})
		st, _ = stampOf(s.rolePath(name))
	}
	if err != nil {
		s.mu.Lock()
		delete(s.roles, name)
		s.mu.Unlock()
		return nil, err
	}
	return s.installRole(name, rec, st), nil
}

// installRole caches a role read from its file, with the journals' usage merged in.
func (s *Store) installRole(name string, rec *RoleRecord, st fileStamp) *RoleRecord {
	s.om.Lock()
	defer s.om.Unlock()
	sn := &roleSnap{rec: mergeRole(rec, s.ov.byRole[name]), base: rec, stamp: st}
	sn.checked.Store(time.Now().UnixNano())
	s.mu.Lock()
	s.roles[name] = sn
	s.mu.Unlock()
	return sn.rec
}

// updateRole is the locked read-modify-write of one role: fn gets the current record (nil if there
// is none, or if it was damaged and could not be restored) and returns the one to store.
func (s *Store) updateRole(name string, fn func(cur *RoleRecord) (*RoleRecord, error)) (*RoleRecord, error) {
	if err := ValidateName("role", name); err != nil {
		return nil, err
	}
	if err := s.mkdirAll(s.rolesPath(), 0o755); err != nil {
		return nil, writeErr(s.root, err)
	}
	var out *RoleRecord
	err := s.withLock(s.roleLock(name), func() error {
		cur, err := s.readRole(name)
		switch {
		case errors.Is(err, ErrNotFound):
			cur, err = nil, nil
		case errors.Is(err, ErrCorrupt):
			cur, _ = s.repairRoleLocked(name, err)
			err = nil
		}
		if err != nil {
			return err
		}
		next, err := fn(cur)
		if err != nil || next == nil {
			return err
		}
		data, err := encodeRole(next)
		if err != nil {
			return err
		}
		if err := s.writeFile(s.rolePath(name), data); err != nil {
			return fmt.Errorf("registry: write %s: %w", s.rolePath(name), writeErr(s.root, err))
		}
		if err := s.writeFile(s.roleGoodPath(name), data); err != nil {
			return fmt.Errorf("registry: write %s: %w", s.roleGoodPath(name), writeErr(s.root, err))
		}
		st, _ := stampOf(s.rolePath(name))
		out = s.installRole(name, next, st)
		return nil
	})
	return out, err
}

// updateRoleFold folds journal records (a compaction's, with what the overlay holds) into a
// role's usage count and stamps it, under the role's lock.
func (s *Store) updateRoleFold(name string, extra []ovRec) (*RoleRecord, error) {
	return s.updateRole(name, func(cur *RoleRecord) (*RoleRecord, error) {
		if cur == nil {
			return nil, nil
		}
		present, err := s.refreshOverlay() // under the role's lock: see Compact
		if err != nil {
			return nil, err
		}
		s.om.Lock()
		recs := unionRecs(s.ov.byRole[name], extra)
		s.om.Unlock()
		p := pendingFor(recs, cur.MetricsApplied)
		r := *mergeRole(cur, p)
		r.MetricsApplied = foldStamps(cur.MetricsApplied, p, present)
		return &r, nil
	})
}

// PutRole validates c and adds it to the registry, or replaces the contract of an existing role
// (keeping its creation and usage times). It returns the stored record.
func (s *Store) PutRole(c Contract, now time.Time) (RoleRecord, error) {
	rec, _, err := s.PutRoleReport(c, now)
	return rec, err
}

// PutRoleReport is PutRole that also returns the role's previous record (nil for a new role), so
// that a caller can tell which artifacts a changed fingerprint made stale.
func (s *Store) PutRoleReport(c Contract, now time.Time) (RoleRecord, *RoleRecord, error) {
	if err := c.Validate(); err != nil {
		return RoleRecord{}, nil, err
	}
	var prev *RoleRecord
	rec, err := s.updateRole(c.Role, func(cur *RoleRecord) (*RoleRecord, error) {
		var r *RoleRecord
		r, prev = ReplaceContract(cur, c, now)
		return r, nil
	})
	if err != nil {
		return RoleRecord{}, nil, err
	}
	return *rec, prev, nil
}

// ReplaceContract is the record that puts contract c in place of cur's (nil: a new role), keeping
// the role's creation time and usage, and a copy of cur (nil when new). Every backend's PutRole
// writes it.
func ReplaceContract(cur *RoleRecord, c Contract, now time.Time) (next, prev *RoleRecord) {
	r := &RoleRecord{CreatedAt: now.UTC()}
	if cur != nil {
		p := *cur
		prev = &p
		r.CreatedAt, r.LastUsedAt, r.UsageCount, r.MetricsApplied = cur.CreatedAt, cur.LastUsedAt, cur.UsageCount, cur.MetricsApplied
	}
	r.Contract = c
	r.Fingerprint = c.Fingerprint()
	switch {
	case c.definedBy != "":
		r.DefinedBy, r.AgentDefined = c.definedBy, c.byAgent
	case cur != nil && cur.Fingerprint == r.Fingerprint:
		r.DefinedBy, r.AgentDefined = cur.DefinedBy, cur.AgentDefined // the same contract again (its docs, say) stays its definer's
	}
	r.UpdatedAt = now.UTC()
	return r, prev
}

// Role returns a role's record, from memory, or from disk if this process has not seen it yet (a
// role added by another process) or its file changed since (checked once per revalidation interval).
func (s *Store) Role(name string) (*RoleRecord, error) {
	if err := ValidateName("role", name); err != nil {
		return nil, err
	}
	s.mu.RLock()
	sn := s.roles[name]
	s.mu.RUnlock()
	if sn != nil {
		if s.sweep.on.Load() { // the sweep checks it (sweep.go)
			s.sweep.touch()
			return sn.rec, nil
		}
		now, due := s.due(&sn.checked)
		if !due {
			s.startSweep()
			return sn.rec, nil
		}
		if st, err := stampOf(s.rolePath(name)); err == nil && st == sn.stamp {
			sn.checked.Store(now)
			s.startSweep()
			return sn.rec, nil
		}
	}
	return s.loadRole(name)
}

// roleNames lists the roles stored under roles/, from file names only.
func (s *Store) roleNames() ([]string, error) {
	entries, err := os.ReadDir(s.rolesPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("registry: list %s: %w", s.rolesPath(), err)
	}
	seen := map[string]bool{}
	var names []string
	for _, e := range entries {
		n := strings.TrimSuffix(e.Name(), goodSuffix)
		n, ok := strings.CutSuffix(n, ".json")
		if !ok || e.IsDir() || ValidateName("role", n) != nil || seen[n] {
			continue
		}
		seen[n] = true
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

// Roles returns every role, sorted by name, read fresh from disk. A damaged role file is
// quarantined and restored from its last-good copy; a role that cannot be restored is left out
// (and reported through OnQuarantine and by Doctor).
func (s *Store) Roles() ([]*RoleRecord, error) {
	names, err := s.roleNames()
	if err != nil {
		return nil, err
	}
	out := make([]*RoleRecord, 0, len(names))
	for _, n := range names {
		rec, err := s.loadRole(n)
		if errors.Is(err, ErrCorrupt) || errors.Is(err, ErrNotFound) || errors.Is(err, ErrIncompatible) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	return out, nil
}

// restoreMissingRole puts a role whose file is gone back from its last-good copy.
func (s *Store) restoreMissingRole(name string) (*RoleRecord, error) {
	var rec *RoleRecord
	err := s.withLock(s.roleLock(name), func() error {
		if _, err := os.Stat(s.rolePath(name)); err == nil {
			return nil
		}
		good, err := readStoreFile(s.roleGoodPath(name))
		if err != nil {
			return fmt.Errorf("registry: role %q: %w (its last-good copy: %v); add it with `forge role add`", name, ErrNotFound, err)
		}
		if rec, err = decodeRole(good, name); err != nil {
			return fmt.Errorf("registry: role %s: its file is missing and its last-good copy %s is damaged: %w; re-add it with `forge role add`", name, s.roleGoodPath(name), err)
		}
		if err := s.writeFile(s.rolePath(name), good); err != nil {
			return writeErr(s.root, err)
		}
		if s.OnQuarantine != nil {
			s.OnQuarantine(QuarantineReport{Path: s.rolePath(name), Reason: "the role file is missing",
				Restored: fmt.Sprintf("role %s restored from its last-good copy %s", name, s.roleGoodPath(name))})
		}
		return nil
	})
	if err != nil || rec != nil {
		return rec, err
	}
	return s.loadRole(name)
}

// migrateLegacy moves the roles of an older store's registry.json into roles/, losslessly, under
// registry.lock; registry.json is then kept as registry.json.migrated. A registry.json that does
// not parse is quarantined (an older forge kept no copy of it to restore from) and reported.
func (s *Store) migrateLegacy() error {
	legacy := filepath.Join(s.root, legacyRegistry)
	if _, err := os.Stat(legacy); err != nil {
		return nil
	}
	return s.withLock(filepath.Join(s.root, "registry.lock"), s.migrateLegacyLocked)
}

// migrateLegacyLocked is migrateLegacy; the caller holds registry.lock.
func (s *Store) migrateLegacyLocked() error {
	legacy := filepath.Join(s.root, legacyRegistry)
	{
		data, err := storepath.ReadRegular(legacy, "read")
		if errors.Is(err, fs.ErrNotExist) {
			return nil // another process migrated it meanwhile
		}
		if err != nil {
			return fmt.Errorf("registry: read %s: %w", legacy, err)
		}
		rf, err := decodeRegistry(data)
		if errors.Is(err, ErrIncompatible) {
			return fmt.Errorf("registry: %s: %w; open this store with the forge that wrote it", legacy, err)
		}
		if err != nil {
			s.quarantine(legacy, fmt.Errorf("registry: %s: %w", legacy, err), "", func(rep *QuarantineReport) {
				rep.Reason += " (an older forge's registry of every role; it kept no copy to restore from: re-add the roles with `forge role add`, or fix the file and `forge quarantine restore`)"
			})
			return nil
		}
		if err := s.importRoles(rf, false); err != nil {
			return err
		}
		if err := os.Rename(legacy, legacy+".migrated"); err != nil {
			return fmt.Errorf("registry: migrate %s: %w", legacy, writeErr(s.root, err))
		}
		return syncDir(s.root)
	}
}

// importRoles writes the roles of an older registry.json into roles/; existing role files are
// kept unless replace.
func (s *Store) importRoles(rf *registryFile, replace bool) error {
	names := make([]string, 0, len(rf.Roles))
	for n := range rf.Roles {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		r := rf.Roles[n]
		if err := r.Contract.Validate(); err != nil {
			return fmt.Errorf("registry: migrate role %s: %w", n, err)
		}
		if _, err := s.updateRole(n, func(cur *RoleRecord) (*RoleRecord, error) {
			if cur != nil && !replace {
				return nil, nil
			}
			rec := *r
			rec.Fingerprint = rec.Contract.Fingerprint()
			return &rec, nil
		}); err != nil {
			return fmt.Errorf("registry: migrate role %s: %w", n, err)
		}
	}
	return nil
}

// registryFile is the older store's registry.json: every role in one file.
type registryFile struct {
	SchemaVersion int                    `json:"schema_version"`
	Roles         map[string]*RoleRecord `json:"roles"`
}

func decodeRegistry(data []byte) (*registryFile, error) {
	var rf registryFile
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&rf); err != nil {
		return nil, fmt.Errorf("%w: does not parse: %v", ErrCorrupt, err)
	}
	if rf.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("%w: schema_version %d, this forge reads %d", ErrIncompatible, rf.SchemaVersion, SchemaVersion)
	}
	for name, r := range rf.Roles {
		if r == nil || r.Role != name {
			return nil, fmt.Errorf("%w: role entry %q does not name itself", ErrCorrupt, name)
		}
		if err := ValidateName("role", name); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
	}
	if rf.Roles == nil {
		rf.Roles = map[string]*RoleRecord{}
	}
	return &rf, nil
}

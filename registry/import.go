package registry

import (
	"encoding/json"
	"errors"
	"fmt"
)

// The directory store is an Importer: `forge store migrate` writes into it through these.
var _ Importer = (*Store)(nil)

// ImportRole writes rec as role rec.Role's record, replacing the one stored: contract,
// fingerprint, creation and update times, last use and usage count exactly as given. It is
// written as PutRole writes (under the role's lock, durable, with its last-good copy).
//
// rec's usage count already holds every call of the store it was read from, so the metrics
// journal records this store holds for the role are stamped as applied (MetricsApplied): they
// belong to the record being replaced and must not be added on top. rec's own stamps name
// journals of another store and are dropped.
func (s *Store) ImportRole(rec RoleRecord) error {
	name := rec.Role
	if err := ValidateName("role", name); err != nil {
		return fmt.Errorf("registry: import role: %w", err)
	}
	if err := rec.Contract.Validate(); err != nil {
		return fmt.Errorf("registry: import role %s: %w (the source store holds an invalid contract; fix it there with `forge role add -f`)", name, err)
	}
	if fp := rec.Contract.Fingerprint(); fp != rec.Fingerprint {
		return fmt.Errorf("registry: import role %s: %w: its contract_fingerprint %s does not match the contract (%s); re-add the role in the source store with `forge role add -f`", name, ErrCorrupt, rec.Fingerprint, fp)
	}
	_, err := s.updateRole(name, func(*RoleRecord) (*RoleRecord, error) {
		present, err := s.refreshOverlay() // under the role's lock, as a compaction's fold
		if err != nil {
			return nil, err
		}
		out := rec
		out.Contract = cloneContract(rec.Contract)
		if rec.LastUsedAt != nil {
			t := *rec.LastUsedAt
			out.LastUsedAt = &t
		}
		s.om.Lock()
		out.MetricsApplied = foldStamps(nil, s.ov.byRole[name], present)
		s.om.Unlock()
		return &out, nil
	})
	if err != nil {
		return fmt.Errorf("registry: import role %s into %s: %w", name, s.root, err)
	}
	return nil
}

// cloneContract copies c through its stored form, so that the record written shares nothing
// with the caller's.
func cloneContract(c Contract) Contract {
	data, err := json.Marshal(c)
	if err != nil {
		return c
	}
	var out Contract
	if err := json.Unmarshal(data, &out); err != nil {
		return c
	}
	return out
}

// ImportArtifact writes a as role.method's artifact, replacing the one stored: code, kept
// generations, lifecycle, counters and times exactly as given. It is written as Update writes
// (under the artifact's lock, durable, indexed, cached). a is checked as a stored file is (schema
// version, names, lifecycle, code and history checksums) and is not retained.
//
// a's counters already hold every call of the store it was read from, so the metrics journal
// records this store holds for role.method are stamped as applied; a's own stamps name journals
// of another store and are dropped.
func (s *Store) ImportArtifact(a *Artifact) error {
	if a == nil {
		return errors.New("registry: import artifact: nil artifact")
	}
	data, err := a.Encode()
	if err != nil {
		return fmt.Errorf("registry: import artifact %s.%s: encode: %w", a.Role, a.Method, err)
	}
	in, err := DecodeArtifact(data) // the checks a stored file gets, and a deep copy
	if err != nil {
		return fmt.Errorf("registry: import artifact %s.%s: %w (the source record is damaged or of another forge version; check it with `forge doctor` on the source store)", a.Role, a.Method, err)
	}
	_, err = s.Update(in.Role, in.Method, func(cur *Artifact, _ bool) error {
		// Update has stamped cur with every journal record this store holds for the key.
		stamps := cur.MetricsApplied
		*cur = *in
		cur.MetricsApplied = stamps
		return nil
	})
	if err != nil {
		return fmt.Errorf("registry: import artifact %s.%s into %s: %w", in.Role, in.Method, s.root, err)
	}
	return nil
}

package nats

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nuid"

	"github.com/artifactforge/forge/registry"
)

// The fleet store's maintenance (registry.Maintainer): damaged records are moved to quarantine
// entries in the data bucket, quarantine.<id>, each holding the record's key, what it is, why it
// was set aside and its bytes, so that `forge doctor` and `forge quarantine ls|restore|dismiss`
// work on a fleet store as on a directory.

var _ registry.Maintainer = (*FleetStore)(nil)

const quarantinePrefix = "quarantine."

// quarantineEntry is a quarantine key's value.
type quarantineEntry struct {
	ID     string    `json:"id"`
	Key    string    `json:"key"`  // the data bucket key it was stored under
	Kind   string    `json:"kind"` // role | artifact | knowledge
	Role   string    `json:"role,omitempty"`
	Method string    `json:"method,omitempty"`
	Domain string    `json:"domain,omitempty"`
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
	Data   []byte    `json:"data"`
}

func (f *FleetStore) report(e quarantineEntry) registry.QuarantineReport {
	return registry.QuarantineReport{ID: e.ID, Path: f.st.Data.Bucket() + "/" + e.Key, MovedTo: f.st.Data.Bucket() + "/" + quarantinePrefix + e.ID,
		Reason: e.Reason, Kind: e.Kind, Role: e.Role, Method: e.Method, At: e.At}
}

// describe names what a data bucket key holds.
func (f *FleetStore) describe(key string) (kind, role, method, domain string) {
	c, ok := f.st.classify(key)
	if !ok {
		return "file", "", "", ""
	}
	switch c.Kind {
	case registry.ChangeRole:
		return "role", c.Role, "", ""
	case registry.ChangeArtifact:
		return "artifact", c.Role, c.Method, ""
	}
	return "knowledge", "", "", c.Domain
}

// setAside writes a quarantine entry for the bytes of key (the caller removes or replaces the
// record) and returns it.
func (f *FleetStore) setAside(key string, raw []byte, why error) (quarantineEntry, error) {
	kind, role, method, domain := f.describe(key)
	e := quarantineEntry{ID: "q" + strconv.FormatInt(time.Now().UnixNano(), 10) + "-" + strings.ToLower(nuid.Next()[:8]),
		Key: key, Kind: kind, Role: role, Method: method, Domain: domain, Reason: why.Error(), At: time.Now().UTC(), Data: raw}
	data, err := json.Marshal(e)
	if err != nil {
		return e, err
	}
	ctx, cancel := f.opCtx()
	defer cancel()
	if _, err := f.st.Data.Create(ctx, quarantinePrefix+e.ID, data); err != nil {
		return e, fmt.Errorf("registry: store %s: quarantine %s: %w", f.loc, key, err)
	}
	return e, nil
}

// moveAside sets key's record (at revision rev) aside and deletes it; nothing is moved if it was
// rewritten meanwhile (ok false).
func (f *FleetStore) moveAside(key string, raw []byte, rev uint64, why error) (quarantineEntry, bool, error) {
	e, err := f.setAside(key, raw, why)
	if err != nil {
		return e, false, err
	}
	ctx, cancel := f.opCtx()
	defer cancel()
	err = f.st.Knowledge.Delete(ctx, key, rev) // any table of the data bucket deletes by key
	if errors.Is(err, ErrConflict) {
		_ = f.st.Data.Delete(ctx, quarantinePrefix+e.ID)
		return e, false, nil
	}
	if err != nil {
		_ = f.st.Data.Delete(ctx, quarantinePrefix+e.ID)
		return e, false, f.fail(err)
	}
	return e, true, nil
}

// Doctor checks every role and artifact record (it decodes, has this schema, names its key, its
// code and every kept generation match their checksums, a role's contract is valid and matches
// its fingerprint), moves damaged ones to quarantine, leaves incompatible ones in place, and lists
// every pending quarantine entry. Knowledge documents are the learner's to check.
func (f *FleetStore) Doctor() (registry.DoctorReport, error) {
	rep := registry.DoctorReport{Quarantined: []registry.QuarantineReport{}, Incompatible: []registry.QuarantineReport{}, TempRemoved: []string{}}
	ctx, cancel := f.opCtx()
	defer cancel()
	check := func(prefix string) error {
		keys, err := f.st.Data.ListKeysFiltered(ctx, prefix+">")
		if err != nil {
			return f.fail(fmt.Errorf("list %s%s: %w", prefix, ">", err))
		}
		for key := range keys.Keys() {
			rep.Checked++
			kind, role, method, _ := f.describe(key)
			e, err := f.st.Data.Get(ctx, key)
			if isNotFound(err) {
				continue
			}
			if err != nil {
				return f.fail(err)
			}
			var damage error
			if kind == "role" {
				sr, _ := decodeStoredRole(e.Value())
				damage = sr.Err
				if damage == nil && sr.Rec.Role != role {
					damage = fmt.Errorf("%w: the record of role %q names role %q", registry.ErrCorrupt, role, sr.Rec.Role)
				}
			} else {
				sa, _ := decodeStoredArtifact(e.Value())
				damage = sa.Err
				if damage == nil && (sa.A.Role != role || sa.A.Method != method) {
					damage = fmt.Errorf("%w: the record names %s.%s", registry.ErrCorrupt, sa.A.Role, sa.A.Method)
				}
			}
			switch {
			case damage == nil:
			case errors.Is(damage, registry.ErrIncompatible):
				rep.Incompatible = append(rep.Incompatible, registry.QuarantineReport{Path: f.st.Data.Bucket() + "/" + key, Kind: kind, Role: role, Method: method, Reason: damage.Error()})
			default:
				q, moved, err := f.moveAside(key, e.Value(), e.Revision(), damage)
				if err != nil {
					return err
				}
				if moved {
					f.forget(kind, role, method)
					rep.Quarantined = append(rep.Quarantined, f.report(q))
				}
			}
		}
		return nil
	}
	if err := check(rolesPrefix); err != nil {
		return rep, err
	}
	if err := check(artifactsPrefix); err != nil {
		return rep, err
	}
	var err error
	rep.Pending, err = f.Quarantined()
	return rep, err
}

// forget drops a cached record this process moved away.
func (f *FleetStore) forget(kind, role, method string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch kind {
	case "role":
		delete(f.roleC, role)
	case "artifact":
		delete(f.cache, registry.Key{Role: role, Method: method})
	}
}

func (f *FleetStore) entry(id string) (quarantineEntry, uint64, error) {
	var e quarantineEntry
	if id == "" || strings.ContainsAny(id, ".*> ") {
		return e, 0, fmt.Errorf("registry: quarantine entry %q: not an entry id (see `forge quarantine ls`)", id)
	}
	ctx, cancel := f.opCtx()
	defer cancel()
	kv, err := f.st.Data.Get(ctx, quarantinePrefix+id)
	if isNotFound(err) {
		return e, 0, fmt.Errorf("registry: quarantine entry %q in %s: %w (see `forge quarantine ls`)", id, f.loc, registry.ErrNotFound)
	}
	if err != nil {
		return e, 0, f.fail(err)
	}
	if err := json.Unmarshal(kv.Value(), &e); err != nil {
		return e, 0, fmt.Errorf("registry: quarantine entry %q in %s does not parse (%v): dismiss it", id, f.loc, err)
	}
	return e, kv.Revision(), nil
}

// Quarantined lists the pending quarantine entries, oldest first.
func (f *FleetStore) Quarantined() ([]registry.QuarantineReport, error) {
	ctx, cancel := f.opCtx()
	defer cancel()
	keys, err := f.st.Data.ListKeysFiltered(ctx, quarantinePrefix+">")
	if err != nil {
		return nil, f.fail(err)
	}
	out := []registry.QuarantineReport{}
	for key := range keys.Keys() {
		e, _, err := f.entry(strings.TrimPrefix(key, quarantinePrefix))
		if errors.Is(err, registry.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, f.report(e))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out, nil
}

// QuarantineFile sets the record named by path (a data bucket key, with or without the bucket)
// aside. The report's Reason says why it was not moved if it could not be.
func (f *FleetStore) QuarantineFile(path string, why error) registry.QuarantineReport {
	key := strings.TrimPrefix(path, f.st.Data.Bucket()+"/")
	kind, role, method, _ := f.describe(key)
	failed := func(err error) registry.QuarantineReport {
		return registry.QuarantineReport{Path: f.st.Data.Bucket() + "/" + key, Kind: kind, Role: role, Method: method,
			Reason: fmt.Sprintf("%v; not moved: %v", why, err), At: time.Now().UTC()}
	}
	ctx, cancel := f.opCtx()
	defer cancel()
	e, err := f.st.Data.Get(ctx, key)
	if err != nil {
		return failed(err)
	}
	q, moved, err := f.moveAside(key, e.Value(), e.Revision(), why)
	if err != nil {
		return failed(err)
	}
	if !moved {
		return failed(errors.New("it was rewritten meanwhile"))
	}
	f.forget(kind, role, method)
	return f.report(q)
}

// Dismiss deletes a quarantine entry, keeping the store as it is.
func (f *FleetStore) Dismiss(id string) (registry.QuarantineReport, error) {
	e, rev, err := f.entry(id)
	if err != nil {
		return registry.QuarantineReport{}, err
	}
	ctx, cancel := f.opCtx()
	defer cancel()
	if err := f.st.Knowledge.Delete(ctx, quarantinePrefix+id, rev); err != nil {
		return f.report(e), f.fail(err)
	}
	return f.report(e), nil
}

// Restore puts a quarantined record back: a role whose contract is valid (a hand-edited contract
// is taken over with its new fingerprint), an artifact that decodes (as it was when its key is
// empty, else its code as a new candidate generation on top of the current one), a knowledge
// document as it was. A record that cannot be used is refused with what to do.
func (f *FleetStore) Restore(id string, now time.Time) (registry.RestoreReport, error) {
	e, rev, err := f.entry(id)
	if err != nil {
		return registry.RestoreReport{}, err
	}
	rr := registry.RestoreReport{Entry: f.report(e)}
	hint := fmt.Sprintf("`forge quarantine dismiss %s` keeps the store as it is", id)
	switch e.Kind {
	case "role":
		var rec registry.RoleRecord
		if err := json.Unmarshal(e.Data, &rec); err != nil {
			return rr, fmt.Errorf("registry: quarantine entry %s: the role record does not parse (%v); %s", id, err, hint)
		}
		if err := rec.Contract.Validate(); err != nil || rec.Role != e.Role {
			return rr, fmt.Errorf("registry: quarantine entry %s: the contract is not usable (%v); %s", id, err, hint)
		}
		fp := rec.Contract.Fingerprint()
		rr.Action, rr.Detail = "restored", "the role record is back"
		if fp != rec.Fingerprint {
			rec.Fingerprint = fp
			rec.UpdatedAt = now.UTC()
			rr.Action, rr.Detail = "accepted", "the edited contract was taken over with its new fingerprint"
		}
		prev, _ := f.Role(e.Role)
		rr.Previous = prev
		r, err := f.writeRole(e.Role, func(*registry.RoleRecord) *registry.RoleRecord { c := rec; return &c })
		if err != nil {
			return rr, err
		}
		rr.Role = r
	case "artifact":
		// A record that decodes comes back as it was; one whose code was edited by hand (its
		// checksum no longer matches) has that code taken over as a new candidate generation.
		var a registry.Artifact
		if err := json.Unmarshal(e.Data, &a); err != nil {
			return rr, fmt.Errorf("registry: quarantine entry %s: the artifact does not parse (%v); fix it, or %s", id, err, hint)
		}
		if a.Role != e.Role || a.Method != e.Method {
			return rr, fmt.Errorf("registry: quarantine entry %s: the artifact names %s.%s, not %s.%s; %s", id, a.Role, a.Method, e.Role, e.Method, hint)
		}
		whole, derr := registry.DecodeArtifact(e.Data)
		_, err = f.Update(e.Role, e.Method, func(cur *registry.Artifact, exists bool) error {
			switch {
			case !exists && derr == nil:
				*cur = *whole
				rr.Action, rr.Detail = "restored", "the artifact is back as it was"
				return nil
			case exists && cur.CodeChecksum == registry.Checksum(a.Code):
				rr.Action, rr.Detail = "kept", "the current generation has the same code"
				return nil
			}
			cur.Promote(a.Code, "operator:restore:"+id, a.Model, a.PromptVersion, now.UTC())
			cur.Lifecycle = registry.Candidate
			if a.ContractFingerprint != "" && cur.ContractFingerprint == "" {
				cur.ContractFingerprint, cur.Signature = a.ContractFingerprint, a.Signature
			}
			rr.Action, rr.Detail = "accepted", fmt.Sprintf("its code is the new candidate generation %d", cur.Generation)
			return nil
		})
		if err != nil {
			return rr, err
		}
	case "knowledge":
		if err := f.Knowledge().Modify(e.Domain, func([]byte) ([]byte, error) { return e.Data, nil }); err != nil {
			return rr, err
		}
		rr.Action, rr.Detail = "restored", "the document is back as it was"
	default:
		return rr, fmt.Errorf("registry: quarantine entry %s: %s records cannot be restored; %s", id, e.Kind, hint)
	}
	ctx, cancel := f.opCtx()
	defer cancel()
	if err := f.st.Knowledge.Delete(ctx, quarantinePrefix+id, rev); err != nil && !errors.Is(err, ErrConflict) {
		return rr, f.fail(err)
	}
	return rr, nil
}

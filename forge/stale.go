package forge

import (
	"errors"
	"fmt"
	"sort"

	"github.com/artifactforge/forge/registry"
)

// Listed is one artifact of the store's listing with its role's contract as the store holds it
// now: what `forge ls`, the server's /v1/artifacts, MCP's per-method tools and Stale decide on.
type Listed struct {
	registry.Summary
	// Contract is the role's record now; nil when the role is not in the store (or its record
	// cannot be read), and for a summary with an Err.
	Contract *registry.RoleRecord
	// Quarantine is set for an artifact whose file the store moved to quarantine/ (damaged, or
	// edited by hand) and that has no file in its place: it is listed, with why and the entry to
	// restore (Err is then a *registry.QuarantinedError), not lost from the listing.
	Quarantine *registry.QuarantineReport
}

// ContractCurrent reports whether the artifact was verified against its role's contract as it is
// now (ContractCurrent of its record and fingerprint).
func (l *Listed) ContractCurrent() bool { return ContractCurrent(l.Contract, l.ContractFingerprint) }

// ContractCurrent reports whether code verified against the contract whose fingerprint is
// verifiedAgainst fits the role's record rec as it is now: false when there is no record. An
// artifact whose contract is not current is stale: its next call repairs it against the contract.
func ContractCurrent(rec *registry.RoleRecord, verifiedAgainst string) bool {
	return rec != nil && rec.Fingerprint == verifiedAgainst
}

// List reads the store's listing: its summaries (an index for a directory store: no artifact file
// is read when nothing changed), each with its role's record, read once per role.
func List(s registry.Backend) ([]Listed, error) {
	sums, err := s.Summaries()
	if err != nil {
		return nil, err
	}
	out := make([]Listed, len(sums))
	roles := map[string]*registry.RoleRecord{} // nil: not in the store
	for i, sm := range sums {
		out[i].Summary = sm
		if sm.Err != nil {
			continue
		}
		rec, ok := roles[sm.Role]
		if !ok {
			if rec, err = s.Role(sm.Role); err != nil {
				rec = nil
			}
			roles[sm.Role] = rec
		}
		out[i].Contract = rec
	}
	return withQuarantined(s, out)
}

// withQuarantined gives each artifact of ls that its store holds in quarantine and that has no
// readable file in its place its quarantine entry (the newest), adding a row for those the
// summaries no longer list, in the listing's order (role, method).
func withQuarantined(s registry.Backend, ls []Listed) ([]Listed, error) {
	m, ok := s.(registry.Maintainer)
	if !ok {
		return ls, nil // a backend without a quarantine has no such files
	}
	q, err := m.Quarantined()
	if err != nil {
		return nil, err
	}
	newest := map[registry.Key]*registry.QuarantineReport{}
	for i := range q { // oldest first: the newest entry of a key wins
		if q[i].Kind == registry.QuarantineArtifact {
			newest[registry.Key{Role: q[i].Role, Method: q[i].Method}] = &q[i]
		}
	}
	if len(newest) == 0 {
		return ls, nil
	}
	for i := range ls {
		k := registry.Key{Role: ls[i].Role, Method: ls[i].Method}
		e, ok := newest[k]
		if !ok {
			continue
		}
		delete(newest, k)
		var qe *registry.QuarantinedError
		if errors.As(ls[i].Err, &qe) { // quarantined by this very listing
			ls[i].Quarantine = e
		}
	}
	if len(newest) == 0 {
		return ls, nil
	}
	for _, e := range newest {
		ls = append(ls, Listed{Summary: registry.Summary{Role: e.Role, Method: e.Method,
			Err: &registry.QuarantinedError{Report: *e, Err: errors.New(e.Reason)}}, Quarantine: e})
	}
	sort.SliceStable(ls, func(i, j int) bool {
		if ls[i].Role != ls[j].Role {
			return ls[i].Role < ls[j].Role
		}
		return ls[i].Method < ls[j].Method
	})
	return ls, nil
}

// StaleArtifact is an artifact verified against something that is no longer current.
type StaleArtifact struct {
	Role   string `json:"role"`
	Method string `json:"method"`
	Why    string `json:"why"`
}

// Stale lists the store's artifacts verified against an older contract, an unknown role or
// another runtime, or that cannot be read (`forge stale`, the server's /v1/stale).
func Stale(s registry.Backend) ([]StaleArtifact, error) {
	ls, err := List(s)
	if err != nil {
		return nil, err
	}
	rows := []StaleArtifact{}
	for i := range ls {
		if why := staleWhy(&ls[i]); why != "" {
			rows = append(rows, StaleArtifact{ls[i].Role, ls[i].Method, why})
		}
	}
	return rows, nil
}

// StaleByContract lists the artifacts of role verified against another contract than the one
// the store holds now: what a change of its contract made stale (`forge role add`). Artifacts
// that cannot be read are left to `forge doctor`.
func StaleByContract(s registry.Backend, role string) ([]StaleArtifact, error) {
	ls, err := List(s)
	if err != nil {
		return nil, err
	}
	rows := []StaleArtifact{}
	for i := range ls {
		if l := &ls[i]; l.Role == role && l.Err == nil && l.Contract != nil && !l.ContractCurrent() {
			rows = append(rows, StaleArtifact{l.Role, l.Method, staleWhy(l)})
		}
	}
	return rows, nil
}

// staleWhy says why l is stale, "" when it is not.
func staleWhy(l *Listed) string {
	switch {
	case l.Err != nil:
		return l.Err.Error()
	case l.Contract == nil:
		return "its role is not in the registry"
	case !l.ContractCurrent():
		return fmt.Sprintf("the contract changed since it was verified: generation %d was verified against contract %s; its next call repairs it against %s (or `forge regen %s %s` now)",
			l.Generation, shortFingerprint(l.ContractFingerprint), shortFingerprint(l.Contract.Fingerprint), l.Role, l.Method)
	case !registry.RuntimeCompatible(l.RuntimeVersion, registry.RuntimeVersion):
		return fmt.Sprintf("runtime %s, this forge is %s", l.RuntimeVersion, registry.RuntimeVersion)
	}
	return ""
}

// shortFingerprint is a contract fingerprint cut to what tells two apart in a message.
func shortFingerprint(s string) string {
	if len(s) > 19 {
		return s[:19]
	}
	return s
}

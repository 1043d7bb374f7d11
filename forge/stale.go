package forge

import (
	"fmt"

	"github.com/artifactforge/forge/registry"
)

// StaleArtifact is an artifact verified against something that is no longer current.
type StaleArtifact struct {
	Role   string `json:"role"`
	Method string `json:"method"`
	Why    string `json:"why"`
}

// Stale lists the store's artifacts verified against an older contract, an unknown role or
// another runtime, or that cannot be read (`forge stale`, the server's /v1/stale).
func Stale(s registry.Backend) ([]StaleArtifact, error) {
	rows := []StaleArtifact{}
	sums, err := s.Summaries() // the summary index, not every artifact file
	if err != nil {
		return nil, err
	}
	for _, sm := range sums {
		if sm.Err != nil {
			rows = append(rows, StaleArtifact{sm.Role, sm.Method, sm.Err.Error()})
			continue
		}
		role, err := s.Role(sm.Role)
		switch {
		case err != nil:
			rows = append(rows, StaleArtifact{sm.Role, sm.Method, "its role is not in the registry"})
		case role.Fingerprint != sm.ContractFingerprint:
			rows = append(rows, StaleArtifact{sm.Role, sm.Method, "the contract changed since it was verified (its next call repairs it)"})
		case !registry.RuntimeCompatible(sm.RuntimeVersion, registry.RuntimeVersion):
			rows = append(rows, StaleArtifact{sm.Role, sm.Method, fmt.Sprintf("runtime %s, this forge is %s", sm.RuntimeVersion, registry.RuntimeVersion)})
		}
	}
	return rows, nil
}

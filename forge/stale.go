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
func Stale(s *registry.Store) ([]StaleArtifact, error) {
	rows := []StaleArtifact{}
	err := s.Each(func(k registry.Key, art *registry.Artifact, err error) error {
		if err != nil {
			rows = append(rows, StaleArtifact{k.Role, k.Method, err.Error()})
			return nil
		}
		role, err := s.Role(k.Role)
		switch {
		case err != nil:
			rows = append(rows, StaleArtifact{k.Role, k.Method, "its role is not in the registry"})
		case role.Fingerprint != art.ContractFingerprint:
			rows = append(rows, StaleArtifact{k.Role, k.Method, "the contract changed since it was verified (its next call repairs it)"})
		case !registry.RuntimeCompatible(art.RuntimeVersion, registry.RuntimeVersion):
			rows = append(rows, StaleArtifact{k.Role, k.Method, fmt.Sprintf("runtime %s, this forge is %s", art.RuntimeVersion, registry.RuntimeVersion)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rows, nil
}

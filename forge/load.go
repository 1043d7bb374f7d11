package forge

import (
	"errors"
	"fmt"

	"github.com/artifactforge/forge/registry"
)

// LoadArtifact reads role.method's artifact from s for an edge that shows it (`forge show`,
// `forge history`, GET /v1/artifacts/{role}/{method}, /v1/history/...). An artifact that is not
// there says why, and the error wraps registry.ErrNotFound: its file is in quarantine (and how to
// put it back), its role is not in the store, the role does not take the method (methodRefusal),
// or its first call creates it.
func LoadArtifact(s registry.Backend, role, method string) (*registry.Artifact, error) {
	art, err := s.Load(role, method)
	var qe *registry.QuarantinedError
	if errors.As(err, &qe) {
		return nil, missing(err, "%s.%s: its file is damaged and was quarantined (%s): %v; put it back with `forge quarantine restore %s`, or regenerate with `forge regen %s %s`",
			role, method, qe.Report.ID, qe.Err, qe.Report.ID, role, method)
	}
	if !errors.Is(err, registry.ErrNotFound) {
		return art, err
	}
	if m, ok := s.(registry.Maintainer); ok {
		if q, qerr := m.Quarantined(); qerr == nil {
			for i := len(q) - 1; i >= 0; i-- {
				if e := q[i]; e.Kind == registry.QuarantineArtifact && e.Role == role && e.Method == method {
					return nil, missing(err, "%s.%s is quarantined (%s, %s): %s; put it back with `forge quarantine restore %s`, or regenerate with `forge regen %s %s`",
						role, method, e.ID, e.At.UTC().Format("2006-01-02 15:04:05Z"), e.Reason, e.ID, role, method)
				}
			}
		}
	}
	rec, rerr := s.Role(role)
	switch {
	case errors.Is(rerr, registry.ErrNotFound):
		return nil, missing(err, "role %q is not in the store %s; add it with `forge role add -f contract.json` (see `forge role ls`)", role, s.Location())
	case rerr == nil:
		if msg := methodRefusal(rec, method, true); msg != "" {
			return nil, missing(err, "%s", msg)
		}
	}
	return nil, missing(err, "%v; it is created by the first `forge call %s %s`", err, role, method)
}

// missingError is an artifact that is not there, with why; it wraps registry.ErrNotFound and
// the store's own error.
type missingError struct {
	msg   string
	cause error
}

func (e *missingError) Error() string   { return e.msg }
func (e *missingError) Unwrap() []error { return []error{registry.ErrNotFound, e.cause} }

func missing(cause error, format string, args ...any) error {
	return &missingError{msg: fmt.Sprintf(format, args...), cause: cause}
}

package registry

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// StaleTempAge is how old a leftover temp file must be before doctor removes it: younger ones may
// belong to a writer that is still running.
const StaleTempAge = time.Minute

// DoctorReport is what Doctor found.
type DoctorReport struct {
	Checked      int                `json:"checked"`
	Quarantined  []QuarantineReport `json:"quarantined"`
	Incompatible []QuarantineReport `json:"incompatible"` // left in place: a newer forge may own them
	TempRemoved  []string           `json:"temp_removed"`
}

// Damaged reports whether doctor found anything wrong with stored data.
func (r DoctorReport) Damaged() bool { return len(r.Quarantined) > 0 || len(r.Incompatible) > 0 }

// Doctor verifies every file of the store — registry.json and every artifact: parse, schema,
// names, lifecycle, checksums of the code and of every kept generation — quarantines what is
// damaged, and removes temp files left by crashed writers.
func (s *Store) Doctor() (DoctorReport, error) {
	var rep DoctorReport
	rep.Checked++
	_, err := s.readRegistry()
	switch {
	case errors.Is(err, ErrIncompatible):
		rep.Incompatible = append(rep.Incompatible, QuarantineReport{Path: s.registryPath(), Reason: err.Error()})
	case errors.Is(err, ErrCorrupt):
		if err := withLock(s.registryLock(), func() error {
			if _, err := s.readRegistry(); errors.Is(err, ErrCorrupt) {
				rep.Quarantined = append(rep.Quarantined, s.quarantine(s.registryPath(), err))
			}
			return nil
		}); err != nil {
			return rep, err
		}
	case err != nil:
		return rep, err
	}
	if _, err := s.loadRoles(); err != nil {
		return rep, err
	}

	keys, err := s.List()
	if err != nil {
		return rep, err
	}
	for _, k := range keys {
		rep.Checked++
		_, err := s.Load(k.Role, k.Method)
		var qe *QuarantinedError
		switch {
		case errors.As(err, &qe):
			rep.Quarantined = append(rep.Quarantined, qe.Report)
		case err == nil, errors.Is(err, ErrNotFound), errors.Is(err, ErrCorrupt):
			// missing meanwhile, or quarantined by another process between List and Load
		case errors.Is(err, ErrIncompatible):
			rep.Incompatible = append(rep.Incompatible, QuarantineReport{Path: s.ArtifactPath(k.Role, k.Method), Reason: err.Error()})
		default:
			return rep, err
		}
	}

	cutoff := time.Now().Add(-StaleTempAge)
	err = filepath.WalkDir(s.root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != s.root && filepath.Base(path) == "quarantine" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), tempPrefix) {
			if info, err := d.Info(); err == nil && info.ModTime().Before(cutoff) {
				if os.Remove(path) == nil {
					rep.TempRemoved = append(rep.TempRemoved, path)
				}
			}
		}
		return nil
	})
	return rep, err
}

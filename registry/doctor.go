package registry

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/artifactforge/forge/internal/storepath"
)

// StaleTempAge is how old a leftover temp file must be before doctor removes it: younger ones may
// belong to a writer that is still running.
const StaleTempAge = time.Minute

// DoctorReport is what Doctor found.
type DoctorReport struct {
	Checked int `json:"checked"`
	// Quarantined are the files this run moved to quarantine.
	Quarantined []QuarantineReport `json:"quarantined"`
	// Pending are all quarantine entries not yet restored or dismissed, this run's and earlier ones
	// (those made while a command opened the store, or a call loaded an artifact), with what was
	// restored in their place.
	Pending      []QuarantineReport `json:"pending"`
	Incompatible []QuarantineReport `json:"incompatible"` // left in place: a newer forge may own them
	TempRemoved  []string           `json:"temp_removed"`
	// IndexRebuilt is how many artifacts the summary index was rebuilt from (every readable one).
	IndexRebuilt int `json:"index_rebuilt"`
	// Journals is what waits in the metrics journals to be folded into the files.
	Journals JournalStats `json:"journals"`
	// OpenToAll are the store's files and directories that every user may write (mode o+w):
	// whoever writes them decides what forge runs, so forge refuses to read them
	// (storepath.ErrOpenToAll) until `chmod o-w PATH`.
	OpenToAll []string `json:"open_to_all"`
}

// Damaged reports whether the store has damage an operator has not dealt with: a file doctor
// quarantined, an earlier quarantine still pending, or an incompatible file.
func (r DoctorReport) Damaged() bool {
	return len(r.Quarantined) > 0 || len(r.Pending) > 0 || len(r.Incompatible) > 0 || len(r.OpenToAll) > 0
}

// Doctor verifies every file of the store — every role (parse, schema, name, contract, its
// fingerprint) and every artifact (parse, schema, names, lifecycle, checksums of the code and of
// every kept generation) — quarantines what is damaged (restoring roles from their last-good
// copies), rebuilds the summary index from the files, lists every pending quarantine, and removes
// temp files left by crashed writers.
func (s *Store) Doctor() (DoctorReport, error) {
	rep := DoctorReport{Quarantined: []QuarantineReport{}, Incompatible: []QuarantineReport{}, TempRemoved: []string{}, OpenToAll: []string{}}
	// This run's quarantines are the recorded entries made from now on (by this run, or by another
	// process meanwhile): OnQuarantine is left alone, so a running forge's reporting is untouched.
	start := time.Now().UTC()

	if err := s.migrateLegacy(); err != nil {
		return rep, err
	}
	names, err := s.roleNames()
	if err != nil {
		return rep, err
	}
	for _, n := range names {
		rep.Checked++
		_, err := s.loadRole(n)
		switch {
		case errors.Is(err, ErrCorrupt) && !errors.As(err, new(*QuarantinedError)):
			// the file is gone and its last-good copy is damaged: nothing was moved, report it here
			rep.Quarantined = append(rep.Quarantined, QuarantineReport{Path: s.rolePath(n), Kind: "role", Role: n, Reason: err.Error(), At: time.Now().UTC()})
		case err == nil, errors.Is(err, ErrNotFound), errors.Is(err, ErrCorrupt), errors.Is(err, storepath.ErrOpenToAll):
			// fine, gone meanwhile, or quarantined (reported through OnQuarantine); open to
			// all: listed by the walk below
		case errors.Is(err, ErrIncompatible):
			rep.Incompatible = append(rep.Incompatible, QuarantineReport{Path: s.rolePath(n), Kind: "role", Role: n, Reason: err.Error()})
		default:
			return rep, err
		}
	}

	keys, err := s.List()
	if err != nil {
		return rep, err
	}
	for _, k := range keys {
		rep.Checked++
		_, err := s.Load(k.Role, k.Method)
		switch {
		case err == nil, errors.Is(err, ErrNotFound), errors.Is(err, ErrCorrupt), errors.Is(err, storepath.ErrOpenToAll):
			// fine, missing meanwhile, or quarantined (by this run: reported through OnQuarantine;
			// by another process between List and Load: pending below); open to all: listed by
			// the walk below
		case errors.Is(err, ErrIncompatible):
			rep.Incompatible = append(rep.Incompatible, QuarantineReport{Path: s.ArtifactPath(k.Role, k.Method), Kind: "artifact", Role: k.Role, Method: k.Method, Reason: err.Error()})
		default:
			return rep, err
		}
	}
	if rep.IndexRebuilt, err = s.RebuildIndex(); err != nil && !isReadOnly(err) {
		return rep, err
	}
	if rep.Journals, err = s.Journals(); err != nil {
		return rep, err
	}
	if rep.Pending, err = s.Quarantined(); err != nil {
		return rep, err
	}
	for _, q := range rep.Pending {
		if !q.At.Before(start) {
			rep.Quarantined = append(rep.Quarantined, q)
		}
	}

	cutoff := time.Now().Add(-StaleTempAge)
	err = filepath.WalkDir(s.root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != s.root && filepath.Base(path) == quarantineDir {
			return filepath.SkipDir
		}
		if info, err := d.Info(); err == nil && d.Type()&fs.ModeSymlink == 0 && info.Mode().Perm()&0o002 != 0 && runtime.GOOS != "windows" {
			rep.OpenToAll = append(rep.OpenToAll, path)
		}
		if d.Type()&fs.ModeSymlink != 0 && runtime.GOOS != "windows" {
			// A link: forge reads the file it ends at, refused when every user may write that
			// file or its directory (storepath.OpenRegular); the chmod is theirs.
			fi, err := os.Stat(path)
			switch {
			case err != nil: // a dangling link: nothing is read
			case fi.Mode().Perm()&0o002 != 0:
				rep.OpenToAll = append(rep.OpenToAll, path)
			default:
				dir := storepath.FileDir(path)
				if di, err := os.Stat(dir); err == nil && di.Mode().Perm()&0o002 != 0 {
					rep.OpenToAll = append(rep.OpenToAll, dir)
				}
			}
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

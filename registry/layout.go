package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/artifactforge/forge/internal/storepath"
)

// Store layouts. Layout 1 (no store.json) keeps counters only inside the artifact files and role
// usage inside the role files (and, older still, every role in one registry.json). Layout 2 adds
// the metrics journals (metrics/, journal.go) and the summary index (index/, index.go), and marks
// the store with store.json {"layout": 2}. Every layout-1 file is a valid layout-2 file (the
// journals add to what the files hold), so the migration writes no artifact: it moves
// registry.json's roles into roles/, builds the index, and writes store.json last, all under
// registry.lock. A migration that crashes midway has not written store.json and is simply run
// again by the next Open (each step is idempotent).

// Layout is the store layout this package reads and writes.
const Layout = 2

const storeFile = "store.json"

type storeMeta struct {
	Layout int `json:"layout"`
}

// ErrNewerLayout is returned by Open for a store written by a newer forge.
var ErrNewerLayout = errors.New("store layout is newer than this forge")

func (s *Store) readLayout() (int, error) {
	data, err := storepath.ReadRegular(filepath.Join(s.root, storeFile), "read")
	if errors.Is(err, fs.ErrNotExist) {
		return 1, nil
	}
	if err != nil {
		return 0, fmt.Errorf("registry: read %s: %w", filepath.Join(s.root, storeFile), err)
	}
	var m storeMeta
	if err := json.Unmarshal(data, &m); err != nil || m.Layout < 1 {
		// A damaged marker: the files say what the store is; migrating again is harmless.
		return 1, nil
	}
	return m.Layout, nil
}

// openLayout migrates an older store to Layout, or refuses a newer one.
func (s *Store) openLayout() error {
	l, err := s.readLayout()
	if err != nil {
		return err
	}
	if l > Layout {
		return fmt.Errorf("registry: %s: %w (layout %d, this forge reads %d); open it with the forge that wrote it", s.root, ErrNewerLayout, l, Layout)
	}
	if l == Layout {
		if _, err := os.Stat(filepath.Join(s.root, legacyRegistry)); err == nil {
			return s.migrateLegacy() // an older forge wrote registry.json into a new store
		}
		return nil
	}
	return s.withLock(filepath.Join(s.root, "registry.lock"), func() error {
		if l, err := s.readLayout(); err != nil || l == Layout {
			return err // another process migrated it meanwhile
		}
		return s.migrateLocked()
	})
}

// migrateLocked is the migration to Layout (the caller holds registry.lock). A store that cannot
// be written (read-only) is left as it is and read as layout 1: listings then read the files.
func (s *Store) migrateLocked() error {
	if err := s.migrateLegacyLocked(); err != nil {
		return err
	}
	for _, d := range []string{metricsDir, indexDir} {
		if err := s.mkdirAll(filepath.Join(s.root, d), 0o755); err != nil {
			if isReadOnly(err) {
				return nil
			}
			return fmt.Errorf("registry: migrate %s to layout %d: %w", s.root, Layout, writeErr(s.root, err))
		}
	}
	if _, err := s.RebuildIndex(); err != nil {
		if isReadOnly(err) {
			return nil
		}
		return fmt.Errorf("registry: migrate %s to layout %d: %w", s.root, Layout, err)
	}
	data, _ := json.Marshal(storeMeta{Layout: Layout})
	if err := s.writeFile(filepath.Join(s.root, storeFile), append(data, '\n')); err != nil {
		if isReadOnly(err) {
			return nil
		}
		return fmt.Errorf("registry: migrate %s to layout %d: write %s: %w", s.root, Layout, storeFile, writeErr(s.root, err))
	}
	return nil
}

func isReadOnly(err error) bool {
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)
}

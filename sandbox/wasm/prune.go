package wasm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/artifactforge/forge/internal/storepath"
	"github.com/artifactforge/forge/sandbox"
)

// CacheFile is one file of the wasm cache.
type CacheFile = sandbox.CacheFile

// CacheReport says what PruneCache removed (or would remove) and what it kept.
type CacheReport = sandbox.CacheReport

// staleTemp is how old a leftover temporary file (a write that crashed) must be to be removed.
const staleTemp = time.Hour

// PruneCache removes the built modules (modules/*.wasm.gz; *.wasm of forge versions before the
// modules were compressed) and compiled code (compiled/) under cacheDir/wasm that were not used
// since cutoff, and temporary files left by crashed writes.
// cacheDir is what Options.CacheDir was (the forge passes its store's cache/). With dryRun it only
// reports. Removing a file in use is harmless: a module is read whole when a program is compiled,
// and a removed one is built again on its next compile (seconds, once).
//
// A built module's modification time is refreshed each time a sandbox loads it. Compiled code is
// wazero's, named by a hash this package cannot compute, so its last use is its access time, which
// Linux's default relatime mount keeps to within a day; on a noatime mount compiled code in use can
// be removed, and the next process start compiles it again (about a second per module).
func PruneCache(cacheDir string, cutoff time.Time, dryRun bool) (CacheReport, error) {
	rep := CacheReport{Removed: []CacheFile{}}
	if cacheDir == "" {
		return rep, errors.New("wasm: prune: no cache directory given")
	}
	root := filepath.Join(cacheDir, "wasm")
	var errs []error
	for _, sub := range []string{"modules", "compiled"} {
		dir := filepath.Join(root, sub)
		// A linked cache/, wasm/ or modules/ would lead the removals outside the store (WalkDir
		// itself follows no link below dir).
		if err := storepath.Check(filepath.Dir(filepath.Clean(cacheDir)), dir, "prune"); err != nil {
			errs = append(errs, err)
			continue
		}
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) && path == dir {
					return fs.SkipDir
				}
				errs = append(errs, err)
				return nil
			}
			if d.IsDir() && strings.HasPrefix(d.Name(), stagePrefix) {
				// A staging directory (codecache.go): a live sandbox holds its flock; one no
				// process holds was left by a crash and goes, unless this is a dry run.
				if !dryRun && staleStage(path) {
					if err := os.RemoveAll(path); err != nil {
						errs = append(errs, err)
					}
				}
				return fs.SkipDir
			}
			if !d.Type().IsRegular() {
				return nil
			}
			fi, err := d.Info()
			if err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					errs = append(errs, err)
				}
				return nil
			}
			f := CacheFile{Path: path, Bytes: fi.Size(), LastUsed: lastUsed(fi)}
			limit := cutoff
			if isTemp(d.Name()) {
				limit = time.Now().Add(-staleTemp)
			}
			if !f.LastUsed.Before(limit) {
				rep.Kept++
				rep.KeptBytes += f.Bytes
				return nil
			}
			if !dryRun {
				if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
					errs = append(errs, err)
					rep.Kept++
					rep.KeptBytes += f.Bytes
					return nil
				}
			}
			rep.Removed = append(rep.Removed, f)
			rep.RemovedBytes += f.Bytes
			return nil
		})
		if err != nil {
			errs = append(errs, err)
		}
	}
	sort.Slice(rep.Removed, func(i, j int) bool { return rep.Removed[i].Path < rep.Removed[j].Path })
	if err := errors.Join(errs...); err != nil {
		return rep, fmt.Errorf("wasm: prune %s: %w", root, err)
	}
	return rep, nil
}

// isTemp matches the temporary files of writeFileAtomic (".tmp-*") and of wazero's cache ("*.tmp").
func isTemp(name string) bool {
	return strings.HasPrefix(name, ".tmp-") || strings.HasSuffix(name, ".tmp")
}

package native

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/artifactforge/forge/internal/storepath"
	"github.com/artifactforge/forge/sandbox"
)

// PruneCache removes the worker executables under cacheDir/native/bin (cacheDir is what
// Options.CacheDir was) not used since cutoff: a build or a load from the cache refreshes a file's
// modification time. With dryRun it only reports. Removing one in use is harmless: a program runs
// its sealed in-memory image, and the next compile builds it again (about a second).
func PruneCache(cacheDir string, cutoff time.Time, dryRun bool) (sandbox.CacheReport, error) {
	rep := sandbox.CacheReport{Removed: []sandbox.CacheFile{}}
	if cacheDir == "" {
		return rep, errors.New("native: prune: no cache directory given")
	}
	dir := filepath.Join(cacheDir, "native", "bin")
	// A linked cache/, native/ or bin/ would lead the removals outside the store.
	if err := storepath.Check(filepath.Dir(filepath.Clean(cacheDir)), dir, "prune"); err != nil {
		return rep, err
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return rep, nil
	}
	if err != nil {
		return rep, err
	}
	var errs []error
	for _, e := range ents {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		f := sandbox.CacheFile{Path: filepath.Join(dir, e.Name()), Bytes: info.Size(), LastUsed: info.ModTime()}
		if !info.ModTime().Before(cutoff) {
			rep.Kept++
			rep.KeptBytes += f.Bytes
			continue
		}
		if !dryRun {
			if err := os.Remove(f.Path); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		rep.Removed = append(rep.Removed, f)
		rep.RemovedBytes += f.Bytes
	}
	return rep, errors.Join(errs...)
}

package forge

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/sandbox"
)

// PruneReport says what Prune archived (or, in a dry run, would archive) and what it removed from
// the sandboxes' caches.
type PruneReport struct {
	DryRun   bool                `json:"dry_run"`
	Archived []registry.Key      `json:"archived"`
	Cache    sandbox.CacheReport `json:"cache"`
}

// Prune archives the artifacts not used since cutoff (Unused; reversible: a later call or
// Rollback revives them) and removes what the sandboxes' caches hold that was not used since
// cutoff (PruneCaches). With dryRun it changes nothing and reports what it would do (`forge prune`).
func (f *Forge) Prune(ctx context.Context, cutoff time.Time, dryRun bool) (PruneReport, error) {
	rep := PruneReport{DryRun: dryRun}
	sums, err := f.store.Summaries() // the summary index, not every artifact file
	if err != nil {
		return rep, err
	}
	for _, k := range Unused(sums, cutoff) {
		if !dryRun {
			if err := f.ArchiveContext(ctx, k.Role, k.Method); err != nil {
				return rep, err
			}
		}
		rep.Archived = append(rep.Archived, k)
	}
	rep.Cache, err = PruneCaches(f.store.LocalDir(), cutoff, dryRun)
	return rep, err
}

// Unused lists the artifacts Prune archives: those last used (or, never used, created) before
// cutoff. Blessed artifacts are pinned, archived ones are archived already, and ones that cannot
// be read are doctor's matter: none of them is listed.
func Unused(sums []registry.Summary, cutoff time.Time) []registry.Key {
	var out []registry.Key
	for _, sm := range sums {
		if sm.Err != nil || sm.Lifecycle == registry.Blessed || sm.Lifecycle == registry.Archived {
			continue
		}
		last := sm.CreatedAt
		if sm.LastUsedAt != nil {
			last = *sm.LastUsedAt
		}
		if last.After(cutoff) {
			continue
		}
		out = append(out, sm.Key())
	}
	return out
}

// PruneCaches removes, from the caches of every registered backend that keeps one under the
// store's local directory localDir, what was not used since unusedSince and what crashed writes
// left; with dryRun it only reports. A zero unusedSince removes only the leftovers (`forge doctor`).
func PruneCaches(localDir string, unusedSince time.Time, dryRun bool) (sandbox.CacheReport, error) {
	rep := sandbox.CacheReport{Removed: []sandbox.CacheFile{}}
	var errs []error
	for _, b := range sandbox.Backends() {
		if b.PruneCache == nil {
			continue
		}
		r, err := b.PruneCache(cacheDir(localDir), unusedSince, dryRun)
		rep.Add(r)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return rep, errors.Join(errs...)
}

// cacheDir is where the backends of a store whose local directory is localDir keep their caches.
func cacheDir(localDir string) string { return filepath.Join(localDir, "cache") }

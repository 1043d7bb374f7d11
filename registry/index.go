package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// The summary index. index/<role>.json holds one Summary per artifact of the role — what `forge
// ls`, `stale`, `prune` and the known-tools listing need, without the code — each with the stamp
// (inode, mtime, size) of the artifact file it was taken from. Every artifact write updates its
// entry (under the role's index lock, after the artifact file is durable). The index is a cache,
// never trusted over the files: a listing compares each entry's stamp with its file and reads the
// file instead when they differ (or the entry or the index file is missing or does not parse),
// then rewrites the role's index; Doctor rebuilds every role's index from the files it verified.
// Index files are written by rename without fsync: a crash may lose or tear one, and the next
// listing rebuilds it.

const indexDir = "index"

// Summary is an artifact as the index lists it: everything but its code and history.
type Summary struct {
	Role                string     `json:"role"`
	Method              string     `json:"method"`
	Lifecycle           Lifecycle  `json:"lifecycle"`
	Generation          int        `json:"generation"`
	ContractFingerprint string     `json:"contract_fingerprint"`
	RuntimeVersion      string     `json:"runtime_version"`
	CodeChecksum        string     `json:"code_checksum"`
	Decl                string     `json:"decl,omitempty"`
	LastFailureClass    string     `json:"last_failure_class,omitempty"`
	CreatedAt           time.Time  `json:"created_at"`
	LastUsedAt          *time.Time `json:"last_used_at,omitempty"`
	Counters
	MetricsApplied map[string]int64 `json:"metrics_applied,omitempty"`
	Stamp          indexStamp       `json:"stamp"`

	// Err is why the artifact could not be read (damaged, incompatible); the other fields are
	// then empty. Not stored.
	Err error `json:"-"`
}

type indexStamp struct {
	Ino   uint64 `json:"ino"`
	Mtime int64  `json:"mtime"`
	Size  int64  `json:"size"`
}

func toIndexStamp(st fileStamp) indexStamp { return indexStamp{st.ino, st.mtime, st.size} }

// Key is the summary's artifact key.
func (sm *Summary) Key() Key { return Key{sm.Role, sm.Method} }

func summaryOf(a *Artifact, st fileStamp) Summary {
	return Summary{Role: a.Role, Method: a.Method, Lifecycle: a.Lifecycle, Generation: a.Generation,
		ContractFingerprint: a.ContractFingerprint, RuntimeVersion: a.RuntimeVersion, CodeChecksum: a.CodeChecksum,
		Decl: a.Signature.Decl, LastFailureClass: a.LastFailureClass, CreatedAt: a.CreatedAt, LastUsedAt: a.LastUsedAt,
		Counters: a.Counters, MetricsApplied: a.MetricsApplied, Stamp: toIndexStamp(st)}
}

// merged applies the journal records the summary's file has not applied.
func (sm Summary) merged(recs []ovRec) Summary {
	p := pendingFor(recs, sm.MetricsApplied)
	if len(p) == 0 {
		return sm
	}
	a := Artifact{Lifecycle: sm.Lifecycle, Counters: sm.Counters, LastUsedAt: sm.LastUsedAt, LastFailureClass: sm.LastFailureClass}
	for i := range p {
		p[i].d.applyTo(&a, p[i].at)
	}
	sm.Lifecycle, sm.Counters, sm.LastUsedAt, sm.LastFailureClass = a.Lifecycle, a.Counters, a.LastUsedAt, a.LastFailureClass
	return sm
}

type indexFile struct {
	Layout    int                 `json:"layout"`
	Role      string              `json:"role"`
	Artifacts map[string]*Summary `json:"artifacts"`
}

func (s *Store) indexPath(role string) string { return filepath.Join(s.root, indexDir, role+".json") }
func (s *Store) indexLock(role string) string { return filepath.Join(s.root, indexDir, role+".lock") }

// readIndex returns a role's index entries, or nil if the index is missing or unusable.
func (s *Store) readIndex(role string) map[string]*Summary {
	data, err := os.ReadFile(s.indexPath(role))
	if err != nil {
		return nil
	}
	var f indexFile
	if json.Unmarshal(data, &f) != nil || f.Layout != Layout || f.Role != role || f.Artifacts == nil {
		return nil
	}
	return f.Artifacts
}

// writeIndex replaces a role's index (temp file and rename, no fsync: it is a cache).
func (s *Store) writeIndex(role string, entries map[string]*Summary) error {
	for m, e := range entries {
		if e == nil || e.Err != nil {
			delete(entries, m)
		}
	}
	data, err := json.Marshal(indexFile{Layout: Layout, Role: role, Artifacts: entries})
	if err != nil {
		return err
	}
	dir := filepath.Join(s.root, indexDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, tempPrefix+role+".json-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), s.indexPath(role)); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

// indexPut records a just-written artifact in its role's index. A failure is not an error of the
// write: the next listing sees the stale entry and rebuilds it.
func (s *Store) indexPut(a *Artifact, st fileStamp) {
	sm := summaryOf(a, st)
	s.indexPutMany(a.Role, []*Summary{&sm})
}

func (s *Store) indexPutMany(role string, sms []*Summary) {
	if err := os.MkdirAll(filepath.Join(s.root, indexDir), 0o755); err != nil {
		return
	}
	_ = withLock(s.indexLock(role), func() error {
		entries := s.readIndex(role)
		if entries == nil {
			entries = map[string]*Summary{}
			// Rebuilt from the files below only when listed; an entry for each write is enough.
		}
		for _, sm := range sms {
			entries[sm.Method] = sm
		}
		return s.writeIndex(role, entries)
	})
}

// Summaries lists every stored artifact from the index, with the metrics journals' records
// merged, sorted by key: `forge ls`, stale, prune and the known-tools listing. An entry whose
// stamp does not match its file (or that is missing) is read from the file, and the role's index
// is rewritten (when the store is writable). Artifacts that cannot be read are listed with Err
// (damaged ones are quarantined as Load does).
func (s *Store) Summaries() ([]Summary, error) {
	keys, err := s.List()
	if err != nil {
		return nil, err
	}
	if _, err := s.refreshOverlay(); err != nil {
		return nil, err
	}
	out := make([]Summary, 0, len(keys))
	for i := 0; i < len(keys); {
		role := keys[i].Role
		j := i
		for j < len(keys) && keys[j].Role == role {
			j++
		}
		sms, err := s.roleSummaries(role, keys[i:j])
		if err != nil {
			return nil, err
		}
		out = append(out, sms...)
		i = j
	}
	s.om.Lock()
	for i := range out {
		if out[i].Err == nil {
			out[i] = out[i].merged(s.ov.byKey[out[i].Key()])
		}
	}
	s.om.Unlock()
	return out, nil
}

// roleSummaries is Summaries for one role's keys (sorted), repairing the role's index.
func (s *Store) roleSummaries(role string, keys []Key) ([]Summary, error) {
	entries := s.readIndex(role)
	dirty := entries == nil
	if entries == nil {
		entries = map[string]*Summary{}
	}
	out := make([]Summary, 0, len(keys))
	for _, k := range keys {
		st, serr := stampOf(s.ArtifactPath(k.Role, k.Method))
		if errors.Is(serr, fs.ErrNotExist) {
			continue // vanished since the listing
		}
		if e := entries[k.Method]; e != nil && serr == nil && e.Stamp == toIndexStamp(st) && e.Role == k.Role && e.Method == k.Method {
			out = append(out, *e)
			continue
		}
		dirty = true
		sm, err := s.summaryFromFile(k)
		if errors.Is(err, ErrNotFound) {
			delete(entries, k.Method)
			continue
		}
		if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrIncompatible) {
			return nil, err
		}
		if sm.Err == nil {
			e := sm
			entries[k.Method] = &e
		} else {
			delete(entries, k.Method)
		}
		out = append(out, sm)
	}
	if len(entries) > len(keys) {
		have := make(map[string]bool, len(keys))
		for _, k := range keys {
			have[k.Method] = true
		}
		for m := range entries {
			if !have[m] {
				delete(entries, m)
				dirty = true
			}
		}
	}
	if dirty {
		_ = withLock(s.indexLock(role), func() error { return s.writeIndex(role, entries) }) // best effort (read-only store)
	}
	return out, nil
}

// summaryFromFile reads one artifact file (quarantining it if damaged) and summarizes it.
func (s *Store) summaryFromFile(k Key) (Summary, error) {
	st, _ := stampOf(s.ArtifactPath(k.Role, k.Method))
	a, err := s.readArtifact(k.Role, k.Method)
	if errors.Is(err, ErrCorrupt) {
		// As Load: confirm under the lock and quarantine.
		_, err = s.load(k.Role, k.Method)
		if err == nil { // replaced by a writer meanwhile
			return s.summaryFromFile(k)
		}
	}
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return Summary{}, err
		}
		return Summary{Role: k.Role, Method: k.Method, Err: err}, err
	}
	return summaryOf(a, st), nil
}

// RebuildIndex rewrites every role's index from the artifact files (Doctor; a migration).
func (s *Store) RebuildIndex() (int, error) {
	keys, err := s.List()
	if err != nil {
		return 0, err
	}
	byRole := map[string]map[string]*Summary{}
	for _, k := range keys {
		st, _ := stampOf(s.ArtifactPath(k.Role, k.Method))
		a, err := s.readArtifact(k.Role, k.Method)
		if err != nil {
			continue // damage is Doctor's (or the next Load's) to quarantine
		}
		if byRole[k.Role] == nil {
			byRole[k.Role] = map[string]*Summary{}
		}
		sm := summaryOf(a, st)
		byRole[k.Role][k.Method] = &sm
	}
	// Roles with no artifact left lose their index.
	if ents, err := os.ReadDir(filepath.Join(s.root, indexDir)); err == nil {
		for _, e := range ents {
			if r, ok := strings.CutSuffix(e.Name(), ".json"); ok && byRole[r] == nil && !strings.HasPrefix(e.Name(), tempPrefix) {
				byRole[r] = map[string]*Summary{}
			}
		}
	}
	roles := make([]string, 0, len(byRole))
	for r := range byRole {
		roles = append(roles, r)
	}
	sort.Strings(roles)
	for _, r := range roles {
		if err := os.MkdirAll(filepath.Join(s.root, indexDir), 0o755); err != nil {
			return 0, fmt.Errorf("registry: rebuild index: %w", writeErr(s.root, err))
		}
		if err := withLock(s.indexLock(r), func() error { return s.writeIndex(r, byRole[r]) }); err != nil {
			return 0, fmt.Errorf("registry: rebuild index of role %s: %w", r, writeErr(s.root, err))
		}
	}
	return len(keys), nil
}

// indexUsable reports whether data parses as an index file (tests, doctor).
func indexUsable(data []byte) bool {
	var f indexFile
	return json.NewDecoder(bytes.NewReader(data)).Decode(&f) == nil && f.Layout == Layout
}

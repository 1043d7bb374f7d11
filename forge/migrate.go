package forge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/artifactforge/forge/internal/jsonval"
	"github.com/artifactforge/forge/registry"
)

// MigrateReport says what Migrate copied.
type MigrateReport struct {
	From        string   `json:"from"`
	To          string   `json:"to"`
	Roles       int      `json:"roles"`
	Artifacts   int      `json:"artifacts"`
	Generations int      `json:"generations"` // kept generations copied, over every artifact
	Calls       int64    `json:"calls"`       // successes and failures the copied counters hold
	Knowledge   []string `json:"knowledge"`   // documents copied
	Replaced    bool     `json:"replaced"`    // the destination held records (--force)
	Quarantined int      `json:"quarantined"` // the source's pending quarantine entries, not copied
	Verified    bool     `json:"verified"`
}

// Migrate copies every role, every artifact with its kept generations, lifecycle and counters,
// and the knowledge documents of src into dst exactly as they are (nothing is regenerated), then
// verifies the copy through a fresh open of the destination (reopen): what another process would
// read. Everything is read from the source before anything is written, so a damaged source record
// stops the migration with the destination untouched. dst must hold no records unless force,
// which replaces the records of the same names and keeps the others (`forge store migrate`).
func Migrate(src, dst registry.Backend, force bool, reopen func() (registry.Backend, error)) (MigrateReport, error) {
	rep := MigrateReport{From: src.Location(), To: dst.Location()}
	imp, ok := dst.(registry.Importer)
	if !ok {
		return rep, fmt.Errorf("store migrate: the destination %s cannot import records: %w", dst.Location(), registry.ErrUnsupported)
	}
	dstDocs := storeDocs(dst)
	held, err := heldRecords(dst, dstDocs)
	if err != nil {
		return rep, fmt.Errorf("store migrate: look into the destination %s: %w", dst.Location(), err)
	}
	if held != "" {
		if !force {
			return rep, fmt.Errorf("store migrate: the destination %s is not empty (it holds %s); name an empty one, or pass --force to replace the records of the same names (the others are kept)", dst.Location(), held)
		}
		rep.Replaced = true
	}

	// Read the whole source first.
	snap, err := readStore(src)
	if err != nil {
		return rep, err
	}
	if m, ok := src.(registry.Maintainer); ok {
		if q, err := m.Quarantined(); err == nil {
			rep.Quarantined = len(q)
		}
	}

	// Write.
	partial := func(what string, err error) error {
		return fmt.Errorf("store migrate: copy %s into %s: %w; the destination now holds a partial copy: fix the cause and run the same command with --force (it replaces what was copied)", what, dst.Location(), err)
	}
	for _, r := range snap.roles {
		if err := imp.ImportRole(*r); err != nil {
			return rep, partial("role "+r.Role, err)
		}
		rep.Roles++
	}
	if err := importArtifacts(imp, snap.artifacts); err != nil {
		return rep, partial(err.what, err.err)
	}
	for _, art := range snap.artifacts {
		rep.Artifacts++
		rep.Generations += len(art.History)
		rep.Calls += art.SuccessCount + art.FailureCount
	}
	for _, d := range snap.docs {
		data := d.data
		if err := dstDocs.Modify(d.name, func([]byte) ([]byte, error) { return data, nil }); err != nil {
			return rep, partial("knowledge document "+d.name, err)
		}
		rep.Knowledge = append(rep.Knowledge, d.name)
	}
	if rep.Knowledge == nil {
		rep.Knowledge = []string{}
	}

	// Verify through a fresh open: what another process would read.
	fresh, err := reopen()
	if err != nil {
		return rep, fmt.Errorf("store migrate: copied, but reopening the destination to verify it failed: %w", err)
	}
	defer fresh.Close()
	got, err := readStore(fresh)
	if err != nil {
		return rep, fmt.Errorf("store migrate: copied, but reading the destination back failed: %w", err)
	}
	if err := snap.compare(got, force); err != nil {
		return rep, fmt.Errorf("store migrate: the copy in %s differs from the source: %w; run the same command with --force to copy again, and report it if it persists", dst.Location(), err)
	}
	rep.Verified = true
	return rep, nil
}

// importWorkers is how many artifacts are written at once: each write waits on its own
// durability (a directory store's fsyncs, a fleet store's acknowledgement), which the file system
// or the stream commits together for writes in flight.
const importWorkers = 8

type importError struct {
	what string
	err  error
}

// importArtifacts writes arts into imp with a few writers; it stops at the first failure and
// says which artifact it was.
func importArtifacts(imp registry.Importer, arts []*registry.Artifact) *importError {
	work := make(chan *registry.Artifact)
	errs := make(chan *importError, importWorkers) // each writer sends at most one
	var wg sync.WaitGroup
	for w := 0; w < importWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for a := range work {
				if err := imp.ImportArtifact(a); err != nil {
					errs <- &importError{"artifact " + a.Role + "." + a.Method, err}
					return
				}
			}
		}()
	}
feed:
	for _, a := range arts {
		select {
		case work <- a:
		case e := <-errs:
			errs <- e // put back for the report below
			break feed
		}
	}
	close(work)
	wg.Wait()
	select {
	case e := <-errs:
		return e
	default:
		return nil
	}
}

// heldRecords says what a store holds ("" when it is empty).
func heldRecords(b registry.Backend, docs registry.Docs) (string, error) {
	keys, err := b.List()
	if err != nil {
		return "", err
	}
	roles, err := b.Roles()
	if err != nil {
		return "", err
	}
	names, err := docs.Names()
	if err != nil {
		return "", err
	}
	var parts []string
	if len(roles) > 0 {
		parts = append(parts, fmt.Sprintf("%d roles", len(roles)))
	}
	if len(keys) > 0 {
		parts = append(parts, fmt.Sprintf("%d artifacts", len(keys)))
	}
	if len(names) > 0 {
		parts = append(parts, fmt.Sprintf("%d knowledge documents", len(names)))
	}
	return strings.Join(parts, ", "), nil
}

// storeSnapshot is everything a migration copies, as read from one store.
type storeSnapshot struct {
	location  string
	roles     []*registry.RoleRecord
	artifacts []*registry.Artifact
	summaries []registry.Summary
	docs      []doc
}

type doc struct {
	name string
	data []byte
}

// readStore reads every role, artifact (with the metrics merged in), summary and knowledge
// document of b. An artifact that cannot be read (damaged, another schema version) is an error:
// a migration copies everything or nothing.
func readStore(b registry.Backend) (*storeSnapshot, error) {
	snap := &storeSnapshot{location: b.Location()}
	var err error
	if snap.roles, err = b.Roles(); err != nil {
		return nil, fmt.Errorf("store migrate: read the roles of %s: %w", b.Location(), err)
	}
	keys, err := b.List()
	if err != nil {
		return nil, fmt.Errorf("store migrate: list the artifacts of %s: %w", b.Location(), err)
	}
	for _, k := range keys {
		art, err := b.Peek(k.Role, k.Method)
		if errors.Is(err, registry.ErrNotFound) {
			continue // removed since the listing
		}
		if err != nil {
			return nil, fmt.Errorf("store migrate: read artifact %s of %s: %w; nothing was copied: check the store with `forge doctor --store %s`, then migrate again", k, b.Location(), err, b.Location())
		}
		snap.artifacts = append(snap.artifacts, art)
	}
	if snap.summaries, err = b.Summaries(); err != nil {
		return nil, fmt.Errorf("store migrate: list the summaries of %s: %w", b.Location(), err)
	}
	docs := storeDocs(b)
	names, err := docs.Names()
	if err != nil {
		return nil, fmt.Errorf("store migrate: list the knowledge documents of %s: %w", b.Location(), err)
	}
	sort.Strings(names)
	for _, n := range names {
		data, _, err := docs.Read(n)
		if err != nil {
			return nil, fmt.Errorf("store migrate: read knowledge document %s of %s: %w", n, b.Location(), err)
		}
		if data != nil {
			snap.docs = append(snap.docs, doc{n, data})
		}
	}
	return snap, nil
}

// compare checks that got (the destination read back) holds every record of s as it was read.
// With extra allowed (--force into a store that held records), records got has beyond s are not
// differences.
func (s *storeSnapshot) compare(got *storeSnapshot, extra bool) error {
	gotRoles := map[string]*registry.RoleRecord{}
	for _, r := range got.roles {
		gotRoles[r.Role] = r
	}
	for _, r := range s.roles {
		g, ok := gotRoles[r.Role]
		if !ok {
			return fmt.Errorf("role %s is missing", r.Role)
		}
		if d := jsonDiff(r, g); d != "" {
			return fmt.Errorf("role %s: %s", r.Role, d)
		}
	}
	gotArts := map[registry.Key]*registry.Artifact{}
	for _, a := range got.artifacts {
		gotArts[registry.Key{Role: a.Role, Method: a.Method}] = a
	}
	for _, a := range s.artifacts {
		k := registry.Key{Role: a.Role, Method: a.Method}
		g, ok := gotArts[k]
		if !ok {
			return fmt.Errorf("artifact %s is missing", k)
		}
		if d := jsonDiff(a, g); d != "" {
			return fmt.Errorf("artifact %s: %s", k, d)
		}
	}
	gotSums := map[registry.Key]registry.Summary{}
	for _, sm := range got.summaries {
		gotSums[sm.Key()] = sm
	}
	for _, sm := range s.summaries {
		if sm.Err != nil {
			continue
		}
		g, ok := gotSums[sm.Key()]
		if !ok {
			return fmt.Errorf("artifact %s is missing from the listing (forge ls)", sm.Key())
		}
		if d := jsonDiff(sm, g); d != "" {
			return fmt.Errorf("artifact %s as listed (forge ls): %s", sm.Key(), d)
		}
	}
	gotDocs := map[string][]byte{}
	for _, d := range got.docs {
		gotDocs[d.name] = d.data
	}
	for _, d := range s.docs {
		g, ok := gotDocs[d.name]
		if !ok {
			return fmt.Errorf("knowledge document %s is missing", d.name)
		}
		if !bytes.Equal(d.data, g) {
			return fmt.Errorf("knowledge document %s: %d bytes in the source, %d in the destination, not the same", d.name, len(d.data), len(g))
		}
	}
	if !extra {
		switch {
		case len(got.roles) != len(s.roles):
			return fmt.Errorf("%d roles in the destination, %d in the source", len(got.roles), len(s.roles))
		case len(got.artifacts) != len(s.artifacts):
			return fmt.Errorf("%d artifacts in the destination, %d in the source", len(got.artifacts), len(s.artifacts))
		case len(got.docs) != len(s.docs):
			return fmt.Errorf("%d knowledge documents in the destination, %d in the source", len(got.docs), len(s.docs))
		}
	}
	return nil
}

// localFields are what each store keeps about its own files, not part of a record's content:
// the metrics journal stamps and the index's file stamp.
var localFields = []string{"metrics_applied", "stamp"}

// jsonDiff compares what two records say as JSON (jsonval.Equal, field by field), without the
// store-local fields, and names the first field that differs ("" when none does).
func jsonDiff(want, got any) string {
	w, err1 := jsonFields(want)
	g, err2 := jsonFields(got)
	if err1 != nil || err2 != nil {
		return fmt.Sprintf("cannot be compared: %v", errors.Join(err1, err2))
	}
	names := make([]string, 0, len(w)+len(g))
	for k := range w {
		names = append(names, k)
	}
	for k := range g {
		if _, ok := w[k]; !ok {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		wv, inW := w[k]
		gv, inG := g[k]
		if inW != inG || !jsonval.Equal(wv, gv) {
			return fmt.Sprintf("field %s is %s in the source and %s in the destination", k, short(wv), short(gv))
		}
	}
	return ""
}

func jsonFields(v any) (map[string]json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for _, f := range localFields {
		delete(m, f)
	}
	return m, nil
}

// short renders a field's value for a message, cut to a readable length.
func short(v json.RawMessage) string {
	if v == nil {
		return "absent"
	}
	s := string(v)
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

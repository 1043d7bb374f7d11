package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/artifactforge/forge/registry"
)

func init() { register(newStoreCmd) }

// newStoreCmd is the group of commands that work on a whole store.
func newStoreCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "store", Short: "Work on a whole store: copy it to another backend (migrate)"}
	cmd.AddCommand(newMigrateCmd(a))
	return cmd
}

func newMigrateCmd(a *app) *cobra.Command {
	var from, to string
	var force bool
	cmd := &cobra.Command{
		Use:   "migrate --from SPEC --to SPEC [--force]",
		Short: "Copy a store (roles, artifacts with their history and counters, knowledge) into another, and verify the copy",
		Long: `Migrate copies every role, every artifact with its kept generations, lifecycle and counters, and
the knowledge documents from one store into another, then reads the destination back and compares
it with what was copied. SPEC is a store directory or a URL (nats://HOST:PORT/NAME); copy a
directory store into the fleet store and back:

  forge store migrate --from ~/.local/state/forge --to nats://127.0.0.1:4222/forge
  forge store migrate --from nats://127.0.0.1:4222/forge --to ./forge-copy

Records are written exactly as they are (generation numbers, counters, times): nothing is
regenerated. The destination must be empty unless --force, which replaces the records of the same
names and keeps the others. Stop the processes that write to the source first: calls made during
the copy may be missed. What is local to each machine (the event log, compiled-code caches) is not
copied.`,
		Args: exactArgs(0),
		RunE: func(*cobra.Command, []string) error {
			if from == "" || to == "" {
				return usagef("store migrate: both --from and --to are needed (a store directory or a URL such as nats://127.0.0.1:4222/forge)")
			}
			if sameSpec(from, to) {
				return usagef("store migrate: --from and --to name the same store (%s); name another destination", from)
			}
			open := func(spec string, mustExist bool) (registry.Backend, error) {
				return registry.OpenBackend(spec, registry.OpenOptions{MustExist: mustExist, OnQuarantine: a.reportQuarantine,
					LocalDir: localDir(), ClientName: a.clientName()})
			}
			src, err := open(from, true)
			if err != nil {
				return fmt.Errorf("store migrate: open the source: %w", err)
			}
			defer src.Close()
			dst, err := open(to, false)
			if err != nil {
				return fmt.Errorf("store migrate: open the destination: %w", err)
			}
			defer dst.Close()
			rep, err := migrateStore(src, dst, force, func() (registry.Backend, error) { return open(to, true) })
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(struct {
					OK bool `json:"ok"`
					migrateReport
				}{true, rep})
			}
			rep.print(a.stdout)
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "the store to copy: a directory or a URL (nats://HOST:PORT/NAME)")
	cmd.Flags().StringVar(&to, "to", "", "the store to copy into: a directory (created if needed) or a URL")
	cmd.Flags().BoolVar(&force, "force", false, "copy into a destination that already holds records, replacing those of the same names")
	return cmd
}

// sameSpec reports whether two store specs name the same store as far as can be told without
// opening them: the same URL, or the same directory.
func sameSpec(a, b string) bool {
	if strings.Contains(a, "://") || strings.Contains(b, "://") {
		return a == b
	}
	pa, err1 := filepath.Abs(a)
	pb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && pa == pb
}

// migrateReport says what a migration copied.
type migrateReport struct {
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

func (r *migrateReport) print(w io.Writer) {
	fmt.Fprintf(w, "copied %s -> %s\n", r.From, r.To)
	fmt.Fprintf(w, "  roles:      %d\n", r.Roles)
	fmt.Fprintf(w, "  artifacts:  %d (%d kept generations, counters of %d calls)\n", r.Artifacts, r.Generations, r.Calls)
	fmt.Fprintf(w, "  knowledge:  %d documents", len(r.Knowledge))
	if len(r.Knowledge) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(r.Knowledge, ", "))
	}
	fmt.Fprintln(w)
	if r.Replaced {
		fmt.Fprintln(w, "  the destination held records: those of the same names were replaced, the others kept (--force)")
	}
	if r.Quarantined > 0 {
		fmt.Fprintf(w, "  not copied: %d quarantined records of the source (see `forge quarantine ls --store %s`)\n", r.Quarantined, r.From)
	}
	fmt.Fprintln(w, "verified: the destination, opened anew, reads back every role, artifact (history and counters) and knowledge document as copied")
}

// migrateStore copies src into dst and verifies the copy through a fresh open of the destination
// (reopen). Everything is read from the source before anything is written, so a damaged source
// record stops the migration with the destination untouched.
func migrateStore(src, dst registry.Backend, force bool, reopen func() (registry.Backend, error)) (migrateReport, error) {
	rep := migrateReport{From: src.Location(), To: dst.Location()}
	imp, ok := dst.(registry.Importer)
	if !ok {
		return rep, fmt.Errorf("store migrate: the destination %s cannot import records: %w", dst.Location(), registry.ErrUnsupported)
	}
	dstDocs := knowledgeOf(dst)
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
	docs := knowledgeOf(b)
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

// jsonDiff compares what two records say as JSON (map order ignored), without the store-local
// fields, and names the first field that differs ("" when none does).
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
		if !reflect.DeepEqual(w[k], g[k]) {
			return fmt.Sprintf("field %s is %s in the source and %s in the destination", k, short(w[k]), short(g[k]))
		}
	}
	return ""
}

func jsonFields(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	for _, f := range localFields {
		delete(m, f)
	}
	return m, nil
}

// short renders a field's value for a message, cut to a readable length.
func short(v any) string {
	if v == nil {
		return "absent"
	}
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

package learner

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// memDocs is an in-memory Docs whose Modify is a compare-and-swap loop on a revision, like a
// key-value bucket's: fn runs, then the write succeeds only if the document's revision is still
// the one fn saw, else fn runs again. beforeCAS, when set, runs once between fn and the swap: a
// concurrent writer injected at the worst moment.
type memDocs struct {
	mu          sync.Mutex
	docs        map[string]memDoc
	rev         int64
	quarantined map[string][]byte
	beforeCAS   func(name string)
	conflicts   int // swaps refused
}

type memDoc struct {
	data   []byte
	rev    int64
	exists bool
}

func newMemDocs() *memDocs {
	return &memDocs{docs: map[string]memDoc{}, quarantined: map[string][]byte{}}
}

func (m *memDocs) Names() ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for n, d := range m.docs {
		if d.exists {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

func (m *memDocs) Read(name string) ([]byte, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.docs[name]
	if !d.exists {
		return nil, "", nil
	}
	return bytes.Clone(d.data), "r" + strconv.FormatInt(d.rev, 10), nil
}

func (m *memDocs) Modify(name string, fn func(old []byte) ([]byte, error)) error {
	for {
		m.mu.Lock()
		cur := m.docs[name]
		hook := m.beforeCAS
		m.beforeCAS = nil
		m.mu.Unlock()
		var old []byte
		if cur.exists {
			old = bytes.Clone(cur.data)
		}
		data, err := fn(old)
		if err != nil {
			return err
		}
		if hook != nil {
			hook(name)
		}
		m.mu.Lock()
		if m.docs[name].rev != cur.rev {
			m.conflicts++
			m.mu.Unlock()
			continue
		}
		m.rev++
		m.docs[name] = memDoc{data: bytes.Clone(data), rev: m.rev, exists: true}
		m.mu.Unlock()
		return nil
	}
}

func (m *memDocs) Quarantine(name string, why error) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.docs[name]
	if !d.exists {
		return ""
	}
	m.quarantined[name] = d.data
	m.rev++
	m.docs[name] = memDoc{rev: m.rev}
	return "quarantine/" + name
}

// put writes a document behind the learner's back (damage, or a touch with the same bytes).
func (m *memDocs) put(name string, data []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rev++
	m.docs[name] = memDoc{data: bytes.Clone(data), rev: m.rev, exists: true}
}

// docsCase is a Docs under test with a way to write a document behind the learner's back and to
// see what was quarantined.
type docsCase struct {
	name string
	open func(t *testing.T) (d Docs, put func(name string, data []byte), quarantined func() []string)
}

func docsCases() []docsCase {
	return []docsCase{
		{name: "dir", open: func(t *testing.T) (Docs, func(string, []byte), func() []string) {
			dir := filepath.Join(t.TempDir(), Dir)
			var mu sync.Mutex
			var moved []string
			d := DirDocs(dir, func(path string, why error) string {
				mu.Lock()
				defer mu.Unlock()
				dst := path + ".q" + strconv.Itoa(len(moved))
				if err := os.Rename(path, dst); err != nil {
					t.Errorf("quarantine: %v", err)
				}
				moved = append(moved, filepath.Base(path)+": "+why.Error())
				return dst
			})
			put := func(name string, data []byte) {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			return d, put, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), moved...) }
		}},
		{name: "mem-cas", open: func(t *testing.T) (Docs, func(string, []byte), func() []string) {
			m := newMemDocs()
			return m, m.put, func() []string {
				m.mu.Lock()
				defer m.mu.Unlock()
				var out []string
				for n := range m.quarantined {
					out = append(out, n)
				}
				sort.Strings(out)
				return out
			}
		}},
	}
}

func openOn(t testing.TB, d Docs) *Store {
	t.Helper()
	s, err := OpenDocs(d, Options{Revalidate: -1})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCoreOnDocs runs the learner's core behaviours on the directory and on a compare-and-swap
// Docs: two Stores over the same documents (as two processes) see each other's records,
// confirmations and forgets; a duplicate confirms; noted lessons are promoted on Close; a damaged
// document is quarantined by a reader and by a writer, the other domains untouched.
func TestCoreOnDocs(t *testing.T) {
	for _, tc := range docsCases() {
		t.Run(tc.name, func(t *testing.T) {
			d, put, quarantined := tc.open(t)
			a, b := openOn(t, d), openOn(t, d)
			mustRecord(t, a, Entry{Content: "use host.Now, not time.Now", Domain: "forge", Category: Correction})
			mustRecord(t, a, Entry{Content: "parse dates with time.Parse", Domain: "clock"})
			hits, err := b.Recall(Query{Text: "time.Now"})
			if err != nil || len(hits) == 0 || hits[0].Content != "use host.Now, not time.Now" {
				t.Fatalf("the other store recalls %+v (%v)", hits, err)
			}
			if e, created, err := b.Record(Entry{Content: "USE host.Now, not time.Now ", Domain: "forge"}); err != nil || created || e.UseCount != 1 || e.Confidence != 0.2 {
				t.Fatalf("duplicate record: %+v created=%v (%v)", e, created, err)
			}
			if e, err := a.Confirm("forge", "use host.now, not time.now"); err != nil || e.Confidence != 0.3 || e.UseCount != 2 {
				t.Fatalf("confirm after the other store's confirmation: %+v (%v)", e, err)
			}
			if ds, _ := b.Domains(); strings.Join(ds, ",") != "clock,forge" {
				t.Fatalf("domains %q", ds)
			}
			if _, err := b.Forget("clock", "parse dates with time.parse"); err != nil {
				t.Fatal(err)
			}
			if es, _ := a.List("clock"); len(es) != 0 {
				t.Fatalf("forgotten entry still listed by the other store: %+v", es)
			}
			if _, err := a.Confirm("clock", "nothing"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("confirm of a missing entry: %v", err)
			}

			// The reflector.
			if err := a.Note(Entry{Content: "noted lesson", Domain: "clock"}); err != nil {
				t.Fatal(err)
			}
			if es, _ := b.List("clock"); len(es) != 0 {
				t.Fatalf("a noted lesson reached the documents before Close: %+v", es)
			}
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			if es, _ := b.List("clock"); len(es) != 1 || es[0].Content != "noted lesson" {
				t.Fatalf("after Close: %+v", es)
			}

			// Damage read by a reader, then met by a writer.
			put("bad.yaml", []byte("- content: [unclosed\n"))
			all, err := b.List("")
			if err != nil || len(all) != 2 {
				t.Fatalf("list with a damaged document: %+v (%v)", all, err)
			}
			if q := quarantined(); len(q) != 1 || !strings.HasPrefix(q[0], "bad.yaml") {
				t.Fatalf("quarantined %q", q)
			}
			put("clock.yaml", []byte("- reasoning: no content\n"))
			mustRecord(t, b, Entry{Content: "clock again", Domain: "clock"})
			if q := quarantined(); len(q) != 2 {
				t.Fatalf("the writer did not quarantine the damaged document: %q", q)
			}
			if es, _ := openOn(t, d).List(""); len(es) != 2 {
				t.Fatalf("after the second damage: %+v", es)
			}
		})
	}
}

// TestConcurrentStoresOnDocs is four Stores on one Docs (each its own flock descriptor on the
// directory, as separate processes have; swaps that may be refused on the CAS fake) recording and
// confirming in one domain at once: no update is lost.
func TestConcurrentStoresOnDocs(t *testing.T) {
	for _, tc := range docsCases() {
		t.Run(tc.name, func(t *testing.T) {
			d, _, _ := tc.open(t)
			const writers, each = 4, 10
			errs := make(chan error, writers)
			for w := range writers {
				go func() {
					s := openOn(t, d)
					for i := range each {
						if _, _, err := s.Record(Entry{Content: fmt.Sprintf("writer %d lesson %d", w, i), Domain: "shared"}); err != nil {
							errs <- err
							return
						}
						if _, _, err := s.Record(Entry{Content: "common lesson", Domain: "shared"}); err != nil {
							errs <- err
							return
						}
					}
					errs <- nil
				}()
			}
			for range writers {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			all, _ := openOn(t, d).List("shared")
			if len(all) != writers*each+1 {
				t.Fatalf("%d entries, want %d: an update was lost", len(all), writers*each+1)
			}
			for _, e := range all {
				if e.Content == "common lesson" && e.UseCount != writers*each-1 {
					t.Fatalf("common lesson confirmed %d times, want %d", e.UseCount, writers*each-1)
				}
			}
		})
	}
}

// TestCASConflictRetried injects a concurrent write between a Modify's read and its swap: the Docs
// refuses the swap and runs the learner's fn again on the new document, so neither write is lost
// and what the caller is told matches the second run.
func TestCASConflictRetried(t *testing.T) {
	m := newMemDocs()
	a, b := openOn(t, m), openOn(t, m)
	mustRecord(t, a, Entry{Content: "first", Domain: "go"})

	// Another writer adds a lesson while a records its own.
	m.beforeCAS = func(string) { mustRecord(t, b, Entry{Content: "from b", Domain: "go"}) }
	if _, created, err := a.Record(Entry{Content: "from a", Domain: "go"}); err != nil || !created {
		t.Fatalf("record under conflict: created=%v (%v)", created, err)
	}
	if m.conflicts != 1 {
		t.Fatalf("%d refused swaps, want 1 (the conflict was not injected)", m.conflicts)
	}
	if got := contentsOf(t, a, "go"); got != "first|from a|from b" {
		t.Fatalf("after the conflict: %s", got)
	}

	// The other writer records the very lesson a is adding: a's retry confirms it instead, and
	// says so.
	m.beforeCAS = func(string) { mustRecord(t, b, Entry{Content: "same lesson", Domain: "go"}) }
	e, created, err := a.Record(Entry{Content: "Same lesson", Domain: "go"})
	if err != nil || created || e.UseCount != 1 {
		t.Fatalf("record of a lesson the conflicting writer added: %+v created=%v (%v)", e, created, err)
	}

	// The reflector counts what its last run added.
	if err := a.Note(Entry{Content: "noted one", Domain: "go"}); err != nil {
		t.Fatal(err)
	}
	if err := a.Note(Entry{Content: "noted two", Domain: "go"}); err != nil {
		t.Fatal(err)
	}
	m.beforeCAS = func(string) { mustRecord(t, b, Entry{Content: "noted one", Domain: "go"}) }
	if n, err := a.Flush(); err != nil || n != 1 {
		t.Fatalf("flush under conflict promoted %d (%v), want 1", n, err)
	}
	if m.conflicts != 3 {
		t.Fatalf("%d refused swaps, want 3", m.conflicts)
	}
	if got := contentsOf(t, b, "go"); got != "first|from a|from b|noted one|noted two|same lesson" {
		t.Fatalf("at the end: %s", got)
	}
}

func contentsOf(t *testing.T, s *Store, domain string) string {
	t.Helper()
	es, err := s.List(domain)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Content)
	}
	sort.Strings(out)
	return strings.Join(out, "|")
}

// TestCacheByVersion: a recall decodes a document again only when it changed. An unchanged
// version keeps the cached index; a new version with the same bytes (a rewrite) keeps it too; new
// bytes are decoded.
func TestCacheByVersion(t *testing.T) {
	for _, tc := range docsCases() {
		t.Run(tc.name, func(t *testing.T) {
			d, put, _ := tc.open(t)
			s, other := openOn(t, d), openOn(t, d)
			mustRecord(t, s, Entry{Content: "alpha", Domain: "go"})
			ix := func() *index {
				t.Helper()
				if _, err := s.Recall(Query{Text: "alpha"}); err != nil {
					t.Fatal(err)
				}
				s.mu.Lock()
				defer s.mu.Unlock()
				return s.snaps["go.yaml"].ix
			}
			first := ix()
			if ix() != first {
				t.Fatal("an unchanged document was decoded again")
			}
			data, v, err := d.Read("go.yaml")
			if err != nil {
				t.Fatal(err)
			}
			put("go.yaml", data) // same bytes, new version
			if v2, err := docVersion(d, "go.yaml"); err != nil || v2 == v {
				t.Fatalf("the rewrite did not change the version (%q, %v)", v2, err)
			}
			if ix() != first {
				t.Fatal("a document with a new version and the same bytes was decoded again")
			}
			mustRecord(t, other, Entry{Content: "beta", Domain: "go"})
			if ix() == first {
				t.Fatal("a changed document was not read again")
			}
			if got := contentsOf(t, s, "go"); got != "alpha|beta" {
				t.Fatalf("after another store's write: %s", got)
			}
		})
	}
}

func docVersion(d Docs, name string) (string, error) {
	_, v, err := d.Read(name)
	return v, err
}

// TestRevalidateOnDocs: with a positive Revalidate, another store's write is seen only once the
// interval has passed (the cache answers meanwhile).
func TestRevalidateOnDocs(t *testing.T) {
	m := newMemDocs()
	s, err := OpenDocs(m, Options{Revalidate: 1 << 62})
	if err != nil {
		t.Fatal(err)
	}
	other := openOn(t, m)
	mustRecord(t, s, Entry{Content: "alpha", Domain: "go"})
	if _, err := s.List(""); err != nil {
		t.Fatal(err)
	}
	mustRecord(t, other, Entry{Content: "beta", Domain: "go"})
	if got := contentsOf(t, s, "go"); got != "alpha" {
		t.Fatalf("before the revalidation interval: %s", got)
	}
	s.o.Revalidate = -1
	if got := contentsOf(t, s, "go"); got != "alpha|beta" {
		t.Fatalf("after revalidation: %s", got)
	}
}

// TestDirDocs checks the directory Docs itself.
func TestDirDocs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "k")
	d := DirDocs(dir, nil)
	if names, err := d.Names(); err != nil || len(names) != 0 {
		t.Fatalf("names of a missing directory: %q (%v)", names, err)
	}
	if b, v, err := d.Read("go.yaml"); b != nil || v != "" || err != nil {
		t.Fatalf("read of a missing document: %q %q %v", b, v, err)
	}
	if err := d.Modify("go.yaml", func(old []byte) ([]byte, error) {
		if old != nil {
			t.Errorf("old of a missing document: %q", old)
		}
		return []byte("one\n"), nil
	}); err != nil {
		t.Fatalf("the first write (creating the directory): %v", err)
	}
	b, v1, err := d.Read("go.yaml")
	if err != nil || string(b) != "one\n" || v1 == "" {
		t.Fatalf("read: %q %q %v", b, v1, err)
	}
	boom := errors.New("boom")
	if err := d.Modify("go.yaml", func([]byte) ([]byte, error) { return []byte("lost"), boom }); !errors.Is(err, boom) {
		t.Fatalf("aborted modify: %v", err)
	}
	if b, v, _ := d.Read("go.yaml"); string(b) != "one\n" || v != v1 {
		t.Fatalf("an aborted modify wrote: %q %q", b, v)
	}
	if err := d.Modify("go.yaml", func(old []byte) ([]byte, error) { return append(old, "two\n"...), nil }); err != nil {
		t.Fatal(err)
	}
	if b, v, _ := d.Read("go.yaml"); string(b) != "one\ntwo\n" || v == v1 {
		t.Fatalf("after the second write: %q, version %q (was %q)", b, v, v1)
	}
	for _, bad := range []string{"", "..", "../x.yaml", "a/b.yaml", ".hidden.yaml", "go.lock"} {
		if err := d.Modify(bad, func([]byte) ([]byte, error) { return nil, nil }); err == nil {
			t.Errorf("modify accepted the name %q", bad)
		}
	}
	os.WriteFile(filepath.Join(dir, ".tmp.yaml"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("x"), 0o644)
	if names, _ := d.Names(); strings.Join(names, ",") != "a.yaml,go.yaml" {
		t.Fatalf("names: %q", names)
	}
	moved := d.Quarantine("a.yaml", errors.New("damaged"))
	if !strings.HasPrefix(moved, filepath.Join(dir, "a.yaml.damaged.")) {
		t.Fatalf("quarantined to %q", moved)
	}
	if b, _ := os.ReadFile(moved); string(b) != "x" {
		t.Fatalf("the quarantined file holds %q", b)
	}
	if b, v, err := d.Read("a.yaml"); b != nil || v != "" || err != nil {
		t.Fatalf("a quarantined document still reads: %q %q %v", b, v, err)
	}
}

// TestCopyDocs copies a directory's documents into the CAS fake and back into a new directory:
// every document arrives byte for byte (a damaged one too: migration does not judge), a document
// the destination held is replaced, and a Store on the copy lists what the original lists.
func TestCopyDocs(t *testing.T) {
	root := t.TempDir()
	src, err := Open(root, Options{Revalidate: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		mustRecord(t, src, Entry{Content: fmt.Sprintf("lesson %d", i), Domain: fmt.Sprintf("role%d", i%3), Reasoning: "ünïcode and\nnewlines"})
	}
	if _, err := src.Confirm("role1", "lesson 1"); err != nil {
		t.Fatal(err)
	}
	raw := []byte("- content: [not yaml\x00\xff")
	os.WriteFile(filepath.Join(src.Dir(), "damaged.yaml"), raw, 0o644)

	mem := newMemDocs()
	mem.put("role0.yaml", []byte("- content: stale\n"))
	n, err := CopyDocs(mem, src.Docs())
	if err != nil || n != 4 {
		t.Fatalf("copied %d (%v), want 4", n, err)
	}
	back := DirDocs(filepath.Join(t.TempDir(), Dir), nil)
	if n, err := CopyDocs(back, mem); err != nil || n != 4 {
		t.Fatalf("copied back %d (%v), want 4", n, err)
	}
	names, _ := src.Docs().Names()
	for _, name := range names {
		want, _, _ := src.Docs().Read(name)
		for _, d := range []Docs{mem, back} {
			got, v, err := d.Read(name)
			if err != nil || v == "" || !bytes.Equal(got, want) {
				t.Fatalf("%s in %T: %q (%v), want %q", name, d, got, err, want)
			}
		}
	}
	want, _ := src.List("")
	got, err := openOn(t, back).List("")
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) || len(got) != 5 {
		t.Fatalf("a store on the copy lists %+v (%v), want %+v", got, err, want)
	}
	if n, err := CopyDocs(mem, newMemDocs()); err != nil || n != 0 {
		t.Fatalf("copy of nothing: %d (%v)", n, err)
	}
	failing := errors.New("bucket unavailable")
	if _, err := CopyDocs(errDocs{failing}, mem); !errors.Is(err, failing) || !strings.Contains(err.Error(), "run the copy again") {
		t.Fatalf("copy into a failing Docs: %v", err)
	}
}

// errDocs fails every write.
type errDocs struct{ err error }

func (e errDocs) Names() ([]string, error)                          { return nil, nil }
func (e errDocs) Read(string) ([]byte, string, error)               { return nil, "", nil }
func (e errDocs) Quarantine(string, error) string                   { return "" }
func (e errDocs) Modify(string, func([]byte) ([]byte, error)) error { return e.err }

// slowDocs runs a hook inside every Modify, before the learner's fn: a writer that holds the
// writers' exclusion for a while.
type slowDocs struct {
	Docs
	inside func()
}

func (d slowDocs) Modify(name string, fn func([]byte) ([]byte, error)) error {
	return d.Docs.Modify(name, func(old []byte) ([]byte, error) {
		d.inside()
		return fn(old)
	})
}

// TestDamageReadDuringWrite: a recall that finds a damaged document waits for the writers'
// exclusion to confirm the damage while a writer of the same Store holds that exclusion and needs
// the Store's cache: neither waits for the other forever.
func TestDamageReadDuringWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), Dir)
	entered := make(chan struct{})
	var once sync.Once
	s := openOn(t, slowDocs{Docs: DirDocs(dir, nil), inside: func() {
		once.Do(func() {
			close(entered)
			time.Sleep(100 * time.Millisecond) // let the recall reach the lock
		})
	}})
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "go.yaml"), []byte("- content: [unclosed\n"), 0o644)
	done := make(chan error, 2)
	go func() {
		_, _, err := s.Record(Entry{Content: "written while damaged", Domain: "go"})
		done <- err
	}()
	go func() {
		<-entered
		_, err := s.Recall(Query{Text: "written"})
		done <- err
	}()
	for range 2 {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("a recall and a write of the same damaged document deadlocked")
		}
	}
	if got := contentsOf(t, s, "go"); got != "written while damaged" {
		t.Fatalf("after the damage: %s", got)
	}
}

package learner

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/artifactforge/forge/internal/storepath"
)

// Dir is the directory of the knowledge files inside a store root.
const Dir = "knowledge"

// Recall bounds.
const (
	DefaultLimit = 8
	MaxLimit     = 100
)

// ErrNotFound is returned for an entry a domain does not hold.
var ErrNotFound = errors.New("no such entry")

// ErrClosed is returned by a Store used after Close.
var ErrClosed = errors.New("learner: store is closed")

// Options tune Open and OpenDocs.
type Options struct {
	// Quarantine (Open only) moves a damaged domain file out of the way and says where it went.
	// Nil renames it next to itself as <file>.damaged.<UTC time>. Forge passes its store's
	// quarantine, so that `forge quarantine ls` and `forge doctor` report it like any other
	// damaged file. OpenDocs uses the Docs' own Quarantine.
	Quarantine func(path string, why error) (movedTo string)
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Revalidate is how often cached domain documents are compared with the Docs to see other
	// processes' writes (default one second; negative: on every recall).
	Revalidate time.Duration
	// MaxEntries caps the entries of one domain (0: DefaultMaxEntries; negative: no cap).
	MaxEntries int
	// MaxBytes caps one domain's document, estimated with EntrySize (0: DefaultMaxBytes;
	// negative: no cap). A document over ReadLimitFactor × MaxBytes is quarantined unread.
	MaxBytes int
	// MaxLessonBytes caps one lesson's content plus reasoning (0: DefaultMaxLessonBytes;
	// negative: no cap): Record refuses a longer one.
	MaxLessonBytes int
}

// Store is the knowledge of one forge store: its domain documents, in a directory (Open) or in
// any Docs (OpenDocs). It is safe for concurrent use by goroutines and processes.
type Store struct {
	d    Docs
	o    Options
	caps Caps

	mu      sync.Mutex
	dropped map[string]int   // by document name: entries this process's writes dropped over the caps
	notices []string         // documents set aside as over the read limit, said by Notices
	snaps   map[string]*snap // by document name
	checked time.Time        // last comparison of the cache with the Docs
	session []Entry          // noted by this process, promoted on Close
	sessIx  *index           // index of session, rebuilt when it changes
	closed  bool
}

// snap is a decoded domain document: its version ("" when unknown, e.g. just written to a Docs
// that does not say what it wrote), its bytes (a changed version with the same bytes is not
// decoded again) and its index.
type snap struct {
	version string
	data    []byte
	ix      *index
	over    int // entries of the document over the caps: not indexed, dropped at the next write
}

// Open opens (creating if needed) root/knowledge: OpenDocs(DirDocs(root/knowledge, o.Quarantine), o).
func Open(root string, o Options) (*Store, error) {
	if root == "" {
		return nil, errors.New("learner: empty store path: pass --store DIR or set $FORGE_STORE")
	}
	dir := filepath.Join(root, Dir)
	if err := storepath.MkdirAll(root, dir, 0o755); err != nil {
		return nil, fmt.Errorf("learner: create %s: %w (check the path and its permissions)", dir, err)
	}
	return OpenDocs(DirDocs(dir, o.Quarantine), o)
}

// OpenDocs opens the knowledge kept in d (a store backend's Knowledge(), or DirDocs).
func OpenDocs(d Docs, o Options) (*Store, error) {
	if d == nil {
		return nil, errors.New("learner: no knowledge documents given (a nil Docs): open a directory with Open or DirDocs")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Revalidate == 0 {
		o.Revalidate = time.Second
	}
	s := &Store{d: d, o: o, caps: capsOf(o), snaps: map[string]*snap{}, dropped: map[string]int{}}
	if dd, ok := d.(*dirDocs); ok {
		s.d = &dirDocs{dir: dd.dir, quarantine: dd.quarantine, readLimit: s.caps.ReadLimit(), notify: s.notice}
	}
	return s, nil
}

// Dir is the knowledge directory, "" when the Store is not on a directory.
func (s *Store) Dir() string {
	if dd, ok := s.d.(*dirDocs); ok {
		return dd.dir
	}
	return ""
}

// Docs is where the Store keeps its domain documents.
func (s *Store) Docs() Docs { return s.d }

// Query is a recall request.
type Query struct {
	Text          string   // matched against entries' content and reasoning
	Domains       []string // empty: every domain
	MinConfidence float64
	Limit         int // default DefaultLimit, at most MaxLimit
	// Allow, when set, is asked about every candidate before it is ranked: only the entries it
	// allows are recalled (forge's provenance filter).
	Allow func(*Entry) bool
}

// Hit is a recalled entry and its relevance.
type Hit struct {
	Entry
	Score float64 `json:"score"`
}

// Recall returns the entries most relevant to q.Text, best first: BM25 score, then confidence,
// then the most recently updated. An empty text ranks by confidence alone. Entries noted in this
// session but not yet promoted are recalled too.
func (s *Store) Recall(q Query) ([]Hit, error) {
	if q.Limit <= 0 {
		q.Limit = DefaultLimit
	}
	q.Limit = min(q.Limit, MaxLimit)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	ixs, err := s.indexesLocked(q.Domains)
	if err != nil {
		return nil, err
	}
	if six := s.sessionIndexLocked(q.Domains); six != nil {
		ixs = append(ixs, six)
	}
	terms := queryTerms(q.Text)
	st := statsFor(ixs, terms)
	k := q.Limit * 2 // room for duplicates between noted and stored lessons
	top := make([]cand, 0, k)
	worst := -1
	var scores []float64
	var touched []int32
	for _, ix := range ixs {
		if len(terms) == 0 {
			for i := range ix.entries {
				if e := &ix.entries[i]; e.Confidence >= q.MinConfidence && q.allows(top, worst, k, cand{e, 0}) {
					top, worst = appendTop(top, worst, cand{e, 0}, k)
				}
			}
			continue
		}
		if cap(scores) < len(ix.entries) {
			scores = make([]float64, len(ix.entries))
		}
		scores = scores[:len(ix.entries)]
		touched = ix.score(terms, st, scores, touched[:0])
		for _, d := range touched {
			e := &ix.entries[d]
			if sc := scores[d]; e.Confidence >= q.MinConfidence && q.allows(top, worst, k, cand{e, sc}) {
				top, worst = appendTop(top, worst, cand{e, sc}, k)
			}
			scores[d] = 0
		}
	}
	hits := make([]Hit, len(top))
	for i, c := range top {
		hits[i] = Hit{Entry: *c.e, Score: c.score}
	}
	sort.SliceStable(hits, func(i, j int) bool { return better(hits[i], hits[j]) })
	hits = dedupe(hits)
	if len(hits) > q.Limit {
		hits = hits[:q.Limit]
	}
	return hits, nil
}

// allows asks q.Allow about a candidate only when it would enter the top k, so that the filter
// costs a few calls per recall rather than one per matching entry.
func (q *Query) allows(top []cand, worst, k int, c cand) bool {
	if q.Allow == nil {
		return true
	}
	if len(top) >= k && !betterCand(c, top[worst]) {
		return false // appendTop would not keep it anyway
	}
	return q.Allow(c.e)
}

// cand is a recall candidate.
type cand struct {
	e     *Entry
	score float64
}

// betterCand is the ranking order: score, then confidence, then the latest update, then content.
func betterCand(a, b cand) bool {
	if d := a.score - b.score; d > 1e-9 || d < -1e-9 {
		return d > 0
	}
	if a.e.Confidence != b.e.Confidence {
		return a.e.Confidence > b.e.Confidence
	}
	if !a.e.UpdatedAt.Equal(b.e.UpdatedAt) {
		return a.e.UpdatedAt.After(b.e.UpdatedAt)
	}
	return a.e.Content < b.e.Content
}

// better is the ranking order of hits.
func better(a, b Hit) bool {
	if d := a.Score - b.Score; d > 1e-9 || d < -1e-9 {
		return d > 0
	}
	if a.Confidence != b.Confidence {
		return a.Confidence > b.Confidence
	}
	if !a.UpdatedAt.Equal(b.UpdatedAt) {
		return a.UpdatedAt.After(b.UpdatedAt)
	}
	return a.Content < b.Content
}

// appendTop keeps the best k hits; worst is the index of the worst kept one once hits is full
// (-1 before), found again only when it is replaced (k is small: linear is fine).
func appendTop(hits []cand, worst int, h cand, k int) ([]cand, int) {
	if len(hits) < k {
		hits = append(hits, h)
		if len(hits) < k {
			return hits, -1
		}
	} else if betterCand(h, hits[worst]) {
		hits[worst] = h
	} else {
		return hits, worst
	}
	worst = 0
	for i := 1; i < len(hits); i++ {
		if betterCand(hits[worst], hits[i]) {
			worst = i
		}
	}
	return hits, worst
}

// dedupe drops a hit whose domain and content an earlier (better) hit has: a noted entry that is
// also stored.
func dedupe(hits []Hit) []Hit {
	out := hits[:0]
	for _, h := range hits {
		dup := false
		for _, o := range out {
			if strings.EqualFold(o.Domain, h.Domain) && sameContent(o.Content, h.Content) {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, h)
		}
	}
	return out
}

// List returns the entries of domain (every domain when empty), by domain then descending
// confidence.
func (s *Store) List(domain string) ([]Entry, error) {
	var ds []string
	if domain != "" {
		ds = []string{domain}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	ixs, err := s.indexesLocked(ds)
	if err != nil {
		return nil, err
	}
	out := []Entry{}
	for _, ix := range ixs {
		out = append(out, ix.entries...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Domain != out[j].Domain {
			return out[i].Domain < out[j].Domain
		}
		return out[i].Confidence > out[j].Confidence
	})
	return out, nil
}

// Record stores e in its domain; an entry with the same content (ignoring case) is confirmed
// instead. It returns the stored entry and whether it is new.
func (s *Store) Record(e Entry) (Entry, bool, error) {
	if err := e.validate(); err != nil {
		return Entry{}, false, err
	}
	if err := s.caps.checkLesson(e); err != nil {
		return Entry{}, false, err
	}
	now := s.o.Now().UTC()
	var out Entry
	created := false
	err := s.modify(e.Domain, func(entries []Entry) ([]Entry, error) {
		created = false // fn runs again when a Docs retries its Modify
		for i := range entries {
			if sameContent(entries[i].Content, e.Content) {
				if e.Provenance() == FromAgent {
					entries[i], _ = entries[i].confirmAs(now, e.Client) // an agent's counts once
				} else {
					entries[i] = entries[i].Confirm(now)
				}
				entries[i].adopt(e)
				out = entries[i]
				return entries, nil
			}
		}
		if e.CreatedAt.IsZero() {
			e.CreatedAt = now
		}
		e.UpdatedAt = now
		created, out = true, e
		return append(entries, e), nil
	})
	return out, created, err
}

// Confirm raises the confidence of domain's entry with content (ignoring case).
func (s *Store) Confirm(domain, content string) (Entry, error) {
	return s.confirm(domain, content, nil)
}

// ErrCounted: the client's confirmation of a lesson does not count again (ConfirmAs).
var ErrCounted = errors.New("this client already counted for the lesson")

// ConfirmAs is Confirm by an agent's client ("" the anonymous one): it counts once per client,
// and never for the client that recorded the lesson; one that does not count changes nothing and
// returns the entry with ErrCounted.
func (s *Store) ConfirmAs(domain, content, client string) (Entry, error) {
	return s.confirm(domain, content, &client)
}

func (s *Store) confirm(domain, content string, client *string) (Entry, error) {
	now := s.o.Now().UTC()
	var out Entry
	err := s.modify(domain, func(entries []Entry) ([]Entry, error) {
		for i := range entries {
			if sameContent(entries[i].Content, content) {
				if client == nil {
					entries[i] = entries[i].Confirm(now)
				} else if e, ok := entries[i].confirmAs(now, *client); ok {
					entries[i] = e
				} else {
					out = e
					return nil, ErrCounted
				}
				out = entries[i]
				return entries, nil
			}
		}
		return nil, fmt.Errorf("learner: domain %q: %w with content %q; list them with `forge knowledge ls --domain %s`", domain, ErrNotFound, content, domain)
	})
	return out, err
}

// Forget removes domain's entry with content (ignoring case).
func (s *Store) Forget(domain, content string) (Entry, error) {
	var out Entry
	err := s.modify(domain, func(entries []Entry) ([]Entry, error) {
		for i := range entries {
			if sameContent(entries[i].Content, content) {
				out = entries[i]
				return append(entries[:i:i], entries[i+1:]...), nil
			}
		}
		return nil, fmt.Errorf("learner: domain %q: %w with content %q; list them with `forge knowledge ls --domain %s`", domain, ErrNotFound, content, domain)
	})
	return out, err
}

// Note keeps a lesson learned by this process: it is recalled at once, and promoted to its domain
// file by the reflector on Flush or Close. Empty lessons are ignored.
func (s *Store) Note(e Entry) error {
	if strings.TrimSpace(e.Content) == "" {
		return nil
	}
	if err := e.validate(); err != nil {
		return err
	}
	if err := s.caps.checkLesson(e); err != nil {
		return err
	}
	now := s.o.Now().UTC()
	e.CreatedAt, e.UpdatedAt = now, now
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	for _, n := range s.session {
		if strings.EqualFold(n.Domain, e.Domain) && sameContent(n.Content, e.Content) {
			return nil
		}
	}
	s.session = append(s.session, e)
	s.sessIx = nil
	return nil
}

// Flush promotes the lessons noted so far (see Reflect).
func (s *Store) Flush() (promoted int, err error) {
	s.mu.Lock()
	noted := s.session
	s.session, s.sessIx = nil, nil
	s.mu.Unlock()
	n, err := s.Reflect(noted)
	if err != nil {
		// Keep what was not written for the next try.
		s.mu.Lock()
		s.session = append(noted, s.session...)
		s.sessIx = nil
		s.mu.Unlock()
	}
	return n, err
}

// Close promotes the noted lessons and closes the store.
func (s *Store) Close() error {
	_, err := s.Flush()
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return err
}

// Reflect is the reflector: it records each lesson that is not empty and not already stored in
// its domain (ignoring case), at the confidence it was noted with, and returns how many it added.
// Stored lessons are left as they are: seeing a lesson again in a session is not evidence that
// it helped (Confirm is).
func (s *Store) Reflect(lessons []Entry) (int, error) {
	byDomain := map[string][]Entry{}
	var order []string
	for _, e := range lessons {
		if strings.TrimSpace(e.Content) == "" {
			continue
		}
		if err := e.validate(); err != nil {
			return 0, err
		}
		f, _ := DomainFile(e.Domain)
		if _, ok := byDomain[f]; !ok {
			order = append(order, f)
		}
		byDomain[f] = append(byDomain[f], e)
	}
	added := 0
	for _, f := range order {
		batch := byDomain[f]
		k := 0 // fn runs again when a Docs retries its Modify: count the last run
		err := s.modify(batch[0].Domain, func(entries []Entry) ([]Entry, error) {
			k = 0
		next:
			for _, e := range batch {
				for i := range entries {
					if sameContent(entries[i].Content, e.Content) {
						entries[i].adopt(e)
						continue next
					}
				}
				entries = append(entries, e)
				k++
			}
			return entries, nil
		})
		if err != nil {
			return added, err
		}
		added += k
	}
	return added, nil
}

// Domains lists the domains that have a file.
func (s *Store) Domains() ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ixs, err := s.indexesLocked(nil)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, ix := range ixs {
		if len(ix.entries) > 0 {
			out = append(out, ix.entries[0].Domain)
		}
	}
	return out, nil
}

// modify is a read-modify-write of one domain document that no concurrent modify loses (the
// Docs' Modify); fn may run more than once, each time with a fresh copy of the entries.
func (s *Store) modify(domain string, fn func([]Entry) ([]Entry, error)) error {
	name, err := DomainFile(domain)
	if err != nil {
		return err
	}
	var (
		entries []Entry
		data    []byte
		dropped int
	)
	write := func(old []byte) ([]byte, error) {
		cur := s.entriesOf(name, old)
		next, err := fn(cur)
		if err != nil {
			return nil, err
		}
		next, dropped = s.caps.Trim(next)
		for i := range next {
			next[i].Domain = strings.TrimSpace(domain)
		}
		var buf bytes.Buffer
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(next); err != nil {
			return nil, fmt.Errorf("learner: encode domain %s: %w", domain, err)
		}
		entries, data = next, buf.Bytes()
		return data, nil
	}
	var version string
	if vm, ok := s.d.(versionedModifier); ok {
		version, err = vm.modifyVersion(name, write)
	} else {
		err = s.d.Modify(name, write)
	}
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.snaps[name] = &snap{version: version, data: data, ix: buildIndex(entries)}
	s.dropped[name] += dropped
	s.mu.Unlock()
	return nil
}

// entriesOf returns a copy of the entries of document name as a writer read it: from the cache
// when old is the cached document's bytes, else decoded. A damaged document is quarantined (the
// writer holds the right to replace it) and reads as empty.
func (s *Store) entriesOf(name string, old []byte) []Entry {
	if old == nil {
		return nil
	}
	s.mu.Lock()
	sn := s.snaps[name]
	s.mu.Unlock()
	if sn != nil && sn.over == 0 && bytes.Equal(sn.data, old) {
		return append([]Entry(nil), sn.ix.entries...)
	}
	entries, perr := s.decodeDoc(name, old)
	if perr != nil {
		s.quarantine(name, perr)
		return nil
	}
	return entries
}

// decodeDoc decodes document name, or says why it is damaged: over the read limit (not decoded),
// or not a valid list of entries.
func (s *Store) decodeDoc(name string, b []byte) ([]Entry, error) {
	if lim := s.caps.ReadLimit(); lim > 0 && int64(len(b)) > lim {
		return nil, &OversizeError{Document: name, Size: int64(len(b)), Limit: lim}
	}
	return decode(b)
}

// quarantine sets a damaged document aside and, when it was over the read limit, keeps the
// message for Notices.
func (s *Store) quarantine(name string, why error) {
	to := s.d.Quarantine(name, why)
	var oe *OversizeError
	if errors.As(why, &oe) {
		s.notice(oe, to)
	}
}

// notice keeps the message of a document set aside as over the read limit.
func (s *Store) notice(oe *OversizeError, movedTo string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notices = append(s.notices, fmt.Sprintf("%s (moved to %s)", oe.Error(), movedTo))
}

// decode parses a domain file: a YAML list of entries, each with a content.
func decode(b []byte) ([]Entry, error) {
	var entries []Entry
	if err := yaml.Unmarshal(b, &entries); err != nil {
		return nil, fmt.Errorf("knowledge file does not parse: %w", err)
	}
	for i, e := range entries {
		if strings.TrimSpace(e.Content) == "" {
			return nil, fmt.Errorf("knowledge file entry %d has no content", i+1)
		}
		if e.Confidence < 0 || e.Confidence > MaxConfidence {
			return nil, fmt.Errorf("knowledge file entry %d has confidence %v outside [0, 1]", i+1, e.Confidence)
		}
	}
	return entries, nil
}

// indexesLocked returns the indexes of domains (all when empty), refreshing those whose document
// changed. s.mu is held.
func (s *Store) indexesLocked(domains []string) ([]*index, error) {
	now := time.Now()
	fresh := s.o.Revalidate < 0 || now.Sub(s.checked) >= s.o.Revalidate
	var names []string
	if len(domains) == 0 {
		if fresh {
			all, err := s.d.Names()
			if err != nil {
				return nil, fmt.Errorf("learner: list the knowledge documents: %w", err)
			}
			seen := map[string]bool{}
			for _, n := range all {
				if strings.HasSuffix(n, ".yaml") && !seen[n] {
					seen[n] = true
					names = append(names, n)
				}
			}
			sort.Strings(names)
			for n := range s.snaps {
				if !seen[n] {
					delete(s.snaps, n)
				}
			}
		} else {
			for n := range s.snaps {
				names = append(names, n)
			}
			sort.Strings(names)
		}
	} else {
		for _, d := range domains {
			n, err := DomainFile(d)
			if err != nil {
				return nil, err
			}
			names = append(names, n)
		}
	}
	out := make([]*index, 0, len(names))
	for _, n := range names {
		sn := s.snaps[n]
		if sn == nil || fresh {
			var err error
			if sn, err = s.refreshLocked(n, sn); err != nil {
				return nil, err
			}
		}
		if sn != nil {
			out = append(out, sn.ix)
		}
	}
	if fresh {
		s.checked = now
	}
	return out, nil
}

// errSettled aborts the Modify that only checks a damaged document under the writers' exclusion.
var errSettled = errors.New("learner: checked (nothing to write)")

// refreshLocked rereads document n when it changed since sn (decoding it only when its bytes
// changed); nil means it does not exist. s.mu is held (and released while a damaged document is
// checked under the writers' exclusion, since a writer holding that takes s.mu).
func (s *Store) refreshLocked(n string, sn *snap) (*snap, error) {
	if st, ok := s.d.(stamper); ok && sn != nil && sn.version != "" {
		v, err := st.stamp(n)
		if err != nil {
			return nil, err
		}
		if v == "" {
			delete(s.snaps, n)
			return nil, nil
		}
		if v == sn.version {
			return sn, nil
		}
	}
	data, v, err := s.d.Read(n)
	var oe *OversizeError
	if errors.As(err, &oe) {
		err, data, v = nil, nil, "oversize" // quarantined below, under the writers' exclusion
	}
	if err != nil {
		return nil, fmt.Errorf("learner: read knowledge document %s: %w", n, err)
	}
	if data == nil && v == "" {
		delete(s.snaps, n)
		return nil, nil
	}
	if sn != nil && oe == nil && (v != "" && v == sn.version || bytes.Equal(data, sn.data)) {
		if sn.version != v {
			sn = &snap{version: v, data: sn.data, ix: sn.ix, over: sn.over}
			s.snaps[n] = sn
		}
		return sn, nil
	}
	entries, perr := s.decodeDoc(n, data)
	if oe != nil {
		perr = oe
	}
	if perr != nil {
		// Confirm under the writers' exclusion (a writer may have replaced the document), then
		// quarantine.
		var fixed []byte
		s.mu.Unlock()
		err := s.d.Modify(n, func(old []byte) ([]byte, error) {
			fixed = nil
			if old == nil {
				return nil, errSettled
			}
			es, perr2 := s.decodeDoc(n, old)
			if perr2 != nil {
				s.quarantine(n, perr2)
				return nil, errSettled
			}
			fixed, entries = old, es
			return nil, errSettled
		})
		s.mu.Lock()
		if err != nil && !errors.Is(err, errSettled) {
			return nil, fmt.Errorf("learner: check damaged knowledge document %s: %w", n, err)
		}
		if fixed == nil {
			delete(s.snaps, n)
			return nil, nil
		}
		data, v = fixed, "" // the version of what was checked is not known: the next refresh compares bytes
	}
	kept, over := s.caps.Trim(entries)
	sn = &snap{version: v, data: data, ix: buildIndex(kept), over: over}
	s.snaps[n] = sn
	return sn, nil
}

// sessionIndexLocked indexes the noted lessons of domains (all when empty).
func (s *Store) sessionIndexLocked(domains []string) *index {
	if len(s.session) == 0 {
		return nil
	}
	if len(domains) == 0 {
		if s.sessIx == nil {
			s.sessIx = buildIndex(s.session)
		}
		return s.sessIx
	}
	var sel []Entry
	for _, e := range s.session {
		for _, d := range domains {
			if strings.EqualFold(strings.TrimSpace(d), e.Domain) {
				sel = append(sel, e)
				break
			}
		}
	}
	if len(sel) == 0 {
		return nil
	}
	return buildIndex(sel)
}

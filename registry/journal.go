package registry

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/artifactforge/forge/internal/storepath"
)

// The metrics journal. Call outcomes do not rewrite artifact files: a Recorder's flush appends one
// record per touched artifact to its own journal, metrics/<journal>.jsonl, with a single write and
// a single fsync. A record is a delta (calls, counters, recent outcome letters, the last failure)
// numbered by a sequence that grows within its journal. Readers merge the records into what the
// artifact and role files hold (Load, Update, Role, the index listings), so counters, health and
// the candidate -> durable promotion read exactly as if the flush had written the files.
//
// Compaction folds a journal into the files: under each artifact's (and role's) lock it adds the
// records the file has not applied yet and stamps the file with "metrics_applied": {journal: seq},
// the highest sequence of that journal it holds. A record is applied iff its seq is above the
// file's stamp for its journal, so a compaction that crashes midway and runs again, or an Update
// that folded part of a live journal, never counts a record twice; the journal is removed only
// after every record has been folded. Stamps of journals that no longer exist are dropped on the
// next write of the file.
//
// A journal is owned by the process that writes it, which holds its flock for as long as it
// appends; a journal whose lock can be taken is sealed (its writer closed it, rotated it, or
// died) and may be compacted by any process. Journals are created under a temp name, locked, then
// renamed into place, so a compactor never sees an unlocked live journal.

const (
	compactWorkers = 8
	metricsDir     = "metrics"
	journalSuffix  = ".jsonl"
	// JournalMaxBytes and JournalMaxAge bound a live journal: past either, its writer seals it and
	// compacts it in the background.
	JournalMaxBytes = 4 << 20
	JournalMaxAge   = 30 * time.Second
	// CompactAtJournals is how many journals may wait in metrics/ before a closing Recorder
	// compacts them itself (short-lived processes such as `forge call` each leave one).
	CompactAtJournals = 32
	goneFor           = 10 * time.Minute
)

// journalRecord is one line of a journal.
type journalRecord struct {
	Seq    int64     `json:"seq"`
	Role   string    `json:"role"`
	Method string    `json:"method"`
	At     time.Time `json:"at"`
	Calls  int64     `json:"calls"`
	S      int64     `json:"s,omitempty"` // successes
	F      int64     `json:"f,omitempty"` // failures, of which:
	I      int64     `json:"i,omitempty"` // intrinsic
	A      int64     `json:"a,omitempty"` // adaptive
	E      int64     `json:"e,omitempty"` // extrinsic
	C      int64     `json:"c,omitempty"` // caller
	Dur    int64     `json:"dur,omitempty"`
	Max    int64     `json:"max,omitempty"`
	Recent string    `json:"recent,omitempty"`
	Gen    int64     `json:"gen,omitempty"` // the generation Recent and the last failure are of (0: not known)
	Class  string    `json:"class,omitempty"`
	Reason string    `json:"reason,omitempty"`
}

func (r *journalRecord) delta() delta {
	d := delta{c: Counters{SuccessCount: r.S, FailureCount: r.F, IntrinsicFailureCount: r.I, AdaptiveFailureCount: r.A,
		ExtrinsicFailureCount: r.E, CallerFailureCount: r.C, TotalDurationNanos: r.Dur, MaxDurationNanos: r.Max},
		calls: r.Calls, recent: []byte(r.Recent), lastClass: r.Class, lastReason: r.Reason, gen: int(r.Gen)}
	// A line keeps the window's letters, not its counts: what the directory store's merge needs.
	d.gcalls = int64(len(d.recent))
	for _, l := range d.recent {
		if l != 's' {
			d.gfails++
		}
	}
	return d
}

// appendRecord renders one record as a journal line without reflection (the flush encodes one
// per touched artifact).
func appendRecord(b []byte, seq int64, k Key, at time.Time, d *delta) []byte {
	b = append(b, `{"seq":`...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `,"role":"`...)
	b = append(b, k.Role...) // names are [a-z0-9_]: no escaping needed
	b = append(b, `","method":"`...)
	b = append(b, k.Method...)
	b = append(b, `","at":"`...)
	b = at.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","calls":`...)
	b = strconv.AppendInt(b, d.calls, 10)
	num := func(name string, v int64) {
		if v != 0 {
			b = append(b, `,"`...)
			b = append(b, name...)
			b = append(b, `":`...)
			b = strconv.AppendInt(b, v, 10)
		}
	}
	num("s", d.c.SuccessCount)
	num("f", d.c.FailureCount)
	num("i", d.c.IntrinsicFailureCount)
	num("a", d.c.AdaptiveFailureCount)
	num("e", d.c.ExtrinsicFailureCount)
	num("c", d.c.CallerFailureCount)
	num("dur", d.c.TotalDurationNanos)
	num("max", d.c.MaxDurationNanos)
	if len(d.recent) > 0 {
		b = append(b, `,"recent":"`...)
		b = append(b, d.recent...) // outcome letters
		b = append(b, '"')
	}
	num("gen", int64(d.gen))
	if d.lastClass != "" {
		b = append(b, `,"class":"`...)
		b = append(b, d.lastClass...)
		b = append(b, '"')
		reason, _ := json.Marshal(d.lastReason)
		b = append(b, `,"reason":`...)
		b = append(b, reason...)
	}
	return append(b, "}\n"...)
}

// ovRec is one journal record held in memory until the files have applied it.
type ovRec struct {
	j   string
	seq int64
	at  time.Time
	d   delta
}

// overlay is what the journals add to the files, as far as this process has read them.
type overlay struct {
	byKey  map[Key][]ovRec
	byRole map[string][]ovRec
	tails  map[string]int64 // journal -> bytes consumed
	own    map[string]bool  // live journals this process writes: never read back from disk
	// gone are journals seen removed (compacted): a refresh that listed one before its removal
	// must not add its records back after another refresh dropped them (their files hold them).
	// Entries are forgotten after goneFor (a refresh's read of a journal takes far less).
	gone map[string]time.Time
	// bad counts journal lines that did not parse (a torn last write of a crashed writer).
	bad int64
}

func newOverlay() *overlay {
	return &overlay{byKey: map[Key][]ovRec{}, byRole: map[string][]ovRec{}, tails: map[string]int64{}, own: map[string]bool{}, gone: map[string]time.Time{}}
}

func (o *overlay) add(r ovRec, k Key) {
	o.byKey[k] = append(o.byKey[k], r)
	o.byRole[k.Role] = append(o.byRole[k.Role], r)
}

// dropJournal forgets a journal that was compacted and removed.
func (o *overlay) dropJournal(j string) {
	delete(o.tails, j)
	o.gone[j] = time.Now()
	for k, recs := range o.byKey {
		if out := dropJ(recs, j); len(out) == 0 {
			delete(o.byKey, k)
		} else {
			o.byKey[k] = out
		}
	}
	for r, recs := range o.byRole {
		if out := dropJ(recs, j); len(out) == 0 {
			delete(o.byRole, r)
		} else {
			o.byRole[r] = out
		}
	}
}

// dropJ returns recs without journal j's records, in a new slice: callers may hold recs outside
// the overlay lock (copy on write).
func dropJ(recs []ovRec, j string) []ovRec {
	var out []ovRec
	for _, r := range recs {
		if r.j != j {
			out = append(out, r)
		}
	}
	return out
}

// pendingFor returns the records a file stamped applied has not applied yet, oldest first.
func pendingFor(recs []ovRec, applied map[string]int64) []ovRec {
	var out []ovRec
	for _, r := range recs {
		if r.seq > applied[r.j] {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, k int) bool {
		if !out[i].at.Equal(out[k].at) {
			return out[i].at.Before(out[k].at)
		}
		if out[i].j != out[k].j {
			return out[i].j < out[k].j
		}
		return out[i].seq < out[k].seq
	})
	// A record is one (journal, seq): should it be held twice, it still counts once.
	w := 0
	for i := range out {
		if w > 0 && out[w-1].j == out[i].j && out[w-1].seq == out[i].seq {
			continue
		}
		out[w] = out[i]
		w++
	}
	return out[:w]
}

// mergeArtifact returns a with the pending records applied (a itself if there are none); the
// result shares a's code and history.
func mergeArtifact(a *Artifact, recs []ovRec) *Artifact {
	p := pendingFor(recs, a.MetricsApplied)
	if len(p) == 0 {
		return a
	}
	m := *a
	for i := range p {
		p[i].d.applyTo(&m, p[i].at)
	}
	return &m
}

// mergeRole returns rec with the pending usage added.
func mergeRole(rec *RoleRecord, recs []ovRec) *RoleRecord {
	p := pendingFor(recs, rec.MetricsApplied)
	if len(p) == 0 {
		return rec
	}
	m := *rec
	for _, r := range p {
		m.UsageCount += r.d.calls
		if m.LastUsedAt == nil || r.at.After(*m.LastUsedAt) {
			t := r.at
			m.LastUsedAt = &t
		}
	}
	return &m
}

// foldStamps returns the stamps a file gets when recs are folded into it: the highest folded seq
// per journal, and no stamp for a journal that no longer exists (present is nil when unknown).
func foldStamps(old map[string]int64, recs []ovRec, present map[string]bool) map[string]int64 {
	out := map[string]int64{}
	for j, seq := range old {
		if present == nil || present[j] {
			out[j] = seq
		}
	}
	for _, r := range recs {
		if r.seq > out[r.j] {
			out[r.j] = r.seq
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func (s *Store) metricsPath() string { return filepath.Join(s.root, metricsDir) }

// refreshOverlay reads what other processes appended to their journals since the last refresh,
// and forgets journals that were compacted away. It returns the journals that exist now.
func (s *Store) refreshOverlay() (map[string]bool, error) {
	// One refresh at a time: a listing older than another refresh's must not decide that a
	// journal that refresh has just read is gone (that dropped live journals' stamps).
	s.refreshMu.Lock()
	defer s.refreshMu.Unlock()
	ents, err := os.ReadDir(s.metricsPath())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("registry: list %s: %w", s.metricsPath(), err)
	}
	present := map[string]bool{}
	type todo struct {
		j   string
		off int64
	}
	var reads []todo
	s.om.Lock()
	for _, e := range ents {
		j, ok := strings.CutSuffix(e.Name(), journalSuffix)
		if !ok || e.IsDir() || strings.HasPrefix(e.Name(), tempPrefix) {
			continue
		}
		if _, g := s.ov.gone[j]; g {
			continue // compacted; a file of that name now is an empty one a late lock attempt created
		}
		present[j] = true
		if !s.ov.own[j] {
			reads = append(reads, todo{j, s.ov.tails[j]})
		}
	}
	for j := range s.ov.tails {
		if !present[j] && !s.ov.own[j] {
			s.ov.dropJournal(j)
		}
	}
	for j, at := range s.ov.gone {
		if time.Since(at) > goneFor {
			delete(s.ov.gone, j)
		}
	}
	s.om.Unlock()
	for _, t := range reads {
		recs, n, bad, err := readJournal(filepath.Join(s.metricsPath(), t.j+journalSuffix), t.j, t.off)
		if errors.Is(err, fs.ErrNotExist) {
			delete(present, t.j)
			continue
		}
		if err != nil {
			return nil, err
		}
		s.om.Lock()
		_, g := s.ov.gone[t.j]
		if cur, ok := s.ov.tails[t.j]; !g && cur == t.off && (ok || t.off == 0) { // not consumed or dropped meanwhile
			for _, r := range recs {
				s.ov.add(r.rec, r.key)
			}
			s.ov.tails[t.j] = t.off + n
			s.ov.bad += bad
		}
		s.om.Unlock()
	}
	return present, nil
}

type keyedRec struct {
	key Key
	rec ovRec
}

// readJournal reads the complete lines of a journal from off on; it returns them and how many
// bytes they took. A torn last line (no newline yet, or a crashed writer's) is left for later.
func readJournal(path, j string, off int64) (recs []keyedRec, n int64, bad int64, err error) {
	f, err := storepath.OpenRegular(path, "read")
	if err != nil {
		return nil, 0, 0, err
	}
	defer f.Close()
	if off > 0 {
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			return nil, 0, 0, fmt.Errorf("registry: read %s: %w", path, err)
		}
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("registry: read %s: %w", path, err)
	}
	for {
		i := bytes.IndexByte(data[n:], '\n')
		if i < 0 {
			break
		}
		line := data[n : n+int64(i)]
		n += int64(i) + 1
		var r journalRecord
		if decodeRecord(line, &r) != nil || validateKey(r.Role, r.Method) != nil || r.Seq <= 0 {
			bad++
			continue
		}
		recs = append(recs, keyedRec{Key{r.Role, r.Method}, ovRec{j: j, seq: r.Seq, at: r.At, d: r.delta()}})
	}
	return recs, n, bad, nil
}

// journal is a Recorder's live journal.
type journal struct {
	id      string
	path    string
	f       *os.File
	lock    *flock.Flock
	seq     int64
	size    int64
	created time.Time
}

func newJournalID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%d-%d-%s", time.Now().UnixNano(), os.Getpid(), hex.EncodeToString(b[:]))
}

// openJournal creates, locks and publishes a new journal owned by this process.
func (s *Store) openJournal() (*journal, error) {
	dir := s.metricsPath()
	if err := s.mkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("registry: create %s: %w", dir, writeErr(s.root, err))
	}
	id := newJournalID()
	// Own before it is visible under its final name: a refresh of this process must never read
	// it back from disk (its records are added as they are flushed).
	s.om.Lock()
	s.ov.own[id] = true
	s.ov.tails[id] = 0
	s.om.Unlock()
	unown := func() {
		s.om.Lock()
		delete(s.ov.own, id)
		delete(s.ov.tails, id)
		s.om.Unlock()
	}
	tmp := filepath.Join(dir, tempPrefix+id+journalSuffix)
	f, err := storepath.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o644, "create a journal")
	if err != nil {
		unown()
		return nil, fmt.Errorf("registry: create journal %s: %w", tmp, writeErr(s.root, err))
	}
	l := flock.New(tmp)
	if err := l.Lock(); err != nil {
		unown()
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("registry: lock journal %s: %w", tmp, err)
	}
	path := filepath.Join(dir, id+journalSuffix)
	if err := os.Rename(tmp, path); err != nil {
		unown()
		l.Close()
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("registry: publish journal %s: %w", path, writeErr(s.root, err))
	}
	if err := syncDir(dir); err != nil {
		// Published but maybe not durable: sealed empty, it is compacted (to nothing) later.
		s.om.Lock()
		delete(s.ov.own, id)
		s.om.Unlock()
		l.Close()
		f.Close()
		return nil, fmt.Errorf("registry: publish journal %s: %w", path, writeErr(s.root, err))
	}
	return &journal{id: id, path: path, f: f, lock: l, created: time.Now()}, nil
}

// seal ends appends to the journal and releases its lock: from now on any process may compact it.
func (s *Store) sealJournal(j *journal) {
	j.f.Close()
	j.lock.Close()
	s.om.Lock()
	delete(s.ov.own, j.id) // its tail is final: a refresh reads nothing more and sees it vanish
	s.om.Unlock()
}

// appendOwn makes flushed records visible to this process: the overlay gets them and cached
// snapshots are advanced (incrementally: the new records only). It returns the keys whose merged
// view just became durable (the promotion is then written to the file) and the keys with no
// cached snapshot. Lookups are held up only for the swap of the new snapshots.
func (s *Store) appendOwn(j string, tail int64, recs []keyedRec) (promoted, uncached []Key) {
	s.om.Lock()
	defer s.om.Unlock()
	s.ov.tails[j] = tail
	type usage struct {
		calls int64
		at    time.Time
	}
	roles := map[string]usage{}
	old := make([]*snapshot, len(recs))
	s.mu.RLock()
	for i, r := range recs {
		old[i] = s.artifacts[r.key]
	}
	s.mu.RUnlock()
	next := make([]*snapshot, len(recs))
	for i, r := range recs {
		s.ov.add(r.rec, r.key)
		u := roles[r.key.Role]
		u.calls += r.rec.d.calls
		if r.rec.at.After(u.at) {
			u.at = r.rec.at
		}
		roles[r.key.Role] = u
		sn := old[i]
		if sn == nil {
			uncached = append(uncached, r.key)
			continue
		}
		m := *sn.a
		r.rec.d.applyTo(&m, r.rec.at)
		next[i] = newSnapshot(&m, sn.stamp)
		next[i].base = sn.base
		next[i].checked.Store(sn.checked.Load())
		next[i].used.Store(sn.used.Load())
		if sn.base == Candidate && m.Lifecycle == Durable {
			promoted = append(promoted, r.key)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, r := range recs {
		if next[i] != nil && s.artifacts[r.key] == old[i] { // not dropped by a revalidation meanwhile
			s.setLocked(r.key, next[i])
		}
	}
	for role, u := range roles {
		if rs := s.roles[role]; rs != nil {
			m := *rs.rec
			m.UsageCount += u.calls
			if m.LastUsedAt == nil || u.at.After(*m.LastUsedAt) {
				t := u.at
				m.LastUsedAt = &t
			}
			nrs := &roleSnap{rec: &m, base: rs.base, stamp: rs.stamp}
			nrs.checked.Store(rs.checked.Load())
			s.roles[role] = nrs
		}
	}
	return promoted, uncached
}

// CompactReport says what a compaction folded.
type CompactReport struct {
	Journals  int   `json:"journals"`  // journals folded and removed
	Records   int   `json:"records"`   // records read
	Artifacts int   `json:"artifacts"` // artifact files rewritten
	Dropped   int   `json:"dropped"`   // records of artifacts that no longer exist
	Skipped   int   `json:"skipped"`   // live journals left alone (their writer holds them)
	Bad       int64 `json:"bad"`       // lines that did not parse (torn writes of crashed writers)
}

// Compact folds every sealed journal into the artifact and role files and removes it. Live
// journals (locked by their writers) are left alone. Safe to run from several processes at once
// and to re-run after a crash: a record is applied once.
func (s *Store) Compact() (CompactReport, error) {
	var rep CompactReport
	if err := storepath.Check(s.root, s.metricsPath(), "compact journals"); err != nil {
		return rep, fmt.Errorf("registry: %w", err)
	}
	ents, err := os.ReadDir(s.metricsPath())
	if errors.Is(err, fs.ErrNotExist) {
		return rep, nil
	}
	if err != nil {
		return rep, fmt.Errorf("registry: list %s: %w", s.metricsPath(), err)
	}
	type held struct {
		id      string
		path    string
		release func()
	}
	var js []held
	defer func() {
		for _, h := range js {
			h.release()
		}
	}()
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), journalSuffix)
		if !ok || e.IsDir() || strings.HasPrefix(e.Name(), tempPrefix) {
			continue
		}
		s.om.Lock()
		own := s.ov.own[id]
		s.om.Unlock()
		if own {
			rep.Skipped++
			continue
		}
		p := filepath.Join(s.metricsPath(), e.Name())
		release, ok, err := tryLockExisting(p)
		if err != nil || !ok {
			if _, serr := os.Stat(p); serr == nil {
				rep.Skipped++ // live (its writer holds it) or being compacted by another process
			}
			continue
		}
		js = append(js, held{id, p, release})
	}
	if len(js) == 0 {
		return rep, nil
	}
	// Every record of the held journals, per artifact.
	byKey := map[Key][]ovRec{}
	for _, h := range js {
		recs, _, bad, err := readJournal(h.path, h.id, 0)
		if err != nil {
			return rep, err
		}
		rep.Bad += bad
		rep.Records += len(recs)
		for _, r := range recs {
			byKey[r.key] = append(byKey[r.key], r.rec)
		}
	}
	// Each file is folded with the journals listed under its own lock (update, updateRoleFold): a
	// stamp is dropped only for a journal that is gone, never for one created after a listing.
	keys := make([]Key, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	// Artifacts are folded by a few workers at once: each write waits on its fsyncs, which the
	// file system commits together. Index entries are written once per role at the end.
	type result struct {
		sm  *Summary
		err error
	}
	results := make([]result, len(keys))
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < compactWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				k := keys[i]
				a, _, st, err := s.update(k.Role, k.Method, byKey[k], nil, false, func(a *Artifact, exists bool) error {
					if !exists {
						return ErrNotFound
					}
					return nil
				})
				if err == nil {
					sm := summaryOf(a, st)
					results[i].sm = &sm
				}
				results[i].err = err
			}
		}()
	}
	for i := range keys {
		work <- i
	}
	close(work)
	wg.Wait()
	roleRecs := map[string][]ovRec{}
	bySummaryRole := map[string][]*Summary{}
	for i, k := range keys {
		recs := byKey[k]
		err := results[i].err
		switch {
		case err == nil:
			rep.Artifacts++
			roleRecs[k.Role] = append(roleRecs[k.Role], recs...)
			bySummaryRole[k.Role] = append(bySummaryRole[k.Role], results[i].sm)
		case errors.Is(err, ErrNotFound), errors.Is(err, ErrCorrupt), errors.Is(err, ErrIncompatible):
			// The artifact is gone (or unreadable) since the flush: its counters go with it, but
			// the calls were made and stay in the role's usage, as readers counted them.
			rep.Dropped += len(recs)
			roleRecs[k.Role] = append(roleRecs[k.Role], recs...)
		default:
			return rep, err
		}
	}
	for role, sms := range bySummaryRole {
		s.indexPutMany(role, sms)
	}
	for role, recs := range roleRecs {
		if _, err := s.updateRoleFold(role, recs); err != nil && !errors.Is(err, ErrNotFound) {
			return rep, err
		}
	}
	for _, h := range js {
		if err := os.Remove(h.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return rep, fmt.Errorf("registry: remove compacted journal %s: %w", h.path, writeErr(s.root, err))
		}
		rep.Journals++
	}
	if err := syncDir(s.metricsPath()); err != nil {
		return rep, fmt.Errorf("registry: %w", writeErr(s.root, err))
	}
	s.om.Lock()
	for _, h := range js {
		s.ov.dropJournal(h.id)
	}
	s.om.Unlock()
	return rep, nil
}

// JournalStats tells how much is waiting in metrics/ to be compacted.
type JournalStats struct {
	Journals int   `json:"journals"`
	Bytes    int64 `json:"bytes"`
}

// Journals counts the journals in metrics/ and their size.
func (s *Store) Journals() (JournalStats, error) {
	var st JournalStats
	ents, err := os.ReadDir(s.metricsPath())
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("registry: list %s: %w", s.metricsPath(), err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), journalSuffix) && !strings.HasPrefix(e.Name(), tempPrefix) {
			st.Journals++
			if fi, err := e.Info(); err == nil {
				st.Bytes += fi.Size()
			}
		}
	}
	return st, nil
}

// unionRecs is a and b without duplicates (the same journal and seq).
func unionRecs(a, b []ovRec) []ovRec {
	if len(b) == 0 {
		return a
	}
	type id struct {
		j   string
		seq int64
	}
	seen := make(map[id]bool, len(a)+len(b))
	out := make([]ovRec, 0, len(a)+len(b))
	for _, rs := range [][]ovRec{a, b} {
		for _, r := range rs {
			if !seen[id{r.j, r.seq}] {
				seen[id{r.j, r.seq}] = true
				out = append(out, r)
			}
		}
	}
	return out
}

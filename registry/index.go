package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/artifactforge/forge/internal/atomicfile"
	"github.com/artifactforge/forge/internal/storepath"
)

// The summary index. index/<role>.json holds one Summary per artifact of the role — what `forge
// ls`, `stale`, `prune` and the known-tools listing need, without the code — each with the stamp
// (inode, mtime, size) of the artifact file it was taken from, and the stamp of the role's
// directory tools/<role>/ at the time every entry was checked against its file. The first line is
// a JSON header; each further line is one artifact, tab-separated (parsing 10,000 of them takes a
// few milliseconds; encoding/json took tens).
//
// The index is a cache, never trusted over the files. Every artifact write puts its entry under the
// role's index lock and clears the directory stamp. A listing trusts a role's index whole when the directory stamp still matches — every
// artifact write renames a file into that directory, which changes its mtime — and otherwise checks
// every entry's stamp with its file, reads the files that differ, and rewrites the index. A
// directory stamp is recorded only when the directory's mtime is older than IndexSettle, so that a
// rename in the same clock tick as the check cannot hide behind an unchanged mtime. Missing,
// damaged or out-of-date index files are rebuilt this way (Doctor rebuilds every one). Index files
// are written by rename without fsync: a crash may lose or tear one, and the next listing rebuilds
// it.

// IndexSettle is how old a directory's mtime must be before an index trusts it whole.
const IndexSettle = 100 * time.Millisecond

const indexDir = "index"

// Summary is an artifact as the index lists it: everything but its code and history, plus what
// the listings show of those (the newest generation's Trigger, the signature's ParamsSchema).
type Summary struct {
	Role                string    `json:"role"`
	Method              string    `json:"method"`
	Lifecycle           Lifecycle `json:"lifecycle"`
	Generation          int       `json:"generation"`
	ContractFingerprint string    `json:"contract_fingerprint"`
	RuntimeVersion      string    `json:"runtime_version"`
	CodeChecksum        string    `json:"code_checksum"`
	Decl                string    `json:"decl,omitempty"`
	// ParamsSchema is the signature's JSON Schema of the args (the MCP tool's input schema).
	ParamsSchema json.RawMessage `json:"params_schema,omitempty"`
	// Trigger is the newest history entry's (History[0]) trigger: initial_forge, repair:<class>, ...
	Trigger          string     `json:"trigger,omitempty"`
	LastFailureClass string     `json:"last_failure_class,omitempty"`
	CreatedAt        time.Time  `json:"created_at"`
	LastUsedAt       *time.Time `json:"last_used_at,omitempty"`
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
	sm := SummaryOf(a)
	sm.Stamp = toIndexStamp(st)
	return sm
}

// SummaryOf is a's summary (without an index stamp): what every backend's Summaries lists.
func SummaryOf(a *Artifact) Summary {
	sm := Summary{Role: a.Role, Method: a.Method, Lifecycle: a.Lifecycle, Generation: a.Generation,
		ContractFingerprint: a.ContractFingerprint, RuntimeVersion: a.RuntimeVersion, CodeChecksum: a.CodeChecksum,
		Decl: a.Signature.Decl, ParamsSchema: compactJSON(a.Signature.ParamsSchema), LastFailureClass: a.LastFailureClass,
		CreatedAt: a.CreatedAt, LastUsedAt: a.LastUsedAt, Counters: a.Counters, MetricsApplied: a.MetricsApplied}
	if len(a.History) > 0 {
		sm.Trigger = a.History[0].Trigger
	}
	return sm
}

// merged applies the journal records the summary's file has not applied.
func (sm Summary) merged(recs []ovRec) Summary {
	p := pendingFor(recs, sm.MetricsApplied)
	if len(p) == 0 {
		return sm
	}
	// The generation too: a record merges its window only into the generation it names.
	a := Artifact{Generation: sm.Generation, Lifecycle: sm.Lifecycle, Counters: sm.Counters, LastUsedAt: sm.LastUsedAt, LastFailureClass: sm.LastFailureClass}
	for i := range p {
		p[i].d.applyTo(&a, p[i].at)
	}
	sm.Lifecycle, sm.Counters, sm.LastUsedAt, sm.LastFailureClass = a.Lifecycle, a.Counters, a.LastUsedAt, a.LastFailureClass
	return sm
}

// compactJSON is raw without insignificant whitespace, so that a summary's schema has the same
// bytes whether it came from memory (json.Marshal: compact) or an artifact file (indented); raw
// itself when it is already compact or is not valid JSON.
func compactJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || !bytes.ContainsAny(raw, " \t\r\n") {
		return raw
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil || b.Len() == len(raw) {
		return raw
	}
	return b.Bytes()
}

type indexHeader struct {
	Layout int        `json:"layout"`
	Format int        `json:"format,omitempty"` // indexFormat; absent (0) in the first index format
	Role   string     `json:"role"`
	Dir    indexStamp `json:"dir"` // zero: not settled, check every entry
}

// decodeHeader reads an index header line: the form writeIndex writes without encoding/json
// (a listing of 1,000 roles spent 4% of its time there), anything else with it.
func decodeHeader(line []byte, h *indexHeader) bool {
	rest, ok := string(line), true
	field := func(prefix string, stop byte) string {
		if !ok || !strings.HasPrefix(rest, prefix) {
			ok = false
			return ""
		}
		rest = rest[len(prefix):]
		i := strings.IndexByte(rest, stop)
		if i < 0 {
			ok = false
			return ""
		}
		v := rest[:i]
		rest = rest[i:]
		return v
	}
	num := func(v string) int64 {
		n, err := strconv.ParseInt(v, 10, 64)
		ok = ok && err == nil
		return n
	}
	layout, format := num(field(`{"layout":`, ',')), num(field(`,"format":`, ','))
	role := field(`,"role":"`, '"')
	ino, mtime := num(field(`","dir":{"ino":`, ',')), num(field(`,"mtime":`, ','))
	size := num(field(`,"size":`, '}'))
	if ok && rest == "}}" && !strings.Contains(role, `\`) {
		*h = indexHeader{Layout: int(layout), Format: int(format), Role: role, Dir: indexStamp{Ino: uint64(ino), Mtime: mtime, Size: size}}
		return true
	}
	*h = indexHeader{}
	return json.Unmarshal(line, h) == nil
}

// indexFormat is the version of the index lines. Format 1 (no "format" in the header) had 24
// fields; format 2 adds the Trigger and the ParamsSchema. An index of another format is unusable
// and rebuilt from the files on the next listing, like a damaged one; a forge of format 1 finds a
// format-2 line's extra fields and does the same (see RATIONALE, "Listings from summaries").
const indexFormat = 2

func (s *Store) indexPath(role string) string { return filepath.Join(s.root, indexDir, role+".json") }
func (s *Store) indexLock(role string) string { return filepath.Join(s.root, indexDir, role+".lock") }
func (s *Store) toolsDir(role string) string  { return filepath.Join(s.root, "tools", role) }

const indexFields = 26

// encodeEntry renders one summary as an index line.
func encodeEntry(b []byte, sm *Summary) []byte {
	str := func(v string) { b = append(b, v...); b = append(b, '\t') }
	q := func(v string) { b = strconv.AppendQuote(b, v); b = append(b, '\t') }
	num := func(v int64) { b = strconv.AppendInt(b, v, 10); b = append(b, '\t') }
	tm := func(t *time.Time) {
		if t != nil {
			b = strconv.AppendInt(b, t.UnixNano(), 10)
		}
		b = append(b, '\t')
	}
	str(sm.Method)
	str(string(sm.Lifecycle))
	num(int64(sm.Generation))
	q(sm.ContractFingerprint)
	q(sm.RuntimeVersion)
	q(sm.CodeChecksum)
	q(sm.Decl)
	q(sm.LastFailureClass)
	tm(&sm.CreatedAt)
	tm(sm.LastUsedAt)
	for _, v := range []int64{sm.SuccessCount, sm.FailureCount, sm.IntrinsicFailureCount, sm.AdaptiveFailureCount,
		sm.ExtrinsicFailureCount, sm.CallerFailureCount, sm.TotalDurationNanos, sm.MaxDurationNanos} {
		num(v)
	}
	q(sm.Recent)
	b = strconv.AppendFloat(b, sm.RecentFailureRate, 'g', -1, 64)
	b = append(b, '\t')
	js := make([]string, 0, len(sm.MetricsApplied))
	for j := range sm.MetricsApplied {
		js = append(js, j)
	}
	sort.Strings(js)
	for i, j := range js {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, j...)
		b = append(b, '=')
		b = strconv.AppendInt(b, sm.MetricsApplied[j], 10)
	}
	b = append(b, '\t')
	num(int64(sm.Stamp.Ino))
	num(sm.Stamp.Mtime)
	num(sm.Stamp.Size)
	q(sm.Trigger)
	b = appendSchema(b, sm.ParamsSchema)
	return append(b, '\n')
}

// appendSchema renders a params schema as the last field of a line: its bytes as they are (the
// common case: compact JSON, from json.Marshal), or Go-quoted when they hold a tab or newline or
// start with a quote, so that the line stays one line of tab-separated fields. Empty: no schema.
func appendSchema(b []byte, schema json.RawMessage) []byte {
	if len(schema) > 0 && schema[0] != '"' && bytes.IndexByte(schema, '\t') < 0 && bytes.IndexByte(schema, '\n') < 0 {
		return append(b, schema...)
	}
	if len(schema) == 0 {
		return b
	}
	return strconv.AppendQuote(b, string(schema))
}

// decodeEntry parses one index line into sm.
func decodeEntry(role string, line string, sm *Summary) bool {
	var f [indexFields]string
	n := 0
	for n < indexFields-1 {
		i := strings.IndexByte(line, '\t')
		if i < 0 {
			return false
		}
		f[n], line = line[:i], line[i+1:]
		n++
	}
	if strings.IndexByte(line, '\t') >= 0 {
		return false
	}
	f[n] = line
	bad := false
	num := func(v string) int64 {
		n, err := strconv.ParseInt(v, 10, 64)
		bad = bad || err != nil
		return n
	}
	uq := func(v string) string {
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			if in := v[1 : len(v)-1]; strings.IndexByte(in, '\\') < 0 && strings.IndexByte(in, '"') < 0 {
				return in // the common case: nothing escaped
			}
		}
		u, err := strconv.Unquote(v)
		bad = bad || err != nil
		return u
	}
	*sm = Summary{Role: role, Method: f[0], Lifecycle: Lifecycle(f[1]), Generation: int(num(f[2])),
		ContractFingerprint: uq(f[3]), RuntimeVersion: uq(f[4]), CodeChecksum: uq(f[5]), Decl: uq(f[6]), LastFailureClass: uq(f[7])}
	if f[8] != "" {
		sm.CreatedAt = time.Unix(0, num(f[8])).UTC()
	}
	if f[9] != "" {
		t := time.Unix(0, num(f[9])).UTC()
		sm.LastUsedAt = &t
	}
	sm.SuccessCount, sm.FailureCount, sm.IntrinsicFailureCount, sm.AdaptiveFailureCount = num(f[10]), num(f[11]), num(f[12]), num(f[13])
	sm.ExtrinsicFailureCount, sm.CallerFailureCount, sm.TotalDurationNanos, sm.MaxDurationNanos = num(f[14]), num(f[15]), num(f[16]), num(f[17])
	sm.Recent = uq(f[18])
	if f[19] != "0" {
		var err error
		if sm.RecentFailureRate, err = strconv.ParseFloat(f[19], 64); err != nil {
			bad = true
		}
	}
	if f[20] != "" {
		sm.MetricsApplied = make(map[string]int64, strings.Count(f[20], ",")+1)
		for kv := range strings.SplitSeq(f[20], ",") {
			j, v, ok := strings.Cut(kv, "=")
			if !ok {
				bad = true
				continue
			}
			sm.MetricsApplied[j] = num(v)
		}
	}
	sm.Stamp = indexStamp{Ino: uint64(num(f[21])), Mtime: num(f[22]), Size: num(f[23])}
	sm.Trigger = uq(f[24])
	switch v := f[25]; {
	case v == "":
	case v[0] == '"':
		u, err := strconv.Unquote(v)
		bad = bad || err != nil
		sm.ParamsSchema = json.RawMessage(u)
	default:
		// The bytes of the index file (see readIndex), capped so that an append copies.
		sm.ParamsSchema = unsafe.Slice(unsafe.StringData(v), len(v))[:len(v):len(v)]
	}
	return !bad && validName(sm.Method) && sm.Lifecycle.Valid()
}

// readIndex appends a role's index entries (sorted by method) to out; ok is false if the index
// is missing or unusable (it is then rebuilt from the files).
func (s *Store) readIndex(role string, out []Summary) (h indexHeader, _ []Summary, ok bool) {
	data, err := storepath.ReadRegular(s.indexPath(role), "read")
	if err != nil {
		return h, out, false
	}
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 || !decodeHeader(data[:nl], &h) || h.Layout != Layout || h.Format != indexFormat || h.Role != role {
		return h, out, false
	}
	start := len(out)
	out = slices.Grow(out, bytes.Count(data[nl+1:], []byte{'\n'}))
	// The entries' strings and schemas point into the file's bytes (read once, never written
	// again here): no copy.
	rest := unsafe.String(&data[nl], len(data)-nl)[1:]
	for rest != "" {
		i := strings.IndexByte(rest, '\n')
		if i < 0 {
			return h, out[:start], false // torn
		}
		out = append(out, Summary{})
		if !decodeEntry(role, rest[:i], &out[len(out)-1]) {
			return h, out[:start], false
		}
		rest = rest[i+1:]
	}
	return h, out, true
}

// readIndexMap is readIndex as a map by method (nil if unusable).
func (s *Store) readIndexMap(role string) (indexHeader, map[string]*Summary, bool) {
	h, list, ok := s.readIndex(role, nil)
	if !ok {
		return h, nil, false
	}
	m := make(map[string]*Summary, len(list))
	for i := range list {
		m[list[i].Method] = &list[i]
	}
	return h, m, true
}

// writeIndex replaces a role's index (temp file and rename, no fsync: it is a cache); the caller
// holds the role's index lock.
func (s *Store) writeIndex(role string, dir indexStamp, entries map[string]*Summary) error {
	hdr, _ := json.Marshal(indexHeader{Layout: Layout, Format: indexFormat, Role: role, Dir: dir})
	methods := make([]string, 0, len(entries))
	for m, e := range entries {
		if e != nil && e.Err == nil {
			methods = append(methods, m)
		}
	}
	sort.Strings(methods)
	b := make([]byte, 0, len(hdr)+1+300*len(methods))
	b = append(append(b, hdr...), '\n')
	for _, m := range methods {
		b = encodeEntry(b, entries[m])
	}
	dirPath := filepath.Join(s.root, indexDir)
	if err := s.mkdirAll(dirPath, 0o755); err != nil {
		return err
	}
	return atomicfile.Replace(s.indexPath(role), b) // derived: rebuilt from the files when lost
}

// dirStamp is the stamp of a role's directory, zero if it has not settled (see IndexSettle).
func (s *Store) dirStamp(role string) (indexStamp, error) {
	st, err := stampOf(s.toolsDir(role))
	if err != nil {
		return indexStamp{}, err
	}
	if time.Since(time.Unix(0, st.mtime)) < IndexSettle || st.ino == 0 {
		return indexStamp{}, nil
	}
	return toIndexStamp(st), nil
}

// indexPut records a just-written artifact in its role's index. A failure is not an error of the
// write: the next listing sees the stale entry and rebuilds it.
func (s *Store) indexPut(a *Artifact, st fileStamp) {
	sm := summaryOf(a, st)
	s.indexPutMany(a.Role, []*Summary{&sm})
}

// indexPutMany puts entries into a role's index. The other entries are not checked here (that
// would cost a stat per artifact of the role on every write): the index is written with no
// directory stamp, so the next listing checks the role's entries against their files once and
// records a settled stamp again.
func (s *Store) indexPutMany(role string, sms []*Summary) {
	if err := s.mkdirAll(filepath.Join(s.root, indexDir), 0o755); err != nil {
		return
	}
	_ = s.withLock(s.indexLock(role), func() error {
		_, entries, _ := s.readIndexMap(role)
		if entries == nil {
			entries = map[string]*Summary{}
		}
		for _, sm := range sms {
			entries[sm.Method] = sm
		}
		return s.writeIndex(role, indexStamp{}, entries)
	})
}

// checkIndexLocked compares every entry of a role's index with its file (reading the files that
// differ), drops entries whose file is gone, and, if anything changed or write is set, writes the
// index with the directory's stamp. The caller holds the role's index lock (or the store cannot
// be written). It returns the artifacts of the role, sorted, with Err set for those that cannot
// be read.
func (s *Store) checkIndexLocked(role string, entries map[string]*Summary, write, quarantine bool) ([]Summary, error) {
	dir, derr := s.dirStamp(role) // before the files are checked: a later rename changes it
	files, err := os.ReadDir(s.toolsDir(role))
	if errors.Is(err, fs.ErrNotExist) {
		files = nil
	} else if err != nil {
		return nil, fmt.Errorf("registry: list %s: %w", s.toolsDir(role), err)
	}
	seen := make(map[string]bool, len(files))
	var out []Summary
	changed := false
	// unreadable: a file of the role could not be read. The index holds readable artifacts only,
	// so it is then never marked settled (a zero directory stamp): every listing compares the
	// entries with their files and reads the unreadable ones again, which keeps them listed, with
	// their error, instead of vanishing once the directory settles.
	unreadable := false
	var modes storepath.OpenToAllCheck // a chmod changes no stamp: as noneOpenToAll
	dirPath := s.toolsDir(role)
	for _, f := range files {
		m, ok := strings.CutSuffix(f.Name(), ".json")
		if !ok || f.IsDir() || ValidateName("method", m) != nil {
			continue
		}
		st, serr := stampOf(s.ArtifactPath(role, m))
		if errors.Is(serr, fs.ErrNotExist) {
			continue
		}
		seen[m] = true
		if e := entries[m]; e != nil && serr == nil && e.Stamp == toIndexStamp(st) && modes.CheckIn(dirPath, f.Name(), "read") == nil {
			out = append(out, *e)
			continue
		}
		sm, err := s.summaryFromFile(Key{role, m}, quarantine)
		if errors.Is(err, ErrNotFound) {
			changed = true
			continue
		}
		if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrIncompatible) && !errors.Is(err, storepath.ErrOpenToAll) {
			return nil, err
		}
		if sm.Err == nil {
			e := sm
			entries[m] = &e
			changed = true
		} else {
			// Unreadable: the index must not keep vouching for it, even where the file did not
			// change (a mode every user may write changes no stamp).
			unreadable, changed = true, true
			delete(entries, m)
		}
		out = append(out, sm)
	}
	for m := range entries {
		if !seen[m] {
			delete(entries, m)
			changed = true
		}
	}
	if derr != nil || unreadable {
		dir = indexStamp{}
	}
	if changed || (write && dir != (indexStamp{})) {
		_ = s.writeIndex(role, dir, entries) // best effort (a read-only store is listed all the same)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Method < out[j].Method })
	return out, nil
}

// Summaries lists every stored artifact from the index, with the metrics journals' records
// merged, sorted by key: `forge ls`, stale, prune and the known-tools listing. A role whose
// directory changed since its index was checked has each entry compared with its file; the files
// that differ are read and the role's index is rewritten (when the store is writable). Artifacts
// that cannot be read are listed with Err (damaged ones are quarantined as Load does).
func (s *Store) Summaries() ([]Summary, error) {
	toolsDir := filepath.Join(s.root, "tools")
	roles, err := os.ReadDir(toolsDir)
	if err != nil {
		return nil, fmt.Errorf("registry: list %s: %w", toolsDir, err)
	}
	if _, err := s.refreshOverlay(); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(roles))
	for _, r := range roles { // ReadDir sorts by name
		if r.IsDir() && ValidateName("role", r.Name()) == nil {
			names = append(names, r.Name())
		}
	}
	// Roles are read by a few goroutines: a listing of many small roles is mostly system calls
	// (open, read, close and a stat per role), which run in parallel; the result keeps role order.
	parts := make([][]Summary, len(names))
	errs := make([]error, len(names))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(len(names), summaryReaders) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(names); i = int(next.Add(1) - 1) {
				parts[i], errs[i] = s.roleSummaries(names[i], nil)
			}
		})
	}
	wg.Wait()
	n := 0
	for i, p := range parts {
		if errs[i] != nil {
			return nil, errs[i]
		}
		n += len(p)
	}
	out := make([]Summary, 0, n)
	for _, p := range parts {
		out = append(out, p...)
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

// summaryReaders is how many roles Summaries reads at once.
const summaryReaders = 4

// roleSummaries appends Summaries for one role to out, from its index when the directory has not
// changed.
func (s *Store) roleSummaries(role string, out []Summary) ([]Summary, error) {
	start := len(out)
	h, out, ok := s.readIndex(role, out)
	if ok && h.Dir != (indexStamp{}) {
		if st, err := stampOf(s.toolsDir(role)); err == nil && toIndexStamp(st) == h.Dir && s.noneOpenToAll(role, out[start:]) {
			return out, nil
		}
	}
	entries := make(map[string]*Summary, len(out)-start)
	for i := start; i < len(out); i++ {
		e := out[i]
		entries[e.Method] = &e
	}
	out = out[:start]
	var sms []Summary
	_ = s.mkdirAll(filepath.Join(s.root, indexDir), 0o755) // removed by hand: rebuilt (read-only: below)
	err := s.withLock(s.indexLock(role), func() error {
		var err error
		sms, err = s.checkIndexLocked(role, entries, !ok || h.Dir == (indexStamp{}), true)
		return err
	})
	if err != nil && isReadOnly(err) { // no lock file can be made: check without writing
		sms, err = s.checkIndexLocked(role, entries, false, true)
	}
	return append(out, sms...), err
}

// noneOpenToAll reports whether opening would refuse none of the files of a settled index's
// entries for their mode (storepath.ErrOpenToAll): a chmod changes no stamp the index compares,
// so the index alone would list as sound a file that every user may write, or whose directory
// they may. A file refused goes through checkIndexLocked, which lists it with the open's error.
func (s *Store) noneOpenToAll(role string, entries []Summary) bool {
	var c storepath.OpenToAllCheck
	dir := s.toolsDir(role)
	for i := range entries {
		if c.CheckIn(dir, entries[i].Method+".json", "read") != nil {
			return false
		}
	}
	return true
}

// RebuildIndex rewrites every role's index from the artifact files (Doctor; a migration) and
// returns how many artifacts it indexed. Damaged files are left where they are (unindexed): Doctor
// and Load quarantine them.
func (s *Store) RebuildIndex() (int, error) {
	toolsDir := filepath.Join(s.root, "tools")
	roles, err := os.ReadDir(toolsDir)
	if err != nil {
		return 0, fmt.Errorf("registry: list %s: %w", toolsDir, err)
	}
	if err := s.mkdirAll(filepath.Join(s.root, indexDir), 0o755); err != nil {
		return 0, fmt.Errorf("registry: rebuild index: %w", writeErr(s.root, err))
	}
	have := map[string]bool{}
	n := 0
	for _, r := range roles {
		if !r.IsDir() || ValidateName("role", r.Name()) != nil {
			continue
		}
		role := r.Name()
		have[role] = true
		err := s.withLock(s.indexLock(role), func() error {
			out, err := s.checkIndexLocked(role, map[string]*Summary{}, true, false)
			for _, sm := range out {
				if sm.Err == nil {
					n++
				}
			}
			return err
		})
		if err != nil {
			return n, fmt.Errorf("registry: rebuild index of role %s: %w", role, writeErr(s.root, err))
		}
	}
	// Index files of roles with no directory left are removed.
	if ents, err := os.ReadDir(filepath.Join(s.root, indexDir)); err == nil {
		for _, e := range ents {
			if r, ok := strings.CutSuffix(e.Name(), ".json"); ok && !have[r] && !strings.HasPrefix(e.Name(), tempPrefix) {
				os.Remove(filepath.Join(s.root, indexDir, e.Name()))
			}
		}
	}
	return n, nil
}

// summaryFromFile reads one artifact file (quarantining it if damaged) and summarizes it.
func (s *Store) summaryFromFile(k Key, quarantine bool) (Summary, error) {
	st, _ := stampOf(s.ArtifactPath(k.Role, k.Method))
	a, err := s.readArtifact(k.Role, k.Method)
	if errors.Is(err, ErrCorrupt) && quarantine {
		// As Load: confirm under the lock and quarantine.
		_, err = s.load(k.Role, k.Method)
		if err == nil { // replaced by a writer meanwhile
			return s.summaryFromFile(k, quarantine)
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

package forge

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/artifactforge/forge/classifier"
	"github.com/artifactforge/forge/provider"

	"github.com/artifactforge/forge/internal/storepath"
)

// ID is a trace or call id, written as 16 hex digits. Kept as a number so that the warm path
// formats nothing.
type ID uint64

func newID() ID { return ID(rand.Uint64() | 1) }

// MarshalText renders the id as 16 hex digits ("" for none).
func (id ID) MarshalText() ([]byte, error) {
	if id == 0 {
		return []byte{}, nil
	}
	const digits = "0123456789abcdef"
	b := make([]byte, 16)
	for i, v := 15, uint64(id); i >= 0; i, v = i-1, v>>4 {
		b[i] = digits[v&0xf]
	}
	return b, nil
}

// UnmarshalText parses 16 hex digits.
func (id *ID) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*id = 0
		return nil
	}
	n, err := strconv.ParseUint(string(b), 16, 64)
	*id = ID(n)
	return err
}

// Event is one line of events/forge.jsonl (DESIGN.md, Observability). A line is one of three
// kinds:
//   - a call's own line (Kind ""): every generation, repair, regeneration, failure (any class),
//     operator action and candidate run, always, with everything needed to explain how it was
//     served; and every warm success, and every caller error that ran nothing (callerNoise), too
//     when the log runs per call (Options.EventsPerCall, FORGE_EVENTS=all);
//   - an aggregate (Kind "aggregate"): by default, the warm successes (action execute, ok,
//     persisted program, no repair, no provider call) of one artifact generation and selection
//     reason, or the caller errors that ran nothing of one type and rule under one role and
//     method label (LabelsOf: made-up names share UnknownLabel), folded into one line written at an interval's end (EventAggregateInterval) once it
//     stands for 200 calls, after 60 intervals at most, and at Flush, Stats and Close, in one
//     line: Count calls from FirstTime to Time, DurationNS and SandboxNS summed over them,
//     DurationP50NS/P99NS from a log-linear histogram (DurationHist), DurationMaxNS exact.
//     TraceID, CallID, ParentCallID and Depth are the slowest call's (an exemplar; the other
//     calls' ids are not kept). It leaves out the per-call fields that are zero in it (the
//     artifact's counters, repair, provider calls, tokens): ~650-750 bytes stand for Count calls;
//   - a drop record (Kind "dropped"): how many lines of each kind the writer could not keep since
//     the previous record (Dropped: the queue was full or the log closed; Lost: the file refused
//     the write).
//
// Event.Calls says how many calls a line stands for. The records among the lines (isRecord:
// operator actions, generations, repairs, calls that asked the model) are written to
// events/records.jsonl as well, which call volume does not rotate (ReadRecords).
type Event struct {
	Time         time.Time `json:"time"`
	TraceID      ID        `json:"trace_id"`
	CallID       ID        `json:"call_id"`
	ParentCallID ID        `json:"parent_call_id,omitempty"`
	Depth        int       `json:"depth"`
	Role         string    `json:"role"`
	Method       string    `json:"method"`
	OK           bool      `json:"ok"`
	// Client is who the call was made for (WithClient; forge serve's client identities); empty
	// for a caller that names none.
	Client string `json:"client,omitempty"`

	Action              string `json:"action"`
	Reason              string `json:"reason"`
	ProgramSource       string `json:"program_source,omitempty"`
	ArtifactHit         bool   `json:"artifact_hit"`
	ArtifactGen         int    `json:"artifact_gen,omitempty"`
	GenerationTrigger   string `json:"artifact_generation_trigger,omitempty"`
	PromptVersion       string `json:"prompt_version,omitempty"`
	ContractFingerprint string `json:"contract_fingerprint,omitempty"`
	// An operator action's line (Reason "operator", Action one of the Op names: operator.go):
	// who did it (WithClient: "cli:USER" from the CLI), the generation before it (ArtifactGen is
	// the one after), the lifecycle before and after, and what exactly it did or why it was
	// refused (Detail).
	Who               string `json:"who,omitempty"`
	ArtifactGenBefore int    `json:"artifact_gen_before,omitempty"`
	LifecycleBefore   string `json:"lifecycle_before,omitempty"`
	Lifecycle         string `json:"lifecycle,omitempty"`
	Detail            string `json:"detail,omitempty"`
	// Replay summarizes the replay of the sample of real calls on new code (shadow.go).
	Replay string `json:"replay,omitempty"`

	SuccessCount          int64 `json:"artifact_success_count"`
	FailureCount          int64 `json:"artifact_failure_count"`
	IntrinsicFailureCount int64 `json:"artifact_intrinsic_failure_count"`
	AdaptiveFailureCount  int64 `json:"artifact_adaptive_failure_count"`
	ExtrinsicFailureCount int64 `json:"artifact_extrinsic_failure_count"`

	FailureType     string `json:"failure_type,omitempty"`
	FailureClass    string `json:"failure_class,omitempty"`
	FailureRule     string `json:"failure_rule,omitempty"`
	RepairAttempted bool   `json:"repair_attempted"`
	RepairSucceeded bool   `json:"repair_succeeded"`

	ProviderCalls int            `json:"provider_calls"`
	Tokens        provider.Usage `json:"tokens"`
	// PromptTokensEstimate is the assembler's estimate of the input tokens of this call's
	// prompts, next to the provider's reported Tokens.InputTokens (see assembler.Calibrator).
	PromptTokensEstimate int   `json:"prompt_tokens_estimate,omitempty"`
	DurationNS           int64 `json:"duration_ns"`
	SandboxNS            int64 `json:"sandbox_ns"`
	// EventsDropped is how many lines this process's log dropped before this one, since it was
	// opened (0: none). Drops are also kept in "dropped" lines, in events/dropped.jsonl
	// (forge doctor) and in Forge.Health.
	EventsDropped int64 `json:"events_dropped,omitempty"`

	// Kind is "" for a call's own line, EventAggregate or EventDropped.
	Kind string `json:"kind,omitempty"`
	// Count is how many calls an aggregate stands for.
	Count int64 `json:"count,omitempty"`
	// FirstTime is an aggregate's first call's time (Time is its last call's).
	FirstTime time.Time `json:"first_time,omitzero"`
	// DurationP50NS, DurationP99NS: an aggregate's percentiles, from DurationHist (within 6.25%);
	// DurationMaxNS is exact.
	DurationP50NS int64 `json:"duration_p50_ns,omitempty"`
	DurationP99NS int64 `json:"duration_p99_ns,omitempty"`
	DurationMaxNS int64 `json:"duration_max_ns,omitempty"`
	// DurationHist is an aggregate's duration histogram, as pairs (bucket, calls) with no empty
	// bucket: bucket b < 16 holds durations of exactly b ns; bucket b >= 16 holds
	// [m << s, (m+1) << s) with s = b/8 - 1 and m = 8 + b%8 (8 buckets per power of two, each
	// at most 12.5% wide; durations from 2^40 ns, ~18 min, on share the last one).
	DurationHist []int64 `json:"duration_hist,omitempty"`
	// Dropped and Lost count, by line kind (LineKind), the lines a drop record stands for.
	Dropped map[string]int64 `json:"dropped,omitempty"`
	Lost    map[string]int64 `json:"lost,omitempty"`
}

// Line kinds (Event.Kind); a call's own line has none.
const (
	EventAggregate = "aggregate"
	EventDropped   = "dropped"
)

// Calls is how many calls the line stands for: 1 for a call's own line (an operator action
// included), Count for an aggregate, 0 for a drop record.
func (e *Event) Calls() int64 {
	switch e.Kind {
	case "":
		return 1
	case EventAggregate:
		return e.Count
	}
	return 0
}

// warmSuccess reports whether e is a call that an aggregate may stand for.
func (e *Event) warmSuccess() bool {
	return e.Kind == "" && e.OK && e.Action == "execute" && e.ProgramSource == SourcePersisted &&
		!e.RepairAttempted && e.ProviderCalls == 0
}

// callerNoise reports whether e is a caller's error that ran nothing and cost nothing: a role or
// method that does not exist, args refused before any code ran (type unknown_role,
// unknown_method or args; class caller, rule args or args_too_large; no provider call, no
// repair), or a call refused new code because its client spent its model calls (model_calls). Any caller can make these at will, so by default they are folded into aggregates as
// warm successes are (one line per label, type and rule and interval), and they never fill the
// log that holds the records that matter.
func (e *Event) callerNoise() bool {
	if e.Kind != "" || e.OK || e.FailureClass != string(classifier.Caller) || e.ProviderCalls > 0 || e.RepairAttempted || IsOperatorAction(e) {
		return false
	}
	switch e.FailureType {
	case TypeUnknownRole, TypeUnknownMethod, TypeArgs:
		return e.FailureRule == string(classifier.RuleArgs) || e.FailureRule == string(classifier.RuleArgsTooLarge)
	case TypeModelCalls:
		return true // refused before the model was asked: a spent client may repeat it at will
	}
	return false
}

// UnknownLabel is the role and method label of calls to a role or method that does not exist
// (Prometheus metrics, aggregates of caller errors): made-up names never become series or
// buckets of their own.
const UnknownLabel = "_unknown"

// LabelsOf is the role and method a call's metrics and aggregates count it under: its own, or
// UnknownLabel for a role or method that does not exist (or a name that cannot be one).
func LabelsOf(e *Event) (role, method string) {
	switch e.FailureType {
	case TypeUnknownRole:
		return UnknownLabel, UnknownLabel
	case TypeUnknownMethod:
		return e.Role, UnknownLabel
	case TypeModelCalls:
		if e.ArtifactGen == 0 { // a method with no code, whose name only the caller gave
			return e.Role, UnknownLabel
		}
	}
	return e.Role, e.Method
}

// isRecord reports whether e is a record that matters beyond call volume: an operator action,
// a generation, a repair or regeneration (succeeded or not), or any call that asked the model.
// Records are also kept in events/records.jsonl (ReadRecords), which only they fill.
func isRecord(e *Event) bool {
	if e.Kind != "" {
		return false
	}
	switch {
	case IsOperatorAction(e), e.RepairAttempted, e.ProviderCalls > 0, e.GenerationTrigger != "":
		return true
	}
	switch e.ProgramSource {
	case SourceGenerated, SourceRepaired, SourceRegenerated:
		return true
	}
	return false
}

// Line kinds for drop counts (the keys of Event.Dropped and Event.Lost, and of Health).
const (
	kindCall       = iota // a warm success's own line (per-call mode)
	kindGeneration        // generated, repaired or regenerated code, or a candidate's run
	kindFailure           // a failed call, any class
	kindOperator          // an operator action (IsOperatorAction)
	kindAggregate         // an aggregate line
	kindDropped           // a drop record
	numKinds
)

var kindNames = [numKinds]string{"call", "generation", "failure", "operator", "aggregate", "dropped"}

// LineKind is the kind a line counts under in drop records and Health: "call" (a warm
// success's own line), "generation", "failure", "operator", "aggregate" or "dropped".
func LineKind(e *Event) string { return kindNames[lineKind(e)] }

func lineKind(e *Event) int {
	switch {
	case e.Kind == EventAggregate:
		return kindAggregate
	case e.Kind == EventDropped:
		return kindDropped
	case IsOperatorAction(e):
		return kindOperator
	case !e.OK:
		return kindFailure
	case e.warmSuccess():
		return kindCall
	}
	return kindGeneration
}

// Event log rotation: forge.jsonl is renamed to forge.jsonl.1 (.1 to .2, ...) past this size.
// records.jsonl (the records that matter, isRecord) rotates the same way past its own size, which
// call volume does not add to.
const (
	eventLogMaxBytes = 16 << 20
	eventLogKeep     = 3
	eventQueue       = 8192
	recordsFile      = "records.jsonl"
	recordsMaxBytes  = 64 << 20
)

// EventAggregateInterval is how long warm successes are folded into one aggregate line per
// artifact before it is written by default (Options.EventInterval; Flush and Close write the
// current ones at once).
const EventAggregateInterval = time.Second

// aggIdleIntervals: an artifact's aggregate bucket with no call for this many intervals is
// released (its memory; a later call makes a new one).
const aggIdleIntervals = 10

// eventLog writes events from a queue in the background so that a call never waits on disk.
//
// Warm successes are folded into per-artifact aggregates in memory (aggregator) unless the log
// runs per call; the writer writes them every interval: they never pass through the queue, so
// they are never dropped. A call's own line goes through the queue: when it is full, a warm
// success's line (per-call mode) is dropped and counted, and every other line (generation,
// failure, operator action) waits for room: it is never dropped. Drops are never silent: a
// "dropped" line in the log says how many of each kind since the previous one, every later line
// carries the total (events_dropped), Close appends it to events/dropped.jsonl (DroppedEvents,
// forge doctor), and Forge.Health reports it. Lines the file refuses (a full disk) are counted
// the same way, as lost.
type eventLog struct {
	path     string
	maxBytes int64 // rotate past this size (eventLogMaxBytes)
	perCall  bool  // warm successes get a line each, not an aggregate
	interval time.Duration
	queue    chan Event
	done     chan struct{}
	closeMu  sync.Once
	syncReq  chan chan struct{}
	agg      aggregator

	dropped    atomic.Int64 // lines dropped since open, every kind
	droppedBy  [numKinds]atomic.Int64
	lostBy     [numKinds]atomic.Int64
	lost       atomic.Int64 // lines the file refused since open
	waited     atomic.Int64 // lines that waited for room in a full queue
	aggregated atomic.Int64 // calls written as aggregates
	written    atomic.Int64 // bytes handed to the file since open (benchmarks: bytes per call)

	mu     sync.RWMutex // emit holds it for reading; close for writing, so no send meets a closed queue
	closed bool

	recordsMax int64 // rotate records.jsonl past this size (recordsMaxBytes)
}

// openEventLog opens the log and starts its writer; interval 0 is EventAggregateInterval.
func openEventLog(dir string, maxBytes int64, perCall bool, interval time.Duration) (*eventLog, error) {
	l, f, err := newEventLog(dir, maxBytes, eventQueue)
	if err != nil {
		return nil, err
	}
	l.perCall = perCall
	if interval > 0 {
		l.interval = interval
	}
	go l.run(f)
	return l, nil
}

// eventsAdvice is what to do when the event log cannot be opened: a CLI user has no NoEvents.
const eventsAdvice = "make the store's events directory writable, or turn the event log off: --events off or FORGE_EVENTS=off (Options.NoEvents from Go)"

// newEventLog opens the log file; the writer starts with go l.run(f).
func newEventLog(dir string, maxBytes int64, queue int) (*eventLog, *os.File, error) {
	if err := storepath.MkdirAll(filepath.Dir(dir), dir, 0o755); err != nil { // no link: events/ is the store's
		return nil, nil, fmt.Errorf("forge: events: %w (%s)", err, eventsAdvice)
	}
	l := &eventLog{path: filepath.Join(dir, "forge.jsonl"), maxBytes: maxBytes, interval: EventAggregateInterval, recordsMax: recordsMaxBytes,
		queue: make(chan Event, queue), done: make(chan struct{}), syncReq: make(chan chan struct{})}
	f, err := storepath.OpenFile(l.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644, "append events")
	if err != nil {
		return nil, nil, fmt.Errorf("forge: events: %w (%s)", err, eventsAdvice)
	}
	return l, f, nil
}

func (l *eventLog) drop(kind int) {
	l.droppedBy[kind].Add(1)
	l.dropped.Add(1)
}

// emit logs e: a warm success goes into its aggregate (no lock shared by all calls, no
// allocation once the artifact has a bucket), anything else into the queue.
func (l *eventLog) emit(e *Event) {
	if !l.perCall && (e.warmSuccess() || e.callerNoise()) {
		if l.agg.add(e) == nil {
			l.drop(lineKind(e)) // after close
		}
		return
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	k := lineKind(e)
	if l.closed {
		l.drop(k)
		return
	}
	select {
	case l.queue <- *e:
		return
	default:
	}
	if k == kindCall {
		l.drop(k)
		return
	}
	l.waited.Add(1)
	l.queue <- *e // the writer is running until close, which waits for this send (l.mu)
}

// logFile is the writer's side of the log: the open file, its size, and the lines buffered
// but not yet accepted by the file (counted as lost if the file refuses them).
type logFile struct {
	l       *eventLog
	f       *os.File
	w       *bufio.Writer
	size    int64
	pending [numKinds]int64
	warned  bool

	rec     *os.File // records.jsonl, opened at the first record
	recSize int64
	recErr  bool // its failure was said
}

// record appends a record's line to records.jsonl as well (unbuffered: records are few), and
// rotates that file past its own size.
func (lf *logFile) record(line []byte) {
	path := filepath.Join(filepath.Dir(lf.l.path), recordsFile)
	if lf.rec == nil {
		f, err := storepath.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644, "append records")
		if err != nil {
			lf.recordFailed(path, err)
			return
		}
		lf.rec = f
		if st, err := f.Stat(); err == nil {
			lf.recSize = st.Size()
		}
	}
	if _, err := lf.rec.Write(line); err != nil {
		lf.recordFailed(path, err)
		return
	}
	lf.recSize += int64(len(line))
	if lf.recSize > lf.l.recordsMax {
		lf.rec.Close()
		lf.rec, lf.recSize = nil, 0
		rotateFiles(path)
	}
}

func (lf *logFile) recordFailed(path string, err error) {
	if !lf.recErr {
		lf.recErr = true
		fmt.Fprintf(os.Stderr, "forge: the records file %s refused a write (%v); the record is still in the event log (free disk space or fix the permissions)\n", path, err)
	}
}

func (lf *logFile) failed(err error) {
	var n int64
	for k, c := range lf.pending {
		if c > 0 {
			lf.l.lostBy[k].Add(c)
			n += c
		}
	}
	lf.l.lost.Add(n)
	lf.pending = [numKinds]int64{}
	lf.w.Reset(lf.f)
	if !lf.warned {
		lf.warned = true
		fmt.Fprintf(os.Stderr, "forge: the event log %s refused a write (%v): %d line(s) lost so far; they are counted in Forge.Health and in the log's \"dropped\" lines once it takes writes again (free disk space or fix the permissions)\n", lf.l.path, err, lf.l.lost.Load())
	}
}

func (lf *logFile) flush() {
	if lf.w.Buffered() == 0 {
		return
	}
	if err := lf.w.Flush(); err != nil {
		lf.failed(err)
		return
	}
	lf.pending = [numKinds]int64{}
}

func (lf *logFile) write(line []byte, kind int) {
	lf.pending[kind]++
	if _, err := lf.w.Write(line); err != nil {
		lf.failed(err)
		return
	}
	lf.size += int64(len(line))
	lf.l.written.Add(int64(len(line)))
	if lf.size > lf.l.maxBytes {
		lf.flush()
		lf.f.Close()
		lf.l.rotate()
		nf, err := storepath.OpenFile(lf.l.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY|os.O_TRUNC, 0o644, "append events")
		if err != nil {
			fmt.Fprintf(os.Stderr, "forge: the event log %s could not be reopened after rotation (%v); later lines are counted as lost\n", lf.l.path, err)
			nf, _ = os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		}
		lf.f, lf.size = nf, 0
		lf.w.Reset(nf)
	}
}

func (l *eventLog) run(f *os.File) {
	defer close(l.done)
	lf := &logFile{l: l, f: f, w: bufio.NewWriterSize(f, 64<<10)}
	if st, err := f.Stat(); err == nil {
		lf.size = st.Size()
	}
	var (
		line     []byte
		reported [2][numKinds]int64 // dropped, lost: the counts the last drop record covered
		agg      Event
		pairs    []int64
	)
	write := func(e *Event) {
		e.EventsDropped = l.dropped.Load()
		line = appendEvent(line[:0], e)
		lf.write(line, lineKind(e))
		if isRecord(e) {
			lf.record(line)
		}
	}
	aggregates := func(final, all bool) {
		l.agg.collectSome(final, all, func(s *aggSnapshot) {
			s.event(&agg, &pairs)
			l.aggregated.Add(s.n)
			write(&agg)
		})
	}
	drops := func() {
		var rec Event
		for i, by := range []*[numKinds]atomic.Int64{&l.droppedBy, &l.lostBy} {
			for k := range by {
				if n := by[k].Load() - reported[i][k]; n > 0 {
					m := &rec.Dropped
					if i == 1 {
						m = &rec.Lost
					}
					if *m == nil {
						*m = map[string]int64{}
					}
					(*m)[kindNames[k]] = n
					reported[i][k] += n
				}
			}
		}
		if rec.Dropped != nil || rec.Lost != nil {
			rec.Time, rec.Kind = time.Now().UTC(), EventDropped
			write(&rec)
		}
	}
	tick := time.NewTicker(l.interval)
	defer tick.Stop()
	for {
		select {
		case e, ok := <-l.queue:
			if !ok {
				aggregates(true, true)
				drops()
				lf.flush()
				lf.f.Close()
				if lf.rec != nil {
					lf.rec.Close()
				}
				return
			}
			write(&e)
			if len(l.queue) == 0 {
				lf.flush()
			}
		case <-tick.C:
			aggregates(false, false)
			drops()
			lf.flush()
		case ack := <-l.syncReq:
			for len(l.queue) > 0 {
				e := <-l.queue
				write(&e)
			}
			aggregates(false, true)
			drops()
			lf.flush()
			close(ack)
		}
	}
}

func (l *eventLog) rotate() { rotateFiles(l.path) }

// rotateFiles renames path to path.1, path.1 to path.2, ..., keeping eventLogKeep old files.
func rotateFiles(path string) {
	for i := eventLogKeep - 1; i >= 1; i-- {
		os.Rename(fmt.Sprintf("%s.%d", path, i), fmt.Sprintf("%s.%d", path, i+1))
	}
	os.Rename(path, path+".1")
}

// ReadRecords reads a store's records (events/records.jsonl, the rotated files oldest first):
// the lines of the event log that call volume cannot rotate away (operator actions, generations,
// repairs, regenerations, calls that asked the model). A line that does not parse (a crash
// mid-write) is skipped.
func ReadRecords(store string) ([]Event, error) {
	return readRotatedLines(filepath.Join(store, "events", recordsFile), nil)
}

// sync waits until every event queued so far, and every aggregate so far, is written.
func (l *eventLog) sync() {
	ack := make(chan struct{})
	select {
	case l.syncReq <- ack:
		<-ack
	case <-l.done:
	}
}

func (l *eventLog) close() {
	l.closeMu.Do(func() {
		l.mu.Lock()
		l.closed = true
		close(l.queue)
		l.mu.Unlock()
		<-l.done
		if n := l.dropped.Load() + l.lost.Load(); n > 0 {
			l.recordDropped(n)
		}
	})
	<-l.done
}

// droppedFile keeps, per closed event log that dropped events, one JSON line with the count.
const droppedFile = "dropped.jsonl"

// DroppedRecord is one line of events/dropped.jsonl.
type DroppedRecord struct {
	Time    time.Time `json:"time"`
	PID     int       `json:"pid"`
	Dropped int64     `json:"dropped"`
}

func (l *eventLog) recordDropped(n int64) {
	line, err := json.Marshal(DroppedRecord{Time: time.Now().UTC(), PID: os.Getpid(), Dropped: n})
	if err != nil {
		return
	}
	path := filepath.Join(filepath.Dir(l.path), droppedFile)
	f, err := storepath.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644, "count dropped events")
	if err != nil {
		fmt.Fprintf(os.Stderr, "forge: %d event(s) were dropped (event queue full) and the count could not be kept in %s: %v\n", n, path, err)
		return
	}
	defer f.Close()
	if _, err := f.Write(append(line, '\n')); err != nil {
		fmt.Fprintf(os.Stderr, "forge: %d event(s) were dropped (event queue full) and the count could not be kept in %s: %v\n", n, path, err)
	}
}

// DroppedEvents sums the events that the store's event logs dropped because their queue was full
// (events/dropped.jsonl): forge doctor reports it. A store with no drops answers 0.
func DroppedEvents(storeRoot string) (int64, error) {
	data, err := storepath.ReadRegular(filepath.Join(storeRoot, "events", droppedFile), "read")
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("forge: events: %w", err)
	}
	var total int64
	for i, ln := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(ln)) == 0 {
			continue
		}
		var r DroppedRecord
		if err := json.Unmarshal(ln, &r); err != nil {
			return total, fmt.Errorf("forge: events/%s line %d: %w (delete the line to clear it)", droppedFile, i+1, err)
		}
		total += r.Dropped
	}
	return total, nil
}

// readEvents reads a store's current event log.
func readEvents(store string) ([]Event, error) {
	data, err := storepath.ReadRegular(filepath.Join(store, "events", "forge.jsonl"), "read")
	if err != nil {
		return nil, err
	}
	var out []Event
	dec := json.NewDecoder(bytes.NewReader(data))
	for dec.More() {
		var e Event
		if err := dec.Decode(&e); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// health fills the event log's counters in st.
func (l *eventLog) health(st *Health) {
	st.EventsDropped = l.dropped.Load()
	for k := range l.droppedBy {
		if n := l.droppedBy[k].Load(); n > 0 {
			if st.EventsDroppedByKind == nil {
				st.EventsDroppedByKind = map[string]int64{}
			}
			st.EventsDroppedByKind[kindNames[k]] = n
		}
	}
	st.EventsLost = l.lost.Load()
	st.EventsWaited = l.waited.Load()
	st.EventsAggregated = l.aggregated.Load()
	st.EventsQueued = len(l.queue)
}

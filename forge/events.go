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

	"github.com/artifactforge/forge/provider"
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

// Event is one line of events/forge.jsonl: one per call, with everything needed to explain how it
// was served (DESIGN.md, Observability).
type Event struct {
	Time         time.Time `json:"time"`
	TraceID      ID        `json:"trace_id"`
	CallID       ID        `json:"call_id"`
	ParentCallID ID        `json:"parent_call_id,omitempty"`
	Depth        int       `json:"depth"`
	Role         string    `json:"role"`
	Method       string    `json:"method"`
	OK           bool      `json:"ok"`

	Action              string `json:"action"`
	Reason              string `json:"reason"`
	ProgramSource       string `json:"program_source,omitempty"`
	ArtifactHit         bool   `json:"artifact_hit"`
	ArtifactGen         int    `json:"artifact_gen,omitempty"`
	GenerationTrigger   string `json:"artifact_generation_trigger,omitempty"`
	PromptVersion       string `json:"prompt_version,omitempty"`
	ContractFingerprint string `json:"contract_fingerprint,omitempty"`

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
	// EventsDropped is how many events this process's log dropped before this one, since it was
	// opened, because its queue was full (0: none). Drops are also kept in events/dropped.jsonl
	// (forge doctor) and in Forge.Health.
	EventsDropped int64 `json:"events_dropped,omitempty"`
}

// Event log rotation: forge.jsonl is renamed to forge.jsonl.1 (.1 to .2, ...) past this size.
const (
	eventLogMaxBytes = 16 << 20
	eventLogKeep     = 3
	eventQueue       = 8192
)

// eventLog writes events from a queue in the background so that a call never waits on disk. When
// the queue is full, events are dropped and counted rather than slowing calls down; the count is
// never silent: every later event carries it (events_dropped), Close appends it to
// events/dropped.jsonl (read by DroppedEvents and forge doctor), and Forge.Health reports it.
type eventLog struct {
	path     string
	maxBytes int64 // rotate past this size (eventLogMaxBytes)
	queue    chan Event
	done     chan struct{}
	dropped  atomic.Int64
	closeMu  sync.Once
	syncReq  chan chan struct{}

	mu     sync.RWMutex // emit holds it for reading; close for writing, so no send meets a closed queue
	closed bool
}

func openEventLog(dir string, maxBytes int64) (*eventLog, error) {
	l, f, err := newEventLog(dir, maxBytes, eventQueue)
	if err != nil {
		return nil, err
	}
	go l.run(f)
	return l, nil
}

// newEventLog opens the log file; the writer starts with go l.run(f).
func newEventLog(dir string, maxBytes int64, queue int) (*eventLog, *os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("forge: events: %w", err)
	}
	l := &eventLog{path: filepath.Join(dir, "forge.jsonl"), maxBytes: maxBytes, queue: make(chan Event, queue),
		done: make(chan struct{}), syncReq: make(chan chan struct{})}
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("forge: events: %w", err)
	}
	return l, f, nil
}

func (l *eventLog) emit(e Event) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		l.dropped.Add(1)
		return
	}
	select {
	case l.queue <- e:
	default:
		l.dropped.Add(1)
	}
}

func (l *eventLog) run(f *os.File) {
	defer close(l.done)
	w := bufio.NewWriterSize(f, 64<<10)
	var line []byte
	size := int64(0)
	if st, err := f.Stat(); err == nil {
		size = st.Size()
	}
	write := func(e Event) {
		e.EventsDropped = l.dropped.Load()
		line = appendEvent(line[:0], &e)
		if _, err := w.Write(line); err != nil {
			return
		}
		size += int64(len(line))
		if size > l.maxBytes {
			w.Flush()
			f.Close()
			l.rotate()
			nf, err := os.OpenFile(l.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY|os.O_TRUNC, 0o644)
			if err != nil {
				return
			}
			f, size = nf, 0
			w.Reset(f)
		}
	}
	for {
		select {
		case e, ok := <-l.queue:
			if !ok {
				w.Flush()
				f.Close()
				return
			}
			write(e)
			if len(l.queue) == 0 {
				w.Flush()
			}
		case ack := <-l.syncReq:
			for len(l.queue) > 0 {
				write(<-l.queue)
			}
			w.Flush()
			close(ack)
		}
	}
}

func (l *eventLog) rotate() {
	for i := eventLogKeep - 1; i >= 1; i-- {
		os.Rename(fmt.Sprintf("%s.%d", l.path, i), fmt.Sprintf("%s.%d", l.path, i+1))
	}
	os.Rename(l.path, l.path+".1")
}

// sync waits until every event queued so far is written.
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
		if n := l.dropped.Load(); n > 0 {
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
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
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
	data, err := os.ReadFile(filepath.Join(storeRoot, "events", droppedFile))
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
	data, err := os.ReadFile(filepath.Join(store, "events", "forge.jsonl"))
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

package forge

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/artifactforge/forge/internal/storepath"
	"github.com/artifactforge/forge/provider"
)

// Stats is what reuse bought, computed from the event log: one implementation for `forge stats`,
// `forge serve`'s /v1/stats and the MCP server.
type Stats struct {
	Since   time.Time       `json:"since,omitzero"`
	Overall Figures         `json:"overall"`
	Methods []MethodFigures `json:"methods"`
	// EventsDropped is how many log lines the log's "dropped" records say were not written (in
	// the same time range): calls the figures cannot count.
	EventsDropped int64 `json:"events_dropped,omitempty"`
	// RecordsOnly counts the records (generations, repairs, calls that asked the model, operator
	// actions) read from events/records.jsonl alone: the event log rotated their lines away, and
	// they are counted all the same. The calls that persisted code served before LogSince (the
	// event log's oldest line) are not: only the log had them.
	RecordsOnly int64     `json:"records_only,omitempty"`
	LogSince    time.Time `json:"log_since,omitzero"`
}

// MethodFigures are one role.method's figures.
type MethodFigures struct {
	Role   string `json:"role"`
	Method string `json:"method"`
	Figures
}

// Figures summarise a set of calls.
type Figures struct {
	Calls int64 `json:"calls"`
	OK    int64 `json:"ok"`
	// Calls by program source: persisted code (reuse), or code written by this call.
	Persisted   int64 `json:"persisted"`
	Generated   int64 `json:"generated"`
	Repaired    int64 `json:"repaired"`
	Regenerated int64 `json:"regenerated"`
	// Operator actions (bless, quarantine, lift, rollback, archive, restore, dismiss, regen,
	// regen --next-call, edit: IsOperatorAction) are in the log but are not calls; refused ones
	// are counted too. OperatorActionsByAction splits them by Event.Action.
	OperatorActions         int64            `json:"operator_actions"`
	OperatorActionsByAction map[string]int64 `json:"operator_actions_by_action,omitempty"`
	// ReuseHitRate is the share of calls served by persisted code with no provider call.
	ReuseHitRate float64 `json:"reuse_hit_rate"`
	// ProviderCalls made by the calls, and per 1,000 calls.
	ProviderCalls     int64   `json:"provider_calls"`
	ModelCallsPer1000 float64 `json:"model_calls_per_1000"`
	// ProviderCallsSaved: calls served by persisted code, each of which would otherwise have
	// needed at least one provider call. TokensSavedEstimate prices them at the mean tokens of the
	// calls that did ask the provider.
	ProviderCallsSaved  int64          `json:"provider_calls_saved"`
	TokensSavedEstimate int64          `json:"tokens_saved_estimate"`
	Tokens              provider.Usage `json:"tokens"`
	RepairsAttempted    int64          `json:"repairs_attempted"`
	RepairsSucceeded    int64          `json:"repairs_succeeded"`
	RepairSuccessRate   float64        `json:"repair_success_rate"`
	RegenerationRate    float64        `json:"regeneration_rate"`
	// Failures counts failed calls by "class/rule".
	Failures map[string]int64 `json:"failures,omitempty"`
	// Latency per program source ("" for calls that ran no program).
	Latency map[string]Latency `json:"latency,omitempty"`

	durations map[string][]sample
}

// sample is a duration and how many calls it stands for: 1 for a call's own line, a histogram
// bucket's count (its midpoint) for an aggregate.
type sample struct{ v, n int64 }

// Latency percentiles of one program source.
type Latency struct {
	Calls int64         `json:"calls"`
	P50   time.Duration `json:"p50_ns"`
	P99   time.Duration `json:"p99_ns"`
}

// add counts one line: an aggregate as the Count calls it stands for.
func (fg *Figures) add(e *Event) {
	if e.Kind == EventDropped {
		return
	}
	if IsOperatorAction(e) {
		fg.OperatorActions++
		if fg.OperatorActionsByAction == nil {
			fg.OperatorActionsByAction = map[string]int64{}
		}
		fg.OperatorActionsByAction[e.Action]++
		return
	}
	n := e.Calls()
	fg.Calls += n
	if e.OK {
		fg.OK += n
	}
	switch e.ProgramSource {
	case SourcePersisted:
		fg.Persisted += n
	case SourceGenerated:
		fg.Generated += n
	case SourceRepaired:
		fg.Repaired += n
	case SourceRegenerated:
		fg.Regenerated += n
	}
	fg.ProviderCalls += int64(e.ProviderCalls)
	fg.Tokens.InputTokens += e.Tokens.InputTokens
	fg.Tokens.OutputTokens += e.Tokens.OutputTokens
	fg.Tokens.CachedTokens += e.Tokens.CachedTokens
	if e.RepairAttempted {
		fg.RepairsAttempted += n
		if e.RepairSucceeded {
			fg.RepairsSucceeded += n
		}
	}
	if !e.OK && e.FailureClass != "" {
		if fg.Failures == nil {
			fg.Failures = map[string]int64{}
		}
		fg.Failures[e.FailureClass+"/"+e.FailureRule] += n
	}
	if fg.durations == nil {
		fg.durations = map[string][]sample{}
	}
	ds := fg.durations[e.ProgramSource]
	switch {
	case e.Kind != EventAggregate:
		ds = append(ds, sample{e.DurationNS, 1})
	case len(e.DurationHist) >= 2:
		for i := 0; i+1 < len(e.DurationHist); i += 2 {
			ds = append(ds, sample{histValue(int(e.DurationHist[i]), 0, max(e.DurationMaxNS, 1)), e.DurationHist[i+1]})
		}
	case n > 0: // an aggregate without its histogram (written by hand): its mean
		ds = append(ds, sample{e.DurationNS / n, n})
	}
	fg.durations[e.ProgramSource] = ds
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func (fg *Figures) finish() {
	fg.ReuseHitRate = ratio(fg.Persisted, fg.Calls)
	fg.ModelCallsPer1000 = 1000 * ratio(fg.ProviderCalls, fg.Calls)
	fg.RepairSuccessRate = ratio(fg.RepairsSucceeded, fg.RepairsAttempted)
	fg.RegenerationRate = ratio(fg.Regenerated, fg.Calls)
	fg.ProviderCallsSaved = fg.Persisted
	if asked := fg.Calls - fg.Persisted; asked > 0 && fg.ProviderCalls > 0 {
		total := int64(fg.Tokens.InputTokens + fg.Tokens.OutputTokens)
		fg.TokensSavedEstimate = int64(math.Round(float64(total) / float64(asked) * float64(fg.Persisted)))
	}
	for src, ds := range fg.durations {
		slices.SortFunc(ds, func(a, b sample) int { return cmp.Compare(a.v, b.v) })
		var n int64
		for _, d := range ds {
			n += d.n
		}
		if fg.Latency == nil {
			fg.Latency = map[string]Latency{}
		}
		fg.Latency[src] = Latency{Calls: n, P50: time.Duration(percentile(ds, n, 0.50)), P99: time.Duration(percentile(ds, n, 0.99))}
	}
	fg.durations = nil
}

// percentile of n calls' durations held as sorted weighted samples, nearest rank: exact over
// calls' own lines, within a histogram bucket (6.25%) for calls counted by aggregates.
func percentile(sorted []sample, n int64, p float64) int64 {
	if len(sorted) == 0 || n <= 0 {
		return 0
	}
	rank := max(int64(math.Ceil(p*float64(n))), 1)
	var seen int64
	for _, s := range sorted {
		if seen += s.n; seen >= rank {
			return s.v
		}
	}
	return sorted[len(sorted)-1].v
}

// ComputeStats summarises events at or after since (zero: all), overall and per role.method. An
// aggregate line counts as the Count calls it stands for; latency percentiles merge every line's
// durations, each aggregate's as its histogram buckets (see percentile).
func ComputeStats(events []Event, since time.Time) Stats {
	b := newStatsBuilder(since)
	for i := range events {
		b.add(&events[i])
	}
	return b.finish()
}

// statsBuilder is ComputeStats one event at a time, so that a store's log is summarised as it is
// read, never held whole (StoreStats).
type statsBuilder struct {
	st  Stats
	per map[[2]string]*Figures
}

func newStatsBuilder(since time.Time) *statsBuilder {
	return &statsBuilder{st: Stats{Since: since}, per: map[[2]string]*Figures{}}
}

// inWindow reports whether e counts: at or after since. An aggregate is dated by its last call:
// one that straddles since counts whole.
func (b *statsBuilder) inWindow(e *Event) bool {
	return b.st.Since.IsZero() || !e.Time.Before(b.st.Since)
}

func (b *statsBuilder) add(e *Event) {
	st := &b.st
	if !b.inWindow(e) {
		return
	}
	if e.Kind == EventDropped {
		for _, n := range e.Dropped {
			st.EventsDropped += n
		}
		for _, n := range e.Lost {
			st.EventsDropped += n
		}
		return
	}
	st.Overall.add(e)
	if e.Method == "" && IsOperatorAction(e) {
		return // of a role (define_role) or the store (dismiss): no method's row
	}
	k := [2]string{e.Role, e.Method}
	fg := b.per[k]
	if fg == nil {
		fg = &Figures{}
		b.per[k] = fg
	}
	fg.add(e)
}

func (b *statsBuilder) finish() Stats {
	st := b.st
	st.Overall.finish()
	st.Methods = make([]MethodFigures, 0, len(b.per))
	for k, fg := range b.per {
		fg.finish()
		st.Methods = append(st.Methods, MethodFigures{Role: k[0], Method: k[1], Figures: *fg})
	}
	sort.Slice(st.Methods, func(i, j int) bool {
		if st.Methods[i].Role != st.Methods[j].Role {
			return st.Methods[i].Role < st.Methods[j].Role
		}
		return st.Methods[i].Method < st.Methods[j].Method
	})
	return st
}

// ReadEvents reads a store's event log, the rotated files (oldest first) and the current one. A
// line that does not parse (a crash mid-write) is skipped.
func ReadEvents(store string) ([]Event, error) {
	return readRotatedLines(filepath.Join(store, "events", "forge.jsonl"), nil)
}

// readRotatedLines reads a log and its rotated files (base.N, oldest first, then base), decoding
// only the lines keep accepts (nil: every line): a cheap test on the raw line spares decoding the
// lines a reader does not want.
func readRotatedLines(base string, keep func(line []byte) bool) ([]Event, error) {
	var out []Event
	err := scanRotated(base, keep, func(e *Event) { out = append(out, *e) })
	return out, err
}

// scanRotated calls fn with each event of a log and its rotated files (base.N, oldest first,
// then base) whose line keep accepts (nil: every line), one at a time. A line that does not parse
// (a crash mid-write) is skipped.
func scanRotated(base string, keep func(line []byte) bool, fn func(*Event)) error {
	for i := eventLogKeep; i >= 0; i-- {
		path := base
		if i > 0 {
			path = fmt.Sprintf("%s.%d", base, i)
		}
		f, err := storepath.OpenRegular(path, "read events from")
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("forge: events: %w", err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			if keep != nil && !keep(sc.Bytes()) {
				continue
			}
			var e Event
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				fn(&e)
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return fmt.Errorf("forge: events: read %s: %w", path, err)
		}
	}
	return nil
}

// StoreStats reads a store's event log and its records (ReadRecords) and summarises them (see
// ComputeStats): the records whose lines the log rotated away count too (Stats.RecordsOnly).
func StoreStats(store string, since time.Time) (Stats, error) {
	b := newStatsBuilder(since)
	in := map[recordKey]bool{} // the records the log still holds
	var logSince time.Time
	first := true
	err := scanRotated(filepath.Join(store, "events", "forge.jsonl"), nil, func(e *Event) {
		if first {
			logSince, first = e.Time, false
		}
		if isRecord(e) {
			in[recordKeyOf(e)] = true
		}
		b.add(e)
	})
	if err != nil {
		return Stats{}, err
	}
	var only int64
	err = scanRotated(filepath.Join(store, "events", recordsFile), nil, func(e *Event) {
		if in[recordKeyOf(e)] {
			return
		}
		if b.inWindow(e) {
			only++
		}
		b.add(e)
	})
	if err != nil {
		return Stats{}, err
	}
	st := b.finish()
	st.RecordsOnly = only
	if only > 0 && !first {
		st.LogSince = logSince
	}
	return st, nil
}

// recordKey names one line: a record is the same line in both files.
type recordKey struct {
	call         ID
	at           int64
	action, kind string
}

func recordKeyOf(e *Event) recordKey {
	return recordKey{e.CallID, e.Time.UnixNano(), e.Action, e.Kind}
}

// ParseAge reads an age, for a window that ends now (stats' since) or a retention (prune's
// older-than): a Go duration ("24h", "90m") or a number of days ("7d"); zero is an age
// (everything as of now), a negative one is not. One reading for the CLI, HTTP and MCP.
func ParseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if d, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(d); err == nil && n >= 0 && n <= math.MaxInt64/int(24*time.Hour) {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	} else if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return d, nil
	}
	return 0, fmt.Errorf("%q is not an age: write e.g. 24h, 90m or 7d (0s: up to now)", s)
}

// Stats summarises this forge's store's event log, after writing queued events.
func (f *Forge) Stats(since time.Time) (Stats, error) {
	if f.events != nil {
		f.events.sync()
	}
	return StoreStats(f.store.LocalDir(), since)
}

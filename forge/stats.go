package forge

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/artifactforge/forge/provider"
)

// Stats is what reuse bought, computed from the event log: one implementation for `forge stats`,
// `forge serve`'s /v1/stats and the MCP server.
type Stats struct {
	Since   time.Time       `json:"since,omitzero"`
	Overall Figures         `json:"overall"`
	Methods []MethodFigures `json:"methods"`
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
	// Operator actions (regen, edit) are in the log but are not calls.
	OperatorActions int64 `json:"operator_actions"`
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

	durations map[string][]int64
}

// Latency percentiles of one program source.
type Latency struct {
	Calls int64         `json:"calls"`
	P50   time.Duration `json:"p50_ns"`
	P99   time.Duration `json:"p99_ns"`
}

func (fg *Figures) add(e *Event) {
	if e.Action == "edit" || (e.Action == "regenerate" && e.Reason == "operator") {
		fg.OperatorActions++
		return
	}
	fg.Calls++
	if e.OK {
		fg.OK++
	}
	switch e.ProgramSource {
	case SourcePersisted:
		fg.Persisted++
	case SourceGenerated:
		fg.Generated++
	case SourceRepaired:
		fg.Repaired++
	case SourceRegenerated:
		fg.Regenerated++
	}
	fg.ProviderCalls += int64(e.ProviderCalls)
	fg.Tokens.InputTokens += e.Tokens.InputTokens
	fg.Tokens.OutputTokens += e.Tokens.OutputTokens
	fg.Tokens.CachedTokens += e.Tokens.CachedTokens
	if e.RepairAttempted {
		fg.RepairsAttempted++
		if e.RepairSucceeded {
			fg.RepairsSucceeded++
		}
	}
	if !e.OK && e.FailureClass != "" {
		if fg.Failures == nil {
			fg.Failures = map[string]int64{}
		}
		fg.Failures[e.FailureClass+"/"+e.FailureRule]++
	}
	if fg.durations == nil {
		fg.durations = map[string][]int64{}
	}
	fg.durations[e.ProgramSource] = append(fg.durations[e.ProgramSource], e.DurationNS)
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
		slices.Sort(ds)
		if fg.Latency == nil {
			fg.Latency = map[string]Latency{}
		}
		fg.Latency[src] = Latency{Calls: int64(len(ds)), P50: time.Duration(percentile(ds, 0.50)), P99: time.Duration(percentile(ds, 0.99))}
	}
	fg.durations = nil
}

// percentile of sorted values, nearest rank.
func percentile(sorted []int64, p float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// ComputeStats summarises events at or after since (zero: all), overall and per role.method.
func ComputeStats(events []Event, since time.Time) Stats {
	st := Stats{Since: since}
	per := map[[2]string]*Figures{}
	for i := range events {
		e := &events[i]
		if !since.IsZero() && e.Time.Before(since) {
			continue
		}
		st.Overall.add(e)
		k := [2]string{e.Role, e.Method}
		fg := per[k]
		if fg == nil {
			fg = &Figures{}
			per[k] = fg
		}
		fg.add(e)
	}
	st.Overall.finish()
	st.Methods = make([]MethodFigures, 0, len(per))
	for k, fg := range per {
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
	base := filepath.Join(store, "events", "forge.jsonl")
	var out []Event
	for i := eventLogKeep; i >= 0; i-- {
		path := base
		if i > 0 {
			path = fmt.Sprintf("%s.%d", base, i)
		}
		f, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("forge: events: %w", err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			var e Event
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				out = append(out, e)
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("forge: events: read %s: %w", path, err)
		}
	}
	return out, nil
}

// StoreStats reads a store's event log and summarises it (see ComputeStats).
func StoreStats(store string, since time.Time) (Stats, error) {
	evs, err := ReadEvents(store)
	if err != nil {
		return Stats{}, err
	}
	return ComputeStats(evs, since), nil
}

// Stats summarises this forge's store's event log, after writing queued events.
func (f *Forge) Stats(since time.Time) (Stats, error) {
	if f.events != nil {
		f.events.sync()
	}
	return StoreStats(f.store.Root(), since)
}

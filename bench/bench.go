// Package bench is `forge bench`: it builds a store of generated methods (no model: their code is
// written here), calls them warm, round-robin, Zipf-distributed or as processes, and reports
// latency, memory and goroutines against a baseline measured in the same run (README, "Sizing").
package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/internal/jsonval"
	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/sandbox"
)

// Backends a bench can run on: BackendDefault, the name of any registered sandbox backend
// (sandbox.Backends: "wasm", "yaegi" with forge/all), or NAME-MODE for a backend that contains
// hostile code in isolation mode MODE (sandbox.Backend.ContainsIsolated: "yaegi-process").
const BackendDefault = "default" // what a contract that names no sandbox gets here

// Call patterns of the warm phase.
const (
	PatternOne        = "one"         // every call to the first method
	PatternRoundRobin = "round-robin" // method 0, 1, ..., N-1, 0, ... across all goroutines
	PatternZipf       = "zipf"        // Zipf-distributed (s=1.1): a few hot methods, a long cold tail
)

// Config is one bench run. The zero value of every field but Methods is a default.
type Config struct {
	Methods     int           `json:"methods"`
	Roles       int           `json:"roles"`       // default: ceil(Methods/10), at least 1
	Backend     string        `json:"backend"`     // default BackendDefault
	Concurrency int           `json:"concurrency"` // goroutines calling; default 1
	Pattern     string        `json:"pattern"`     // default PatternRoundRobin
	Calls       int           `json:"calls"`       // warm calls; default max(10,000, 10 x Methods); ignored with Duration
	Duration    time.Duration `json:"duration_ns,omitempty"`
	// BaselineCalls is the same-run baseline, before the warm phase and with the same
	// concurrency: the methods the warm pattern picks, each called BaselineRun times in a row,
	// the first call of each run untimed (default min(Calls, 20,000); negative: none). Its p50 is
	// the single-artifact warm p50 of the same work (see RATIONALE, "The bench baseline").
	BaselineCalls int `json:"baseline_calls"`
	// BaselineRun is how many calls in a row the baseline makes of each method (default 20).
	BaselineRun int `json:"baseline_run"`
	// GenericPct is the share of methods (percent) that import slices (generic standard library).
	GenericPct int `json:"generic_pct"`
	// Generations per artifact (1..registry.MaxHistory): more generations make larger files, as a
	// repaired artifact's are.
	Generations int `json:"generations"`
	// FlushTouched are the numbers of touched artifacts whose metrics flush is timed (default
	// 1,000 and Methods, each at most Methods).
	FlushTouched []int `json:"flush_touched"`
	// FlushInterval of the forge's metrics recorder during the run (default 1s, as in production).
	FlushInterval time.Duration `json:"flush_interval_ns"`
	// MaxLivePrograms is the forge's live-set budget (forge.Options.MaxLivePrograms: 0 the
	// default, negative none).
	MaxLivePrograms int `json:"max_live_programs,omitempty"`
	// Store is the store directory to build (must be empty or new); "" is a temporary directory
	// removed after the run unless Keep.
	Store string `json:"store,omitempty"`
	Keep  bool   `json:"keep"`
	// ProcessRuns > 0 times `forge call` as a whole process (Executable) that many times, against
	// `forge version` and `forge --version` (process start).
	ProcessRuns int    `json:"process_runs"`
	Executable  string `json:"-"`
	// ProcessOnly skips the in-process phases (cold, baseline, warm, memory): the store, the
	// metrics flush and the processes only, for stores too large to compile in one process.
	ProcessOnly bool `json:"process_only,omitempty"`
	// Regens > 0 replaces the first method's code that many times after the warm phase
	// (Forge.Edit: the gate, a new generation and a new program, as a regeneration makes, with no
	// model), calling it after each, and reports the memory before and after.
	Regens int `json:"regens,omitempty"`
	// MaxRSS > 0 stops the run when this process's RSS passes it (a shared machine's safety
	// net); the report says where it stopped.
	MaxRSS int64 `json:"max_rss,omitempty"`
	// Progress, if set, is told how far each phase is (total -1: a timed phase).
	Progress func(phase string, done, total int64) `json:"-"`
}

// Report is what a bench run measured. Durations are nanoseconds in JSON.
type Report struct {
	Config    Config    `json:"config"`
	Host      Host      `json:"host"`
	Placement string    `json:"placement"` // backend and isolation the methods ran on
	Store     StoreCost `json:"store"`
	Cold      Latency   `json:"cold"`
	Baseline  *Latency  `json:"baseline,omitempty"` // each method alone (see Config.BaselineCalls), same run
	Warm      Latency   `json:"warm"`
	// WarmVsBaseline is warm p50 / baseline p50.
	WarmVsBaseline float64       `json:"warm_p50_vs_baseline,omitempty"`
	Memory         Memory        `json:"memory"`
	Events         Events        `json:"events"`
	ForgeFlush     time.Duration `json:"forge_flush_ns"`
	Flush          []FlushCost   `json:"flush"`
	Process        *ProcessCost  `json:"process,omitempty"`
	Regen          *RegenCost    `json:"regen,omitempty"`
	// Aborted says why the run stopped early (the RSS limit, a cancelled context); figures after
	// that point are missing or partial.
	Aborted string `json:"aborted,omitempty"`
}

// Host is where the run took place.
type Host struct {
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	GoVersion  string `json:"go_version"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	CPUs       int    `json:"cpus"`
}

// StoreCost is what building the store cost: one PutRole per role and one Update (a durable
// artifact with its generations) per method, one after another.
type StoreCost struct {
	Dir          string        `json:"dir"`
	Kept         bool          `json:"kept"`
	Roles        int           `json:"roles"`
	Artifacts    int           `json:"artifacts"`
	Seconds      float64       `json:"seconds"`
	WritesPerSec float64       `json:"writes_per_sec"`
	WriteP50     time.Duration `json:"write_p50_ns"`
	WriteP99     time.Duration `json:"write_p99_ns"`
	Bytes        int64         `json:"bytes"` // roles/ and tools/ on disk
	// CacheBytes is the store's cache/ after the cold phase: wasm modules and compiled code.
	CacheBytes int64 `json:"cache_bytes"`
}

// Latency is one phase's calls.
type Latency struct {
	Calls        int64         `json:"calls"`
	Failures     int64         `json:"failures"`
	WrongAnswers int64         `json:"wrong_answers"`
	FirstError   string        `json:"first_error,omitempty"`
	Distinct     int           `json:"distinct_methods"`
	P50          time.Duration `json:"p50_ns"`
	P99          time.Duration `json:"p99_ns"`
	Max          time.Duration `json:"max_ns"`
	Seconds      float64       `json:"seconds"`
	CallsPerSec  float64       `json:"calls_per_sec"`
}

// Memory is the process after the warm phase (after runtime.GC), and its growth since the forge
// was opened on the built store.
type Memory struct {
	Source       string `json:"source"`
	RSS          int64  `json:"rss_bytes"`
	HWM          int64  `json:"hwm_bytes"`
	RSSBefore    int64  `json:"rss_before_bytes"`
	HeapInuse    int64  `json:"heap_inuse_bytes"`
	HeapBefore   int64  `json:"heap_before_bytes"`
	Goroutines   int    `json:"goroutines"`
	GoroutinesB4 int    `json:"goroutines_before"`
	LivePrograms int    `json:"live_programs"`
	// HeapPerArtifact and RSSPerArtifact divide the growth since opening by the live programs
	// (or by the methods called, when the forge keeps none).
	HeapPerArtifact int64 `json:"heap_per_artifact_bytes"`
	RSSPerArtifact  int64 `json:"rss_per_artifact_bytes"`
	// ChildrenRSS is the RSS of this process's children (yaegi worker processes), Linux only.
	ChildrenRSS int64 `json:"children_rss_bytes"`
	Children    int   `json:"children"`
	MaxRSSSeen  int64 `json:"max_rss_seen_bytes"`
}

// Events is what the event log cost during the warm phase.
type Events struct {
	BytesBefore int64 `json:"bytes_before"` // events/ on disk before the warm phase
	BytesAfter  int64 `json:"bytes_after"`  // and after it (rotation deletes old files)
	// Written is what the warm phase appended to the log, rotations included.
	Written      int64   `json:"bytes_written"`
	BytesPerCall float64 `json:"bytes_per_call"`
	Dropped      int64   `json:"dropped"`
}

// FlushCost is one metrics flush of Touched artifacts by a registry.Recorder (what the forge's
// background flusher does each interval).
type FlushCost struct {
	Touched int           `json:"touched"`
	Merged  int           `json:"merged"`
	Time    time.Duration `json:"ns"`
}

// RegenCost is what replacing one method's code Count times left behind: memory after a GC
// before the first replacement and after the last, and the replacements' own time.
type RegenCost struct {
	Count      int           `json:"count"`
	Failures   int           `json:"failures"`
	FirstError string        `json:"first_error,omitempty"`
	EditP50    time.Duration `json:"edit_p50_ns"`
	RSSBefore  int64         `json:"rss_before_bytes"`
	RSSAfter   int64         `json:"rss_after_bytes"`
	HeapBefore int64         `json:"heap_before_bytes"`
	HeapAfter  int64         `json:"heap_after_bytes"`
	// Growth is RSSAfter / RSSBefore - 1.
	Growth       float64 `json:"rss_growth"`
	LiveBefore   int     `json:"live_programs_before"`
	LiveAfter    int     `json:"live_programs_after"`
	ChildrenRSS0 int64   `json:"children_rss_before_bytes"`
	ChildrenRSS1 int64   `json:"children_rss_after_bytes"`
}

// ProcessCost is `forge call` as a whole process against process start.
type ProcessCost struct {
	Runs         int           `json:"runs"`
	Failures     int           `json:"failures"`
	FirstError   string        `json:"first_error,omitempty"`
	CallP50      time.Duration `json:"call_p50_ns"`
	CallMax      time.Duration `json:"call_max_ns"`
	VersionP50   time.Duration `json:"version_cmd_p50_ns"` // forge version
	VersionFlagP time.Duration `json:"version_flag_p50_ns"`
	LsP50        time.Duration `json:"ls_p50_ns"` // forge ls --json: the whole store listed
	// Compacted is how many journal records were folded into the files before the runs, so
	// that they measure a store at rest (a process reads every record not yet compacted; right
	// after a flush of many artifacts a call pays for reading them).
	Compacted int `json:"compacted_records"`
	// Ratio is call p50 / `forge --version` p50.
	Ratio float64 `json:"ratio"`
}

// ConfigError is a Config that cannot run (a value out of range, a store directory in use):
// the caller's to fix.
type ConfigError struct{ Err error }

func (e ConfigError) Error() string { return e.Err.Error() }
func (e ConfigError) Unwrap() error { return e.Err }

// normalize fills the defaults and checks the values.
func (c *Config) normalize() error {
	if c.Methods < 1 {
		return fmt.Errorf("bench: --methods %d: build at least one method", c.Methods)
	}
	if c.Roles == 0 {
		c.Roles = max(1, (c.Methods+9)/10)
	}
	if c.Roles < 1 || c.Roles > c.Methods {
		return fmt.Errorf("bench: --roles %d: use 1 to %d (the number of methods)", c.Roles, c.Methods)
	}
	if c.Backend == "" {
		c.Backend = BackendDefault
	}
	if _, _, ok := placementOf(c.Backend); !ok {
		return fmt.Errorf("bench: --backend %q: use %s", c.Backend, BackendChoices())
	}
	if c.Concurrency == 0 {
		c.Concurrency = 1
	}
	if c.Concurrency < 1 {
		return fmt.Errorf("bench: --concurrency %d: use 1 or more goroutines", c.Concurrency)
	}
	if c.Pattern == "" {
		c.Pattern = PatternRoundRobin
	}
	switch c.Pattern {
	case PatternOne, PatternRoundRobin, PatternZipf:
	default:
		return fmt.Errorf("bench: --pattern %q: use one, round-robin or zipf", c.Pattern)
	}
	if c.Calls < 0 || c.Duration < 0 {
		return errors.New("bench: --calls and --duration must not be negative")
	}
	if c.Duration == 0 && c.Calls == 0 {
		c.Calls = max(10_000, 10*c.Methods)
	}
	if c.Duration > 0 {
		c.Calls = 0
	}
	if c.BaselineCalls == 0 {
		c.BaselineCalls = 20_000
		if c.Calls > 0 {
			c.BaselineCalls = min(c.Calls, 20_000)
		}
	}
	if c.BaselineRun < 0 {
		return errors.New("bench: the baseline run length must not be negative")
	}
	if c.BaselineRun == 0 {
		c.BaselineRun = 20
	}
	if c.GenericPct < 0 || c.GenericPct > 100 {
		return fmt.Errorf("bench: --generic %d: a percentage, 0 to 100", c.GenericPct)
	}
	if c.Generations == 0 {
		c.Generations = 1
	}
	if c.Generations < 1 || c.Generations > registry.MaxHistory {
		return fmt.Errorf("bench: --generations %d: use 1 to %d (what an artifact keeps)", c.Generations, registry.MaxHistory)
	}
	if c.FlushTouched == nil {
		c.FlushTouched = []int{min(1000, c.Methods)}
		if c.Methods > 1000 {
			c.FlushTouched = append(c.FlushTouched, c.Methods)
		}
	}
	for i, n := range c.FlushTouched {
		if n < 1 {
			return fmt.Errorf("bench: flush of %d touched artifacts: use 1 or more", n)
		}
		c.FlushTouched[i] = min(n, c.Methods)
	}
	if c.FlushInterval == 0 {
		c.FlushInterval = registry.DefaultFlushInterval
	}
	if c.Regens < 0 {
		return fmt.Errorf("bench: --regens %d: a number of replacements, 0 for none", c.Regens)
	}
	if c.ProcessRuns < 0 {
		return fmt.Errorf("bench: --process %d: a number of runs, 0 for none", c.ProcessRuns)
	}
	if c.ProcessOnly && c.ProcessRuns == 0 {
		return errors.New("bench: --process-only needs --process N (the number of forge call processes to time)")
	}
	if c.ProcessRuns > 0 && c.Executable == "" {
		return errors.New("bench: --process needs the forge executable to run; this is a bug in the caller")
	}
	return nil
}

// placementOf is the sandbox and limits of every role's contract for a --backend (also the
// forge's default sandbox); ok is false for a backend that is not registered.
func placementOf(backend string) (sandboxName string, limits *registry.Limits, ok bool) {
	if backend == BackendDefault {
		return "", nil, true
	}
	for _, b := range sandbox.Backends() {
		switch {
		case backend == b.Name:
			return b.Name, nil, true
		case b.ContainsIsolated != "" && backend == b.Name+"-"+b.ContainsIsolated:
			return b.Name, &registry.Limits{Isolation: b.ContainsIsolated}, true
		}
	}
	return "", nil, false
}

// BackendChoices lists what --backend takes in this program, for help texts and errors.
func BackendChoices() string {
	var out []string
	for _, b := range sandbox.Backends() {
		out = append(out, b.Name)
		if b.ContainsIsolated != "" {
			out = append(out, b.Name+"-"+b.ContainsIsolated)
		}
	}
	return strings.Join(append(out, BackendDefault), ", ")
}

// placementLabel names where a backend's methods run.
func placementLabel(backend string) (string, error) {
	if backend == BackendDefault {
		p, err := forge.ChooseDefault("", sandbox.Backends())
		if err != nil {
			return "", fmt.Errorf("bench: --backend default: %w", err)
		}
		return "default: " + p.String(), nil
	}
	name, limits, _ := placementOf(backend)
	p := forge.Placement{Backend: name}
	if limits != nil {
		p.Isolation = limits.Isolation
	}
	return p.String(), nil
}

// Run builds the store, runs the phases and returns what it measured. A failure to build or open
// the store is an error; failing calls are counted in the report (a bench must show them, not
// hide them). When the run stops early (ctx, MaxRSS) the report says so in Aborted.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.normalize(); err != nil {
		return nil, ConfigError{err}
	}
	rep := &Report{Config: cfg, Host: Host{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, GoVersion: runtime.Version(),
		GOMAXPROCS: runtime.GOMAXPROCS(0), CPUs: runtime.NumCPU()}}
	dir, cleanup, err := storeDir(cfg.Store, cfg.Keep)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	rep.Store.Dir, rep.Store.Kept = dir, cfg.Store != "" || cfg.Keep

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	guard := startGuard(cfg.MaxRSS, cancel)
	defer guard.stop()

	ms := makeMethods(cfg.Methods, cfg.Roles, cfg.GenericPct)
	if err := buildStore(ctx, dir, cfg, ms, &rep.Store); err != nil {
		return nil, err
	}
	if aborted(ctx, rep) {
		return rep, nil
	}

	rep.Placement, err = placementLabel(cfg.Backend)
	if err != nil {
		return nil, err
	}
	if cfg.ProcessOnly {
		return rep, afterForge(ctx, dir, cfg, ms, rep)
	}
	def, _, _ := placementOf(cfg.Backend)
	f, err := forge.Open(forge.Options{Store: dir, DefaultSandbox: def, FlushInterval: cfg.FlushInterval, MaxLivePrograms: cfg.MaxLivePrograms})
	if err != nil {
		return nil, fmt.Errorf("bench: open the forge on %s: %w", dir, err)
	}
	closed := false
	closeForge := func() {
		if !closed {
			closed = true
			_ = f.Close()
		}
	}
	defer closeForge()
	heapB4, gB4 := heapAfterGC(), runtime.NumGoroutine()
	rssB4 := readMem().RSS
	// measure records the process's memory now (after the warm phase, or where the run stopped).
	measure := func() {
		rep.Memory = Memory{HeapBefore: heapB4, GoroutinesB4: gB4, RSSBefore: rssB4}
		rep.Memory.HeapInuse = heapAfterGC()
		mem := readMem()
		rep.Memory.Source, rep.Memory.RSS, rep.Memory.HWM = mem.Source, mem.RSS, mem.HWM
		rep.Memory.Goroutines = runtime.NumGoroutine()
		rep.Memory.LivePrograms = f.LivePrograms()
		live := int64(rep.Memory.LivePrograms)
		if live == 0 {
			live = rep.Cold.Calls - rep.Cold.Failures
		}
		if live > 0 {
			rep.Memory.HeapPerArtifact = (rep.Memory.HeapInuse - heapB4) / live
			rep.Memory.RSSPerArtifact = (rep.Memory.RSS - rssB4) / live
		}
		if cr, n, ok := childrenRSS(); ok {
			rep.Memory.ChildrenRSS, rep.Memory.Children = cr, n
		}
		rep.Memory.MaxRSSSeen = guard.maxSeen()
	}

	// Cold: the first call of every method compiles it.
	rep.Cold = runPhase(ctx, f, ms, cfg.Concurrency, int64(len(ms)), 0, each(), phaseProgress(cfg, "cold"))
	rep.Store.CacheBytes = dirBytes(filepath.Join(dir, "cache"))
	if aborted(ctx, rep) {
		measure() // where it stopped: the memory of the methods compiled so far
		return rep, nil
	}
	if cfg.BaselineCalls > 0 {
		runs := int64(cfg.BaselineRun)
		pick := inRuns(picker(cfg.Pattern, len(ms)), (int64(cfg.BaselineCalls)+runs-1)/runs, runs)
		b := runPhase(ctx, f, ms, cfg.Concurrency, int64(cfg.BaselineCalls), 0, pick, phaseProgress(cfg, "baseline (each method alone)"))
		rep.Baseline = &b
		if aborted(ctx, rep) {
			measure()
			return rep, nil
		}
	}

	evDir := filepath.Join(dir, "events")
	f.Flush()
	evB4, dropB4 := dirBytes(evDir), f.Health().EventsDropped
	meter := newLogMeter(evDir, 20*time.Millisecond)
	rep.Warm = runPhase(ctx, f, ms, cfg.Concurrency, int64(cfg.Calls), cfg.Duration, picker(cfg.Pattern, len(ms)), phaseProgress(cfg, "warm ("+cfg.Pattern+")"))
	if rep.Baseline != nil && rep.Baseline.P50 > 0 {
		rep.WarmVsBaseline = float64(rep.Warm.P50) / float64(rep.Baseline.P50)
	}

	measure() // after the warm phase, before anything is flushed or closed

	// The forge's own flush (metrics since the last background flush, queued events, lessons),
	// then the event log's growth over the warm phase.
	t0 := time.Now()
	f.Flush()
	rep.ForgeFlush = time.Since(t0)
	rep.Events = Events{BytesBefore: evB4, BytesAfter: dirBytes(evDir), Written: meter.written(), Dropped: f.Health().EventsDropped - dropB4}
	if rep.Warm.Calls > 0 {
		rep.Events.BytesPerCall = float64(rep.Events.Written) / float64(rep.Warm.Calls)
	}
	if aborted(ctx, rep) {
		return rep, nil
	}
	if cfg.Regens > 0 {
		rg := regenerate(ctx, f, &ms[0], cfg.Regens, phaseProgress(cfg, "regenerations"))
		rep.Regen = &rg
		if aborted(ctx, rep) {
			return rep, nil
		}
	}
	closeForge()
	return rep, afterForge(ctx, dir, cfg, ms, rep)
}

// afterForge runs the phases that need the forge closed: the timed metrics flushes and the
// forge call processes.
func afterForge(ctx context.Context, dir string, cfg Config, ms []method, rep *Report) error {
	for _, n := range cfg.FlushTouched {
		fc, err := timeFlush(dir, ms[:n])
		if err != nil {
			return err
		}
		rep.Flush = append(rep.Flush, fc)
	}
	if cfg.ProcessRuns > 0 {
		compacted, err := compactStore(dir)
		if err != nil {
			return err
		}
		pc := timeProcess(ctx, cfg.Executable, dir, ms, cfg.ProcessRuns, phaseProgress(cfg, "process"))
		pc.Compacted = compacted
		rep.Process = &pc
	}
	aborted(ctx, rep)
	return nil
}

// aborted records why ctx ended, if it did.
func aborted(ctx context.Context, rep *Report) bool {
	if ctx.Err() == nil {
		return false
	}
	rep.Aborted = context.Cause(ctx).Error()
	return true
}

// storeDir returns the directory to build the store in and what to do after the run.
func storeDir(dir string, keep bool) (string, func(), error) {
	if dir == "" {
		d, err := os.MkdirTemp("", "forge-bench-")
		if err != nil {
			return "", nil, fmt.Errorf("bench: create a temporary store: %w (set $TMPDIR or pass --store DIR)", err)
		}
		if keep {
			return d, func() {}, nil
		}
		return d, func() { _ = os.RemoveAll(d) }, nil
	}
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return dir, func() {}, nil
	case err != nil:
		return "", nil, fmt.Errorf("bench: --store %s: %w", dir, err)
	case len(ents) > 0:
		return "", nil, ConfigError{fmt.Errorf("bench: --store %s is not empty: bench builds a throwaway store of its own; pass a new or empty directory (or none for a temporary one)", dir)}
	}
	return dir, func() {}, nil
}

// buildStore writes the roles and the artifacts as a generation would leave them: each artifact
// durable, verified code promoted through its generations, counters of its first calls.
func buildStore(ctx context.Context, dir string, cfg Config, ms []method, cost *StoreCost) error {
	s, err := registry.Open(dir)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	sb, limits, _ := placementOf(cfg.Backend)
	contracts := make([]registry.Contract, cfg.Roles)
	for r := range contracts {
		contracts[r] = registry.Contract{Role: roleName(r), Purpose: fmt.Sprintf("bench role %d: small arithmetic, loop and string methods", r),
			Methods: map[string]string{}, Sandbox: sb, Limits: limits}
	}
	for i := range ms {
		c := &contracts[i%cfg.Roles]
		c.Methods[ms[i].Name] = ms[i].Decl
		if c.Acceptance == nil {
			c.Acceptance = &registry.Acceptance{Examples: []registry.Example{{Method: ms[i].Name, Args: ms[i].Args, Expect: ms[i].Want}}}
		}
	}
	progress := phaseProgress(cfg, "store")
	total := int64(len(contracts) + len(ms))
	lat := make([]time.Duration, 0, total)
	fps := make([]string, len(contracts))
	start := time.Now()
	for r, c := range contracts {
		if err := context.Cause(ctx); err != nil {
			return nil
		}
		t0 := time.Now()
		rec, err := s.PutRole(c, t0)
		if err != nil {
			return fmt.Errorf("bench: store role %s: %w", c.Role, err)
		}
		lat = append(lat, time.Since(t0))
		fps[r] = rec.Fingerprint
		progress(int64(r+1), total)
	}
	for i := range ms {
		if ctx.Err() != nil {
			return nil
		}
		m := &ms[i]
		sig, err := sandbox.ParseSignature(sandbox.Source{Code: m.Code, Func: m.Name})
		if err != nil {
			return fmt.Errorf("bench: method %s: the generated code does not parse: %w; this is a bug in package bench", m.Name, err)
		}
		t0 := time.Now()
		_, err = s.Update(m.Role, m.Name, func(a *registry.Artifact, _ bool) error {
			for g := 1; g <= cfg.Generations; g++ {
				code, trigger := m.Older, "repair:intrinsic"
				if g == 1 {
					trigger = "initial_forge"
				}
				if g == cfg.Generations {
					code = m.Code
				}
				a.Promote(code, trigger, "bench", forge.PromptVersion, t0)
			}
			a.Lifecycle = registry.Durable
			a.ContractFingerprint = fps[i%cfg.Roles]
			a.Signature = registry.Signature{Func: sig.Func, Decl: m.Decl, ParamsSchema: sig.ParamsSchema}
			a.SuccessCount = registry.DurableAfter
			a.Recent = "sss"
			a.LastUsedAt = &t0
			return nil
		})
		if err != nil {
			return fmt.Errorf("bench: store artifact %s.%s: %w", m.Role, m.Name, err)
		}
		lat = append(lat, time.Since(t0))
		if i%64 == 63 || i == len(ms)-1 {
			progress(int64(len(contracts)+i+1), total)
		}
	}
	el := time.Since(start)
	cost.Roles, cost.Artifacts, cost.Seconds = len(contracts), len(ms), el.Seconds()
	cost.WritesPerSec = float64(len(lat)) / el.Seconds()
	slices.Sort(lat)
	cost.WriteP50, cost.WriteP99 = pct(lat, 50), pct(lat, 99)
	cost.Bytes = dirBytes(filepath.Join(dir, "roles")) + dirBytes(filepath.Join(dir, "tools"))
	return nil
}

// pickFunc makes, for one calling goroutine with its own random source, the function that
// chooses the method of call seq.
type pickFunc func(rng *rand.Rand) func(seq int64) int

// inRuns is the baseline's pattern: the first n methods pattern picks (one fixed random source,
// so that every goroutine agrees), each called run times in a row; a negative index marks the
// first call of each run, which runPhase makes but does not time (it is the one call of the run
// whose method was not the last one called).
func inRuns(pattern pickFunc, n, run int64) pickFunc {
	order := make([]int, n)
	next := pattern(rand.New(rand.NewPCG(1, 0x5eed)))
	for k := range order {
		order[k] = next(int64(k))
	}
	return func(*rand.Rand) func(int64) int {
		return func(seq int64) int {
			idx := order[min(seq/run, n-1)]
			if seq%run == 0 {
				return -1 - idx
			}
			return idx
		}
	}
}

func each() pickFunc {
	return func(*rand.Rand) func(int64) int { return func(seq int64) int { return int(seq) } }
}

func picker(pattern string, n int) pickFunc {
	switch pattern {
	case PatternOne:
		return func(*rand.Rand) func(int64) int { return func(int64) int { return 0 } }
	case PatternZipf:
		return func(rng *rand.Rand) func(int64) int {
			z := rand.NewZipf(rng, 1.1, 1, uint64(n-1))
			return func(int64) int { return int(z.Uint64()) }
		}
	}
	return func(*rand.Rand) func(int64) int { return func(seq int64) int { return int(seq % int64(n)) } }
}

// runPhase makes calls (calls > 0) or calls for dur from conc goroutines, method pick(seq), and
// returns their latencies. Every answer is checked against the method's expected value.
func runPhase(ctx context.Context, f *forge.Forge, ms []method, conc int, calls int64, dur time.Duration, pick pickFunc, progress func(done, total int64)) Latency {
	var next, fails, wrong atomic.Int64
	var firstErr atomic.Pointer[string]
	lats := make([][]time.Duration, conc)
	seen := make([][]bool, conc)
	total := calls
	if dur > 0 {
		total = -1
	}
	start := time.Now()
	deadline := start.Add(dur)
	var wg sync.WaitGroup
	for g := 0; g < conc; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			next1 := pick(rand.New(rand.NewPCG(uint64(g)+1, 0x5eed)))
			hint := 1024
			if calls > 0 {
				hint = int(calls)/conc + 1
			}
			local := make([]time.Duration, 0, hint)
			hit := make([]bool, len(ms))
			for ctx.Err() == nil {
				seq := next.Add(1) - 1
				if calls > 0 && seq >= calls {
					break
				}
				idx, timed := next1(seq), true
				if idx < 0 { // untimed (see inRuns)
					idx, timed = -1-idx, false
				}
				m := &ms[idx]
				t0 := time.Now()
				o := f.Call(ctx, m.Role, m.Name, m.Args)
				t1 := time.Now()
				if !o.OK && ctx.Err() != nil {
					break // the run was stopped (--max-rss, Ctrl-C): not a figure of this call
				}
				if timed {
					local = append(local, t1.Sub(t0))
				}
				hit[idx] = true
				switch {
				case !o.OK:
					fails.Add(1)
					if o.Err != nil {
						msg := o.Err.Error()
						firstErr.CompareAndSwap(nil, &msg)
					}
				case !jsonval.Equal(o.Value, m.Want):
					if wrong.Add(1) == 1 {
						msg := fmt.Sprintf("%s.%s returned %s, want %s", m.Role, m.Name, o.Value, m.Want)
						firstErr.CompareAndSwap(nil, &msg)
					}
				}
				if seq%256 == 0 {
					progress(seq, total)
				}
				if dur > 0 && t1.After(deadline) {
					break
				}
			}
			lats[g], seen[g] = local, hit
		}(g)
	}
	wg.Wait()
	el := time.Since(start)
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	slices.Sort(all)
	lat := Latency{Calls: int64(len(all)), Failures: fails.Load(), WrongAnswers: wrong.Load(), Seconds: el.Seconds()}
	if p := firstErr.Load(); p != nil {
		lat.FirstError = *p
	}
	for i := range ms {
		for _, h := range seen {
			if h != nil && h[i] {
				lat.Distinct++
				break
			}
		}
	}
	if len(all) > 0 {
		lat.P50, lat.P99, lat.Max = pct(all, 50), pct(all, 99), all[len(all)-1]
		lat.CallsPerSec = float64(len(all)) / el.Seconds()
	}
	progress(lat.Calls, lat.Calls)
	return lat
}

// pct is the nearest-rank percentile p of sorted latencies.
func pct(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	return sorted[max(0, min(i, len(sorted))-1)]
}

func heapAfterGC() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}

func phaseProgress(cfg Config, phase string) func(done, total int64) {
	if cfg.Progress == nil {
		return func(int64, int64) {}
	}
	return func(done, total int64) { cfg.Progress(phase, done, total) }
}

// timeFlush times one metrics flush of the given methods' counters, as the forge's background
// flusher does each interval after calls touched them, on a fresh handle of the store.
func timeFlush(dir string, ms []method) (FlushCost, error) {
	s, err := registry.Open(dir)
	if err != nil {
		return FlushCost{}, fmt.Errorf("bench: reopen %s for the flush: %w", dir, err)
	}
	rec := registry.NewRecorder(s, 24*time.Hour) // no background flush: only the one timed
	defer rec.Close()
	for i := range ms {
		rec.Record(ms[i].Role, ms[i].Name, registry.Success, time.Microsecond, "")
	}
	t0 := time.Now()
	r := rec.Flush()
	fc := FlushCost{Touched: len(ms), Merged: len(r.Merged), Time: time.Since(t0)}
	for k, err := range r.Dropped {
		return fc, fmt.Errorf("bench: the timed flush dropped %s: %w", k, err)
	}
	return fc, nil
}

// guard watches this process's RSS and cancels the run past a limit.
type guard struct {
	done chan struct{}
	wg   sync.WaitGroup
	max  atomic.Int64
}

func startGuard(limit int64, cancel context.CancelCauseFunc) *guard {
	g := &guard{done: make(chan struct{})}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-g.done:
				return
			case <-t.C:
			}
			m := readMem()
			if m.RSS > g.max.Load() {
				g.max.Store(m.RSS)
			}
			if limit > 0 && m.RSS > limit {
				cancel(fmt.Errorf("RSS %d MiB passed --max-rss %d MiB; the figures stop there (raise --max-rss on a machine with room)", m.RSS>>20, limit>>20))
				return
			}
		}
	}()
	return g
}

func (g *guard) stop()          { close(g.done); g.wg.Wait() }
func (g *guard) maxSeen() int64 { return g.max.Load() }

// MarshalIndent renders the report as the JSON document `forge bench --json` prints.
func (r *Report) MarshalIndent() ([]byte, error) { return json.MarshalIndent(r, "", "  ") }

// regenerate replaces m's code n times through Forge.Edit (each time distinct code, the same
// answers), calls m after each replacement, and measures the memory around them.
func regenerate(ctx context.Context, f *forge.Forge, m *method, n int, progress func(done, total int64)) RegenCost {
	rc := RegenCost{Count: n, LiveBefore: f.LivePrograms()}
	fail := func(msg string) {
		rc.Failures++
		if rc.FirstError == "" {
			rc.FirstError = msg
		}
	}
	// RSS is read with the freed memory returned to the OS (debug.FreeOSMemory), before and after:
	// what is compared is what the process keeps, not when the scavenger gets round to it.
	rc.HeapBefore = heapAfterGC()
	debug.FreeOSMemory()
	rc.RSSBefore = readMem().RSS
	rc.ChildrenRSS0, _, _ = childrenRSS()
	edits := make([]time.Duration, 0, n)
	for i := 1; i <= n && ctx.Err() == nil; i++ {
		code := fmt.Sprintf("%s\n// replacement %d\n", m.Code, i)
		t0 := time.Now()
		o := f.Edit(ctx, m.Role, m.Name, code)
		edits = append(edits, time.Since(t0))
		if !o.OK {
			fail(fmt.Sprintf("replacement %d of %s.%s: %v", i, m.Role, m.Name, o.Err))
			continue
		}
		if o := f.Call(ctx, m.Role, m.Name, m.Args); !o.OK {
			fail(fmt.Sprintf("call after replacement %d: %v", i, o.Err))
		} else if !jsonval.Equal(o.Value, m.Want) {
			fail(fmt.Sprintf("call after replacement %d returned %s, want %s", i, o.Value, m.Want))
		}
		progress(int64(i), int64(n))
	}
	rc.HeapAfter = heapAfterGC()
	debug.FreeOSMemory()
	rc.RSSAfter = readMem().RSS
	rc.ChildrenRSS1, _, _ = childrenRSS()
	rc.LiveAfter = f.LivePrograms()
	if rc.RSSBefore > 0 {
		rc.Growth = float64(rc.RSSAfter)/float64(rc.RSSBefore) - 1
	}
	slices.Sort(edits)
	rc.EditP50 = pct(edits, 50)
	return rc
}

// compactStore folds the metrics journals the run left (its own flushes) into the artifact files,
// as the background compaction of a running forge does within 30 s.
func compactStore(dir string) (int, error) {
	s, err := registry.Open(dir)
	if err != nil {
		return 0, err
	}
	rep, err := s.Compact()
	if err != nil {
		return 0, fmt.Errorf("bench: compact the store before the process runs: %w", err)
	}
	return rep.Records, nil
}

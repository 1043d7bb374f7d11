package forge

import (
	"time"

	"github.com/artifactforge/forge/provider"
	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/repair"
	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/selector"
)

// DefaultMaxProviderCalls bounds the provider calls a single Call may make (generation, gate
// feedback, repair and regeneration together).
const DefaultMaxProviderCalls = 3

// DefaultGenerationTimeout bounds one generation (provider calls and gate runs together) that no
// single caller's context bounds: a top-level call's generation is shared by every caller that
// waits for it, so it runs under its own deadline, not under the first caller's.
const DefaultGenerationTimeout = 5 * time.Minute

// Options configure a Forge. The zero value of every field is a safe default.
type Options struct {
	// Store is the store: a directory, or the URL of a registered backend such as
	// nats://host:4222/forge (see registry.OpenBackend); empty is DefaultStore ($FORGE_STORE,
	// else $XDG_STATE_HOME/forge, else ~/.local/state/forge), as for the CLI.
	Store string
	// LocalDir is, for a store that is not a directory, the directory on this machine for what
	// is not shared with other machines (the event log, compiled-code caches, the token
	// calibration); empty is the backend's default. A directory store keeps them in itself and
	// ignores it. $FORGE_LOCAL_DIR sets it (OptionsFromEnv).
	LocalDir string
	// ClientName names this process to a networked store's servers (default "forge").
	ClientName string
	// OnQuarantine, if set, is told of every damaged file a directory store sets aside, from
	// the first read on (registry.OpenOptions.OnQuarantine); other backends ignore it.
	OnQuarantine func(registry.QuarantineReport)
	// Provider writes code. Nil is the one $FORGE_PROVIDER names (ProviderFromEnv, built on the
	// first generation), else none: persisted artifacts still run, and generation fails with an
	// error saying how to configure one.
	Provider provider.Provider
	// Sandboxes builds the backend for a contract's "sandbox" field; nil uses the registered
	// backends (sandbox.Register; forge/all: "wasm", "yaegi"). Each is built once, on first use.
	Sandboxes func(name string) (sandbox.Sandbox, error)
	// DefaultSandbox is the backend for contracts that name none ("yaegi", "wasm"). Empty is the
	// safe default (ChooseDefault): a backend that contains hostile code on its own (wasm, when a
	// Go toolchain is here), else yaegi in worker processes. Name "yaegi" only for trusted code:
	// in-process, it is fast but no security boundary.
	DefaultSandbox string
	// Switches are the kill switches and canary list.
	Switches selector.Switches
	// MaxProviderCalls per Call (default DefaultMaxProviderCalls).
	MaxProviderCalls int
	// GenerationTimeout bounds a generation detached from its callers (default
	// DefaultGenerationTimeout); each caller still waits no longer than its own context.
	GenerationTimeout time.Duration
	// Budget is the default repair budget (repair.DefaultMaxRepairsBeforeRegen); a contract's
	// failure_policy.max_repairs_before_regen overrides it.
	Budget repair.Budget
	// FlushInterval of the metrics recorder (default 1s).
	FlushInterval time.Duration
	// SampleEvery: once an artifact's sample of real calls is full, one call in this many offers
	// its input (0: DefaultSampleEvery; 1: every call; negative: this process samples nothing).
	// SampleFlushInterval is how often offered inputs reach the store (0: the default). See
	// sample.go and the contract's "sample" (registry.SampleConfig).
	SampleEvery         int
	SampleFlushInterval time.Duration
	// ContextTokens is the token ceiling of every prompt (0: the provider's default, see
	// DefaultContextTokens).
	ContextTokens int
	// NoLearning turns the learner off: prompts carry no recalled lessons and nothing is learned.
	NoLearning bool
	// Knowledge caps the lessons kept per domain and per lesson (zero fields: the learner's
	// defaults; FORGE_KNOWLEDGE_MAX_ENTRIES, FORGE_KNOWLEDGE_MAX_BYTES, FORGE_KNOWLEDGE_MAX_LESSON_BYTES).
	Knowledge KnowledgeCaps
	// NoEvents turns the events/forge.jsonl log off.
	NoEvents bool
	// EventsPerCall makes the log write one line per call, warm successes included. By default
	// warm successes (persisted code, ok, no repair, no provider call) are aggregated per
	// artifact every EventAggregateInterval into one "aggregate" line with their count and
	// latency percentiles; every other call (generation, repair, failure, operator action) has
	// its own line either way. Live subscribers (Subscribe, EventSink) see every call either way.
	// FORGE_EVENTS=all sets it.
	EventsPerCall bool
	// EventInterval is the aggregation interval (default EventAggregateInterval): at each
	// interval's end an artifact's aggregate is written if it stands for 200 calls or more
	// (~700 bytes for 200+ calls), else it keeps aggregating, 60 intervals at most; Flush, Stats
	// and Close write every aggregate at once. FORGE_EVENTS=aggregate:30s sets it.
	EventInterval time.Duration
	// EventSink, if set, receives every event as well (tests, SSE).
	EventSink func(Event)
	// Watch makes Open start watch mode (Forge.Watch): other processes' changes reach calls at
	// once. Where fsnotify is unavailable the revalidation poll remains, silently.
	Watch bool
	// MaxLivePrograms bounds the compiled programs kept ready (the live set, an approximate LRU):
	// 0 is DefaultMaxLivePrograms (or $FORGE_MAX_LIVE_PROGRAMS through OptionsFromEnv), a negative
	// value sets no bound. A method evicted from the set answers as before at its next call,
	// after compiling its code again.
	MaxLivePrograms int
	// MaxLiveBytes bounds the memory the live programs report (sandbox.Sizer: wasm modules and
	// instances): 0 is DefaultLiveBytes() (or $FORGE_MAX_LIVE_BYTES), negative sets no bound.
	MaxLiveBytes int64
	// SandboxPoolSize, SandboxIdleTimeout and SandboxMaxWorkers tune the backends the forge builds
	// (sandbox.Config: interpreters or instances per program, how long extra ones may idle, worker
	// processes in all); 0 is each backend's default. $FORGE_POOL_SIZE, $FORGE_IDLE_TIMEOUT and
	// $FORGE_MAX_WORKERS set them through OptionsFromEnv. Options.Sandboxes, when set, ignores them.
	SandboxPoolSize    int
	SandboxIdleTimeout time.Duration
	SandboxMaxWorkers  int
	// Maxima bound every contract's limits (memory, timeout, output); a zero field is its
	// default (registry.DefaultMaxMemory 1GiB, DefaultMaxTimeout 60s, DefaultMaxOutput 64MiB).
	// AddRole refuses a contract over them, naming the maximum; a stored one runs clamped to
	// them. $FORGE_MAX_MEMORY, $FORGE_MAX_TIMEOUT and $FORGE_MAX_OUTPUT set them (OptionsFromEnv).
	Maxima registry.Maxima
	// ModelCalls bounds the model calls each client's calls may spend (zero: no bound; see
	// ModelCallLimit). `forge serve` sets one by default.
	ModelCalls ModelCallLimit
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// liveBudget is a live-set bound from its option: 0 is the default, negative is none (0).
func liveBudget[T int | int64](v, def T) T {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

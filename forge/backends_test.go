package forge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/artifactforge/forge/registry/nats/embedded"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/learner"
	"github.com/artifactforge/forge/provider"
	"github.com/artifactforge/forge/provider/replay"
	"github.com/artifactforge/forge/registry"
	fleet "github.com/artifactforge/forge/registry/nats" // registers the nats:// scheme
	"github.com/artifactforge/forge/sandbox"
)

// The forge's call-path scenarios, run against both store backends (issue 13: "run the same
// table against both backends"). registry/storetest checks the stores themselves; this table
// checks what the forge does on top of them: generation, reuse, counters, operator verbs,
// repair, staleness, several handles on one store, knowledge. Every scenario ports the
// assertions of the forge test that covers it on a directory store (named in its comment).
//
// Each scenario gets its own store: a fresh directory, or a fresh store name on one embedded
// single-node JetStream server started once for the whole table. A "handle" is one forge.Open on
// that store, as another process would hold (its own connection, cache, watch and LocalDir).

// bothHang only detects a hang: what the scenarios wait for normally arrives within milliseconds.
const bothHang = 10 * time.Second

const (
	bothUpperOK = "package artifact\n\nimport \"strings\"\n\nfunc Upper(s string) string { return strings.ToUpper(s) }\n"
	// bothUpperPanics indexes past the end of an empty string: an intrinsic failure on "".
	bothUpperPanics = "package artifact\n\nimport \"strings\"\n\nfunc Upper(s string) string { return strings.ToUpper(s[:1]) + strings.ToUpper(s[1:]) }\n"
)

// bothUpperPanicsOn panics (nil map write) on strings of length n: each repair fixes the input
// that failed and breaks another, so the repairs pass the gate and still fail later calls.
func bothUpperPanicsOn(n int) string {
	return fmt.Sprintf("package artifact\n\nimport \"strings\"\n\nfunc Upper(s string) string {\n\tif len(s) == %d {\n\t\tvar m map[string]int\n\t\tm[s] = 1\n\t}\n\treturn strings.ToUpper(s)\n}\n", n)
}

func bothTextContract() registry.Contract {
	return registry.Contract{Role: "text", Purpose: "string utilities",
		Methods:    map[string]string{"upper": "func Upper(s string) string"},
		Acceptance: &registry.Acceptance{Examples: []registry.Example{{Method: "upper", Args: json.RawMessage(`{"s":"go"}`), Expect: json.RawMessage(`"GO"`)}}}}
}

// bothLine is one cassette answer: (role, method, kind, attempt) -> code.
type bothLine struct {
	Role    string `json:"role"`
	Method  string `json:"method"`
	Kind    string `json:"kind"`
	Attempt int    `json:"attempt"`
	Code    string `json:"code,omitempty"`
}

// countingReplay is the replay provider, counting the calls that reach it.
type countingReplay struct {
	provider.Provider
	n atomic.Int64
}

func (p *countingReplay) Generate(ctx context.Context, r provider.Request) (provider.Answer, error) {
	p.n.Add(1)
	return p.Provider.Generate(ctx, r)
}

// upperCassette answers text.upper: generate attempts first, then repair attempts.
func upperCassette(t testing.TB, generate []string, repairs ...string) *countingReplay {
	t.Helper()
	var b strings.Builder
	add := func(kind string, codes []string) {
		for i, c := range codes {
			j, err := json.Marshal(bothLine{Role: "text", Method: "upper", Kind: kind, Attempt: i + 1, Code: c})
			require.NoError(t, err)
			b.Write(j)
			b.WriteByte('\n')
		}
	}
	add("generate", generate)
	add("repair", repairs)
	c, err := replay.New("both", []byte(b.String()))
	require.NoError(t, err)
	return &countingReplay{Provider: c}
}

// answers answers the n-th request with codes[n-1] (the last one after that), after delay; a
// code "" answers like a model that wrote no code at all.
type answers struct {
	codes []string
	delay time.Duration
	n     atomic.Int64
}

func (p *answers) Name() string { return "answers" }

func (p *answers) Generate(ctx context.Context, _ provider.Request) (provider.Answer, error) {
	n := int(p.n.Add(1))
	if p.delay > 0 {
		select {
		case <-time.After(p.delay):
		case <-ctx.Done():
			return provider.Answer{}, ctx.Err()
		}
	}
	c := p.codes[min(n, len(p.codes))-1]
	if c == "" {
		raw := "sorry, no code"
		_, err := provider.Heal(raw)
		return provider.Answer{Raw: raw}, &provider.Error{Kind: provider.BadAnswer, Provider: "answers", Message: "no code in the answer", Err: err}
	}
	return provider.Answer{Code: c, Raw: c, Model: "answers"}, nil
}

// gated answers code once release is closed, and closes entered when it is first asked.
type gated struct {
	code             string
	entered, release chan struct{}
	once             sync.Once
}

func (p *gated) Name() string { return "gated" }

func (p *gated) Generate(ctx context.Context, _ provider.Request) (provider.Answer, error) {
	p.once.Do(func() { close(p.entered) })
	select {
	case <-p.release:
	case <-ctx.Done():
		return provider.Answer{}, ctx.Err()
	}
	return provider.Answer{Code: p.code, Raw: p.code, Model: "gated"}, nil
}

// ringAnswers writes role r's p (deleg_test.go's ringProvider): p(0) answers "done", p(n)
// delegates n-1 to the next role of the ring; a role not in the ring delegates to itself.
type ringAnswers struct {
	ring []string
	n    atomic.Int64
}

func (p *ringAnswers) Name() string { return "ring" }

func (p *ringAnswers) Generate(_ context.Context, r provider.Request) (provider.Answer, error) {
	p.n.Add(1)
	next := r.Role
	for i, role := range p.ring {
		if role == r.Role {
			next = p.ring[(i+1)%len(p.ring)]
		}
	}
	code := "package artifact\n\nimport \"forge/host\"\n\nfunc P(n int) (string, error) {\n\tif n <= 0 {\n\t\treturn \"done\", nil\n\t}\n\tvar s string\n\tif err := host.CallInto(\"" + next + "\", \"p\", map[string]int{\"n\": n - 1}, &s); err != nil {\n\t\treturn \"\", err\n\t}\n\treturn s, nil\n}\n"
	return provider.Answer{Code: code, Model: "ring"}, nil
}

// bothPitfall answers with code that calls time.Now (refused by the sandbox) unless its prompt
// carries the lesson "use host.Now" (knowledge_test.go's pitfallModel).
type bothPitfall struct {
	mu      sync.Mutex
	calls   int
	prompts []string
}

func (m *bothPitfall) Name() string { return "pitfall" }

func (m *bothPitfall) Generate(_ context.Context, req provider.Request) (provider.Answer, error) {
	m.mu.Lock()
	m.calls++
	m.prompts = append(m.prompts, req.Prompt)
	m.mu.Unlock()
	fn := "Year"
	if req.Method == "day" {
		fn = "Day"
	}
	code := "package artifact\n\nimport \"time\"\n\nfunc " + fn + "() int { return time.Now()." + fn + "() }\n"
	if strings.Contains(req.Prompt, "use host.Now") {
		code = "package artifact\n\nimport \"forge/host\"\n\nfunc " + fn + "() int { return host.Now()." + fn + "() }\n"
	}
	return provider.Answer{Code: code, Model: "pitfall"}, nil
}

func bothClockContract(role, method, purpose string) registry.Contract {
	return registry.Contract{Role: role, Purpose: purpose,
		Methods:      map[string]string{method: "func " + strings.ToUpper(method[:1]) + method[1:] + "() int"},
		Capabilities: &registry.Capabilities{Now: true}}
}

// bothEnv is one scenario's store.
type bothEnv struct {
	t     *testing.T
	store string // a directory or a nats:// URL
	fleet bool
}

// open opens another handle on the scenario's store, closed at the end of the scenario. Each
// handle has its own LocalDir (a directory store ignores it).
func (e *bothEnv) open(p provider.Provider, mod ...func(*forge.Options)) *forge.Forge {
	e.t.Helper()
	opts := forge.Options{Store: e.store, Provider: p, DefaultSandbox: "yaegi", LocalDir: e.t.TempDir(), ClientName: "forge-backends-test"}
	for _, m := range mod {
		m(&opts)
	}
	f, err := forge.Open(opts)
	require.NoError(e.t, err)
	e.t.Cleanup(func() { f.Close() })
	return f
}

func call(f *forge.Forge, s string) forge.Outcome {
	return f.Call(context.Background(), "text", "upper", json.RawMessage(fmt.Sprintf(`{"s":%q}`, s)))
}

func load(t *testing.T, f *forge.Forge) *registry.Artifact {
	t.Helper()
	a, err := f.Store().Load("text", "upper")
	require.NoError(t, err)
	return a
}

// nextArtifactChange waits for sub's next change of text.upper.
func nextArtifactChange(t *testing.T, sub *forge.Subscription) forge.ArtifactChange {
	t.Helper()
	deadline := time.After(bothHang)
	for {
		select {
		case e := <-sub.C:
			if e.Kind == forge.LiveArtifact && e.Artifact.Role == "text" && e.Artifact.Method == "upper" {
				return *e.Artifact
			}
		case <-deadline:
			t.Fatalf("no change of text.upper within %v (a hang)", bothHang)
		}
	}
}

// eventually calls try until it returns true, failing after bothHang; it returns how long that took.
func eventually(t *testing.T, what string, try func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !try() {
		if time.Since(start) > bothHang {
			t.Fatalf("%s: not seen within %v (a hang)", what, bothHang)
		}
		time.Sleep(2 * time.Millisecond)
	}
	return time.Since(start)
}

var bothScenarios = []struct {
	name string
	run  func(t *testing.T, e *bothEnv)
}{
	// TestFirstCallGeneratesSecondRunsPersisted, TestCrossSessionReuseWithoutProvider.
	{"ColdCallGeneratesWarmCallReuses", func(t *testing.T, e *bothEnv) {
		p := upperCassette(t, []string{bothUpperOK})
		f := e.open(p)
		require.NoError(t, f.AddRole(bothTextContract()))

		o := call(f, "hello")
		require.True(t, o.OK, "%+v", o.Err)
		assert.JSONEq(t, `"HELLO"`, string(o.Value))
		assert.Equal(t, forge.SourceGenerated, o.Meta.ProgramSource)
		assert.Equal(t, 1, o.Meta.ProviderCalls)
		assert.Equal(t, 1, o.Meta.ArtifactGen)

		o = f.Call(context.Background(), "text", "upper", json.RawMessage(`["again"]`))
		require.True(t, o.OK, "%+v", o.Err)
		assert.JSONEq(t, `"AGAIN"`, string(o.Value))
		assert.Equal(t, forge.SourcePersisted, o.Meta.ProgramSource)
		assert.Zero(t, o.Meta.ProviderCalls)
		assert.Equal(t, int64(1), p.n.Load())

		art := load(t, f)
		assert.Equal(t, "initial_forge", art.History[0].Trigger)
		assert.Equal(t, "func Upper(s string) string", art.Signature.Decl)
		assert.Equal(t, forge.PromptVersion, art.PromptVersion)
		assert.Equal(t, bothUpperOK, art.Code)
		require.NoError(t, f.Close())

		// Another session with no provider at all runs what the first one persisted.
		f2 := e.open(nil)
		o = call(f2, "b")
		require.True(t, o.OK, "%+v", o.Err)
		assert.JSONEq(t, `"B"`, string(o.Value))
		assert.Equal(t, forge.SourcePersisted, o.Meta.ProgramSource)
		o = f2.Call(context.Background(), "text", "lower", json.RawMessage(`{"s":"b"}`))
		require.False(t, o.OK)
		assert.Equal(t, "unknown_method", o.Err.Type)
		assert.Equal(t, "caller", o.Err.Class)
	}},

	// The recorder's counters and the candidate -> durable promotion (ExampleForge_Close,
	// registry/storetest's promotion case), seen by another handle only once flushed.
	{"CountersAndPromotionAfterFlush", func(t *testing.T, e *bothEnv) {
		noTimer := func(o *forge.Options) { o.FlushInterval = time.Hour }
		f := e.open(upperCassette(t, []string{bothUpperOK}), noTimer)
		other := e.open(nil, noTimer)
		require.NoError(t, f.AddRole(bothTextContract()))
		for i := 0; i < registry.DurableAfter; i++ {
			require.True(t, call(f, "a").OK)
		}
		a, err := other.Store().Load("text", "upper")
		require.NoError(t, err)
		assert.Zero(t, a.SuccessCount, "nothing is counted in the store before the flush")
		assert.Equal(t, registry.Candidate, a.Lifecycle)

		f.Flush()
		eventually(t, "the flushed counters in the other handle", func() bool {
			a, err = other.Store().Load("text", "upper")
			require.NoError(t, err)
			return a.SuccessCount == int64(registry.DurableAfter)
		})
		assert.Equal(t, registry.Durable, a.Lifecycle, "promoted after DurableAfter successes")
		assert.Zero(t, a.FailureCount)
		a = load(t, f)
		assert.Equal(t, int64(registry.DurableAfter), a.SuccessCount)
		assert.Equal(t, registry.Durable, a.Lifecycle)

		// Both handles' outcomes are merged, none lost.
		require.True(t, call(other, "b").OK)
		require.True(t, call(f, "c").OK)
		require.True(t, call(f, "").OK)
		other.Flush()
		f.Flush()
		for _, h := range []*forge.Forge{f, other} {
			a = load(t, h)
			assert.Equal(t, int64(registry.DurableAfter+3), a.SuccessCount)
		}
		sums, err := other.Store().Summaries()
		require.NoError(t, err)
		require.Len(t, sums, 1)
		assert.Equal(t, registry.Durable, sums[0].Lifecycle)

		// Close flushes what is buffered.
		require.True(t, call(f, "d").OK)
		require.NoError(t, f.Close())
		a = load(t, other)
		assert.Equal(t, int64(registry.DurableAfter+4), a.SuccessCount)
		// The role's usage (`forge roles`) counts every handle's calls too, in a new process.
		rec, err := e.open(nil).Store().Role("text")
		require.NoError(t, err)
		assert.Equal(t, int64(registry.DurableAfter+4), rec.UsageCount)
		require.NotNil(t, rec.LastUsedAt)
	}},

	// TestIdenticalRegenKeepsHistory, TestFailedRegenLeavesHealthyCodeAlone, and MaxHistory.
	{"RegenerateKeepsThreeGenerations", func(t *testing.T, e *bothEnv) {
		v2, v3, v4 := bothUpperOK+"// v2\n", bothUpperOK+"// v3\n", bothUpperOK+"// v4\n"
		f := e.open(&answers{codes: []string{bothUpperOK, v2, v3, v3}})
		require.NoError(t, f.AddRole(bothTextContract()))
		require.True(t, call(f, "a").OK)
		f.Flush()
		require.True(t, f.Regenerate(context.Background(), "text", "upper").OK)
		o := f.Regenerate(context.Background(), "text", "upper")
		require.True(t, o.OK, "%+v", o.Err)
		assert.Equal(t, "regenerate:operator", o.Meta.Decision)
		before := load(t, f)
		require.Equal(t, 3, before.Generation)
		assert.Equal(t, "operator:regen", before.History[0].Trigger)

		o = f.Regenerate(context.Background(), "text", "upper")
		require.True(t, o.OK, "%+v", o.Err)
		assert.True(t, o.Meta.Unchanged, "an identical answer adds no generation")
		assert.Equal(t, 3, o.Meta.ArtifactGen)
		after := load(t, f)
		assert.Equal(t, 3, after.Generation)
		require.Len(t, after.History, len(before.History))
		for i := range before.History {
			assert.Equal(t, before.History[i].ID, after.History[i].ID)
		}

		// A regeneration that produces nothing usable leaves the current generation exactly as
		// it was, and the next call runs it.
		op := e.open(&answers{codes: []string{""}})
		o = op.Regenerate(context.Background(), "text", "upper")
		require.False(t, o.OK)
		assert.Contains(t, o.Err.Message, "no generated code passed verification")
		assert.Contains(t, o.Err.Message, "the current generation 3 of text.upper is unchanged")
		op.Flush()
		failed := load(t, f)
		assert.Equal(t, after.Lifecycle, failed.Lifecycle, "lifecycle unchanged")
		assert.Equal(t, after.Counters, failed.Counters, "no failure counted against the code")
		assert.Equal(t, after.Generation, failed.Generation)
		assert.Equal(t, after.LastFailureClass, failed.LastFailureClass)
		o = call(f, "b")
		require.True(t, o.OK, "%+v", o.Err)
		assert.Equal(t, forge.SourcePersisted, o.Meta.ProgramSource, "the next call runs the healthy code")
		assert.Zero(t, o.Meta.ProviderCalls)

		// A fourth generation pushes the first out: MaxHistory are kept.
		op2 := e.open(&answers{codes: []string{v4}})
		o = op2.Regenerate(context.Background(), "text", "upper")
		require.True(t, o.OK, "%+v", o.Err)
		art := load(t, f)
		assert.Equal(t, 4, art.Generation)
		assert.Equal(t, v4, art.Code)
		require.Len(t, art.History, registry.MaxHistory)
		assert.Equal(t, []string{"gen-4", "gen-3", "gen-2"}, []string{art.History[0].ID, art.History[1].ID, art.History[2].ID})
		_, err := f.Rollback("text", "upper", 1)
		assert.Error(t, err, "generation 1 is no longer kept")
		art, err = f.Rollback("text", "upper", 2)
		require.NoError(t, err)
		assert.Equal(t, v2, art.Code)
		assert.Equal(t, 5, art.Generation)
	}},

	// TestConcurrentRegensJoin (cross-process): a regeneration in one handle while another
	// handle's runs waits for it through the store's generation lock and reports its result; one
	// generation, nothing counted against the code.
	{"ConcurrentRegensFromTwoHandlesJoin", func(t *testing.T, e *bothEnv) {
		f := e.open(&answers{codes: []string{bothUpperOK}})
		require.NoError(t, f.AddRole(bothTextContract()))
		require.True(t, call(f, "a").OK)
		f.Flush()

		entered, release := make(chan struct{}), make(chan struct{})
		p1 := &gated{code: bothUpperOK + "// v2\n", entered: entered, release: release}
		p2 := &answers{codes: []string{bothUpperOK + "// v3\n"}}
		a, b := e.open(p1), e.open(p2)
		var wg sync.WaitGroup
		var oa, ob forge.Outcome
		wg.Add(1)
		go func() { defer wg.Done(); oa = a.Regenerate(context.Background(), "text", "upper") }()
		<-entered
		wg.Add(1)
		go func() { defer wg.Done(); ob = b.Regenerate(context.Background(), "text", "upper") }()
		time.Sleep(200 * time.Millisecond) // let the second reach the lock (ordering only)
		close(release)
		wg.Wait()
		require.True(t, oa.OK, "%+v", oa.Err)
		require.True(t, ob.OK, "the second regeneration: %+v", ob.Err)
		assert.True(t, ob.Meta.Joined, "the second regeneration joined the first")
		assert.Equal(t, oa.Meta.ArtifactGen, ob.Meta.ArtifactGen)
		assert.Zero(t, p2.n.Load(), "one generation only")
		a.Flush()
		b.Flush()
		art := load(t, f)
		assert.Equal(t, 2, art.Generation)
		assert.Equal(t, bothUpperOK+"// v2\n", art.Code)
		assert.Zero(t, art.FailureCount, "no failure counted")
		assert.Empty(t, art.LastFailureReason)
	}},

	// MarkRegenerate (`forge regen --mark`) in one handle: the running handles' calls regenerate
	// once between them, and all end up on the new generation.
	{"MarkedRegenerationHappensOnceAcrossHandles", func(t *testing.T, e *bothEnv) {
		f := e.open(upperCassette(t, []string{bothUpperOK}))
		require.NoError(t, f.AddRole(bothTextContract()))
		require.True(t, call(f, "a").OK)
		v2 := bothUpperOK + "// v2\n"
		p1 := &answers{codes: []string{v2}, delay: 100 * time.Millisecond}
		p2 := &answers{codes: []string{v2}, delay: 100 * time.Millisecond}
		a, b := e.open(p1), e.open(p2)
		for _, h := range []*forge.Forge{a, b} {
			h.Store().SetRevalidate(20 * time.Millisecond)
			require.True(t, call(h, "warm").OK)
		}
		require.NoError(t, e.open(nil).MarkRegenerate("text", "upper"))
		var wg sync.WaitGroup
		var stop atomic.Bool
		deadline := time.Now().Add(bothHang)
		for i, h := range []*forge.Forge{a, b, a, b} {
			wg.Add(1)
			go func(i int, h *forge.Forge) {
				defer wg.Done()
				for !stop.Load() && time.Now().Before(deadline) {
					o := call(h, "x")
					if !assert.True(t, o.OK, "caller %d: %+v", i, o.Err) {
						return
					}
					if o.Meta.ArtifactGen == 2 {
						return
					}
					time.Sleep(2 * time.Millisecond)
				}
			}(i, h)
		}
		wg.Wait()
		stop.Store(true)
		require.True(t, time.Now().Before(deadline), "the marked regeneration never happened (a hang)")
		assert.Equal(t, int64(1), p1.n.Load()+p2.n.Load(), "one regeneration across both handles")
		art := load(t, f)
		assert.Equal(t, 2, art.Generation)
		assert.Equal(t, v2, art.Code)
		assert.False(t, art.ForceRegenerate, "the mark is done")
		assert.True(t, strings.HasPrefix(art.History[0].Trigger, "regenerate:"), art.History[0].Trigger)
	}},

	// TestOperatorVerbs: Regenerate, Rollback, Quarantine (calls refused with the operator's
	// way out), Bless, MarkRegenerate.
	{"OperatorVerbs", func(t *testing.T, e *bothEnv) {
		f := e.open(upperCassette(t, []string{bothUpperOK, bothUpperOK + "// v2\n"}))
		require.NoError(t, f.AddRole(bothTextContract()))
		require.True(t, call(f, "a").OK)

		o := f.Regenerate(context.Background(), "text", "upper")
		require.True(t, o.OK, "%+v", o.Err)
		art := load(t, f)
		assert.Equal(t, 2, art.Generation)
		assert.Equal(t, "operator:regen", art.History[0].Trigger)

		art, err := f.Rollback("text", "upper", 1)
		require.NoError(t, err)
		assert.Equal(t, bothUpperOK, art.Code)
		assert.Equal(t, 3, art.Generation)
		assert.Equal(t, "operator:rollback:gen-1", art.History[0].Trigger)

		require.NoError(t, f.Quarantine("text", "upper"))
		o = call(f, "a")
		require.False(t, o.OK)
		assert.Equal(t, "refused", o.Err.Type)
		assert.Contains(t, o.Err.Message, "forge rollback text upper")
		assert.Equal(t, registry.Quarantined, load(t, f).Lifecycle)

		_, err = f.Rollback("text", "upper", 2)
		require.NoError(t, err)
		require.NoError(t, f.Bless("text", "upper", true))
		o = call(f, "a")
		require.True(t, o.OK, "%+v", o.Err)
		assert.Equal(t, "execute:blessed", o.Meta.Decision)
		assert.Equal(t, registry.Blessed, load(t, f).Lifecycle)

		require.NoError(t, f.MarkRegenerate("text", "upper"))
		assert.True(t, load(t, f).ForceRegenerate)

		assert.ErrorIs(t, f.Bless("text", "nope", false), registry.ErrNotFound)
	}},

	// Persisted code that fails and cannot be fixed in its call is marked degraded, for every
	// handle; the next call repairs it (call.go's degraded path).
	{"UnrepairedFailureDegradesThenRepairs", func(t *testing.T, e *bothEnv) {
		upperWrong := "package artifact\n\nfunc Upper(s string) string { return s }\n"
		codes := []string{bothUpperPanics}
		for i := 0; i < forge.DefaultMaxProviderCalls; i++ {
			codes = append(codes, upperWrong)
		}
		p := &answers{codes: append(codes, bothUpperOK)}
		f := e.open(p)
		other := e.open(nil)
		require.NoError(t, f.AddRole(bothTextContract()))
		require.True(t, call(f, "ok").OK)
		o := call(f, "")
		require.False(t, o.OK)
		assert.Equal(t, "intrinsic", o.Err.Class)
		assert.Equal(t, forge.DefaultMaxProviderCalls, o.Meta.ProviderCalls)
		f.Flush()
		a, err := other.Store().Load("text", "upper")
		require.NoError(t, err)
		assert.Equal(t, registry.Degraded, a.Lifecycle)
		assert.Equal(t, 1, a.Generation, "no failing code was stored")
		// The call counts once, as the stored code's failure (the failed repair stored nothing).
		assert.Equal(t, int64(1), a.IntrinsicFailureCount)
		assert.Equal(t, "si", a.Recent)
		sums, err := other.Store().Summaries()
		require.NoError(t, err)
		require.Len(t, sums, 1)
		assert.Equal(t, registry.Degraded, sums[0].Lifecycle)

		o = call(f, "")
		require.True(t, o.OK, "%+v", o.Err)
		assert.Equal(t, forge.SourceRepaired, o.Meta.ProgramSource)
		a = load(t, other)
		assert.Equal(t, registry.Candidate, a.Lifecycle)
		assert.Equal(t, 2, a.Generation)
		eventually(t, "the repaired code in the other handle", func() bool {
			o = call(other, "")
			require.True(t, o.OK, "%+v", o.Err)
			return o.Meta.ArtifactGen == 2
		})
	}},

	// Archive (`forge prune`) in one handle; a call in another revives the artifact as durable.
	{"ArchivedArtifactRevivedByACall", func(t *testing.T, e *bothEnv) {
		f := e.open(upperCassette(t, []string{bothUpperOK}))
		require.NoError(t, f.AddRole(bothTextContract()))
		require.True(t, call(f, "a").OK)
		f.Flush()
		op := e.open(nil)
		require.NoError(t, op.Archive("text", "upper"))
		sums, err := f.Store().Summaries()
		require.NoError(t, err)
		require.Len(t, sums, 1)
		assert.Equal(t, registry.Archived, sums[0].Lifecycle)
		archivedAt := time.Now()

		eventually(t, "the revival", func() bool {
			require.True(t, call(f, "b").OK)
			return load(t, op).Lifecycle == registry.Durable
		})
		f.Flush()
		sums, err = op.Store().Summaries()
		require.NoError(t, err)
		require.Len(t, sums, 1)
		assert.Equal(t, registry.Durable, sums[0].Lifecycle)
		require.NotNil(t, sums[0].LastUsedAt)
		assert.False(t, sums[0].LastUsedAt.Before(archivedAt.Add(-time.Second)), "the revival's call is the last use")
	}},

	// TestRepairWithoutRegeneration, TestBudgetExhaustionForcesRegeneration.
	{"IntrinsicFailureRepairedWithinBudget", func(t *testing.T, e *bothEnv) {
		f := e.open(upperCassette(t, []string{bothUpperPanics}, bothUpperOK))
		require.NoError(t, f.AddRole(bothTextContract()))
		require.True(t, call(f, "ok").OK)
		o := call(f, "")
		require.True(t, o.OK, "%+v", o.Err)
		assert.JSONEq(t, `""`, string(o.Value))
		assert.Equal(t, forge.SourceRepaired, o.Meta.ProgramSource)
		assert.True(t, o.Meta.RepairAttempted)
		assert.True(t, o.Meta.RepairSucceeded)
		assert.Equal(t, 1, o.Meta.ProviderCalls)
		f.Flush()
		art := load(t, f)
		assert.Equal(t, 2, art.Generation)
		assert.Equal(t, "repair:intrinsic", art.History[0].Trigger)
		assert.Equal(t, 1, art.RepairCountSinceRegen)
		assert.Equal(t, int64(1), art.IntrinsicFailureCount, "the failure is classified intrinsic and counted in the method's totals")
		assert.Equal(t, "s", art.Recent, "gen 1's failure is not in gen 2's window (RepairedGenerationCountsOnlyItsOwnOutcomes)")
	}},
	// A call whose stored code fails and is repaired within the call: the stored code's failure
	// is recorded at once but flushed after the repair promoted new code. It counts in the
	// method's totals, and never in the new generation's recent window, last failure or health:
	// the new generation shows only its own outcomes, and is proven durable by its own successes.
	{"RepairedGenerationCountsOnlyItsOwnOutcomes", func(t *testing.T, e *bothEnv) {
		noTimer := func(o *forge.Options) { o.FlushInterval = time.Hour }
		f := e.open(upperCassette(t, []string{bothUpperPanics}, bothUpperOK), noTimer)
		other := e.open(nil, noTimer)
		require.NoError(t, f.AddRole(bothTextContract()))
		require.True(t, call(f, "ok").OK)
		o := call(f, "")
		require.True(t, o.OK, "%+v", o.Err)
		require.Equal(t, forge.SourceRepaired, o.Meta.ProgramSource)
		require.Equal(t, 2, o.Meta.ArtifactGen)
		o = call(f, "x") // the repaired code, warm
		require.True(t, o.OK, "%+v", o.Err)
		assert.Equal(t, 2, o.Meta.ArtifactGen)
		f.Flush() // every outcome above, gen 1's included, lands after the repair's promotion

		check := func(who string, a *registry.Artifact, recent string, life registry.Lifecycle) {
			t.Helper()
			assert.Equal(t, 2, a.Generation, who)
			assert.Equal(t, recent, a.Recent, who+": the repaired generation's own outcomes only")
			assert.Zero(t, a.RecentFailureRate, who)
			assert.Empty(t, a.LastFailureClass, who+": gen 1's failure is not gen 2's")
			assert.Empty(t, a.LastFailureReason, who)
			assert.Equal(t, life, a.Lifecycle, who)
			assert.Equal(t, int64(1), a.IntrinsicFailureCount, who+": the failure counts in the method's totals")
			assert.Equal(t, int64(1), a.FailureCount, who)
		}
		a := load(t, f)
		check("the calling handle", a, "ss", registry.Candidate)
		assert.Equal(t, int64(3), a.SuccessCount, "every generation's successes")
		eventually(t, "the flushed counters in the other handle", func() bool { return load(t, other).SuccessCount == 3 })
		check("another handle", load(t, other), "ss", registry.Candidate)

		// Gen 1's successes (three of them, more than DurableAfter) did not prove gen 2: its own
		// third success does.
		require.True(t, call(f, "y").OK)
		f.Flush()
		check("the calling handle after a third success", load(t, f), "sss", registry.Durable)
		eventually(t, "the promotion in the other handle", func() bool { return load(t, other).Lifecycle == registry.Durable })
		check("another handle after a third success", load(t, other), "sss", registry.Durable)
		sums, err := other.Store().Summaries()
		require.NoError(t, err)
		require.Len(t, sums, 1)
		assert.Equal(t, "sss", sums[0].Recent)
		assert.Empty(t, sums[0].LastFailureClass)
	}},

	// Siblings: outcomes another handle (a process) recorded for the generation an operator then
	// replaced — a regeneration, a rollback — flushed after the replacement.
	{"OutcomesFlushedAfterAnotherHandlesRegenStayWithTheirGeneration", func(t *testing.T, e *bothEnv) {
		noTimer := func(o *forge.Options) { o.FlushInterval = time.Hour }
		v2 := bothUpperOK + "// v2\n"
		f := e.open(upperCassette(t, []string{bothUpperOK}), noTimer)
		require.NoError(t, f.AddRole(bothTextContract()))
		require.True(t, call(f, "ok").OK)
		f.Flush()
		caller := func(f *forge.Forge) { // a caller failure of the generation f runs
			t.Helper()
			o := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"t":"x"}`))
			require.False(t, o.OK)
			require.Equal(t, "caller", o.Err.Class, "%+v", o.Err)
		}
		caller(f)
		require.True(t, call(f, "a").OK)

		op := e.open(&answers{codes: []string{v2}}, noTimer)
		o := op.Regenerate(context.Background(), "text", "upper")
		require.True(t, o.OK, "%+v", o.Err)
		require.Equal(t, 2, o.Meta.ArtifactGen)
		f.Flush() // gen 1's outcomes, after gen 2 was written
		a := load(t, op)
		assert.Equal(t, 2, a.Generation)
		assert.Empty(t, a.Recent, "gen 2 has run no call")
		assert.Empty(t, a.LastFailureClass)
		assert.Equal(t, int64(2), a.SuccessCount, "gen 1's calls count in the totals")
		assert.Equal(t, int64(1), a.CallerFailureCount)

		// A rollback: gen 2's outcomes flushed after gen 3 (gen 1's code again) was written.
		eventually(t, "gen 2 in the calling handle", func() bool { return call(f, "b").Meta.ArtifactGen == 2 })
		caller(f)
		_, err := op.Rollback("text", "upper", 1)
		require.NoError(t, err)
		f.Flush()
		a = load(t, op)
		assert.Equal(t, 3, a.Generation)
		assert.Empty(t, a.Recent, "gen 3 has run no call")
		assert.Empty(t, a.LastFailureClass)
		assert.Equal(t, int64(2), a.CallerFailureCount)
		eventually(t, "gen 3 in the calling handle", func() bool { return call(f, "c").Meta.ArtifactGen == 3 })
		f.Flush()
		a = load(t, op)
		assert.Equal(t, "s", a.Recent, "gen 3's one call; no caller failure of gen 1 or 2")
	}},
	// `bless --reset-metrics` in the calling process clears the outcomes it recorded before the
	// reset, flushed or not; the count starts again from the reset.
	{"BlessResetClearsOutcomesRecordedBeforeIt", func(t *testing.T, e *bothEnv) {
		noTimer := func(o *forge.Options) { o.FlushInterval = time.Hour }
		f := e.open(upperCassette(t, []string{bothUpperOK}), noTimer)
		require.NoError(t, f.AddRole(bothTextContract()))
		require.True(t, call(f, "a").OK)
		require.True(t, call(f, "b").OK)
		o := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"t":"x"}`))
		require.False(t, o.OK)
		require.Equal(t, "caller", o.Err.Class, "%+v", o.Err)
		require.NoError(t, f.Bless("text", "upper", true))
		require.True(t, call(f, "c").OK)
		f.Flush()
		for _, h := range []*forge.Forge{f, e.open(nil)} {
			a := load(t, h)
			assert.Equal(t, registry.Blessed, a.Lifecycle)
			assert.Equal(t, int64(1), a.SuccessCount, "counted from the reset")
			assert.Zero(t, a.FailureCount)
			assert.Equal(t, "s", a.Recent)
			assert.Empty(t, a.LastFailureClass)
		}
	}},
	{"RepairBudgetExhaustedRegenerates", func(t *testing.T, e *bothEnv) {
		f := e.open(upperCassette(t, []string{bothUpperPanicsOn(0), bothUpperOK},
			bothUpperPanicsOn(1), bothUpperPanicsOn(3), bothUpperPanicsOn(4)))
		require.NoError(t, f.AddRole(bothTextContract()))
		require.True(t, call(f, "ok").OK)
		for i, s := range []string{"", "a", "abc"} {
			o := call(f, s)
			require.True(t, o.OK, "round %d: %+v", i+1, o.Err)
			assert.Equal(t, forge.SourceRepaired, o.Meta.ProgramSource)
			assert.Equal(t, i+1, load(t, f).RepairCountSinceRegen, "round %d", i+1)
		}
		o := call(f, "abcd")
		require.True(t, o.OK, "%+v", o.Err)
		assert.Equal(t, forge.SourceRegenerated, o.Meta.ProgramSource)
		art := load(t, f)
		assert.Equal(t, "regenerate:budget_exhausted", art.History[0].Trigger)
		assert.Zero(t, art.RepairCountSinceRegen, "regeneration resets the budget")
		assert.Equal(t, 5, art.Generation)
	}},

	// TestStaleContractIsRepaired, plus forge.Stale (`forge stale`) from another handle.
	{"ContractChangeMarksStale", func(t *testing.T, e *bothEnv) {
		f := e.open(upperCassette(t, []string{bothUpperOK}, bothUpperOK+"\n// fits the new contract\n"))
		require.NoError(t, f.AddRole(bothTextContract()))
		require.True(t, call(f, "a").OK)
		other := e.open(nil)
		rows, err := forge.Stale(other.Store())
		require.NoError(t, err)
		assert.Empty(t, rows)

		c := bothTextContract()
		c.Purpose = "string utilities, now shouting"
		require.NoError(t, other.AddRole(c))
		eventually(t, "the artifact listed as stale", func() bool {
			rows, err = forge.Stale(f.Store())
			require.NoError(t, err)
			return len(rows) == 1
		})
		assert.Equal(t, "text.upper", rows[0].Role+"."+rows[0].Method)
		assert.Contains(t, rows[0].Why, "the contract changed since it was verified")
		assert.Contains(t, rows[0].Why, "its next call repairs it")

		o := call(f, "a")
		require.True(t, o.OK, "%+v", o.Err)
		assert.Equal(t, "repair:stale_contract", o.Meta.Decision)
		assert.Equal(t, forge.SourceRepaired, o.Meta.ProgramSource)
		art := load(t, other)
		assert.Equal(t, "repair:adaptive", art.History[0].Trigger)
		assert.Equal(t, c.Fingerprint(), art.ContractFingerprint)
		rows, err = forge.Stale(other.Store())
		require.NoError(t, err)
		assert.Empty(t, rows, "repaired: no longer stale")
	}},

	// TestOperatorVerbFromAnotherProcessReachesARunningForge: an operator's verbs in one handle
	// reach another handle's next call. The bound is a hang detector; the latency is logged
	// (BenchmarkBackendsBlessVisibility measures it).
	{"VerbInOneHandleReachesTheOther", func(t *testing.T, e *bothEnv) {
		server := e.open(upperCassette(t, []string{bothUpperOK}))
		server.Store().SetRevalidate(20 * time.Millisecond) // the directory store's poll; the fleet store's watch always runs
		require.NoError(t, server.AddRole(bothTextContract()))
		require.True(t, call(server, "a").OK)
		require.True(t, call(server, "a").OK, "warm")

		operator := e.open(nil) // `forge quarantine text upper` in another process
		require.NoError(t, operator.Quarantine("text", "upper"))
		var o forge.Outcome
		took := eventually(t, "the quarantine in the running forge", func() bool {
			o = call(server, "a")
			return !o.OK
		})
		assert.Equal(t, "refused", o.Err.Type)
		t.Logf("quarantine seen by the other handle after %v", took)

		_, err := operator.Rollback("text", "upper", 0)
		assert.Error(t, err, "one generation only: nothing to roll back to")
		_, err = operator.Rollback("text", "upper", 1)
		require.NoError(t, err, "rolling back to the current generation lifts the quarantine")
		require.NoError(t, operator.Bless("text", "upper", false))
		took = eventually(t, "the bless in the running forge", func() bool {
			o = call(server, "a")
			return o.OK && o.Meta.Decision == "execute:blessed"
		})
		assert.Zero(t, o.Meta.ProviderCalls)
		t.Logf("bless seen by the other handle after %v", took)
	}},

	// TestConcurrentColdCallsShareOneGeneration and TestTwoProcessesForgeOnce: cold calls from
	// two handles at once generate once (the store's generation lock, not a mutex in one forge).
	{"ConcurrentColdCallsFromTwoHandlesGenerateOnce", func(t *testing.T, e *bothEnv) {
		p1 := &answers{codes: []string{bothUpperOK}, delay: 200 * time.Millisecond}
		p2 := &answers{codes: []string{bothUpperOK}, delay: 200 * time.Millisecond}
		a, b := e.open(p1), e.open(p2)
		require.NoError(t, a.AddRole(bothTextContract()))
		_, err := b.Store().Role("text")
		require.NoError(t, err)
		var wg sync.WaitGroup
		outs := make([]forge.Outcome, 16)
		for i := range outs {
			h := a
			if i%2 == 1 {
				h = b
			}
			wg.Add(1)
			go func(i int, h *forge.Forge) {
				defer wg.Done()
				outs[i] = h.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"x`+strings.Repeat("y", i%3)+`"}`))
			}(i, h)
		}
		wg.Wait()
		for i, o := range outs {
			require.True(t, o.OK, "call %d: %+v", i, o.Err)
			assert.JSONEq(t, `"X`+strings.Repeat("Y", i%3)+`"`, string(o.Value))
		}
		assert.Equal(t, int64(1), p1.n.Load()+p2.n.Load(), "exactly one generation across both handles")
		assert.Equal(t, 1, load(t, a).Generation)
		assert.Equal(t, 1, load(t, b).Generation)
	}},

	// TestWatchBringsOtherProcessVerbsToTheNextCall: watch mode (the directory's poll is off, an
	// hour) brings another handle's verbs and contracts to subscribers and to the next call.
	{"WatchModeBringsOtherHandlesChanges", func(t *testing.T, e *bothEnv) {
		server := e.open(upperCassette(t, []string{bothUpperOK}))
		server.Store().SetRevalidate(time.Hour)
		require.NoError(t, server.AddRole(bothTextContract()))
		require.True(t, call(server, "a").OK)
		require.NoError(t, server.Watch())
		sub := server.Subscribe(forge.Filter{Role: "text"})
		defer sub.Close()

		operator := e.open(nil)
		require.NoError(t, operator.Quarantine("text", "upper"))
		ch := nextArtifactChange(t, sub)
		assert.Equal(t, "quarantined", ch.Lifecycle)
		assert.Equal(t, "candidate", ch.PreviousLifecycle)
		o := call(server, "a")
		require.False(t, o.OK, "the running forge must see the quarantine")
		assert.Equal(t, "refused", o.Err.Type)

		_, err := operator.Rollback("text", "upper", 1)
		require.NoError(t, err)
		require.NoError(t, operator.Bless("text", "upper", false))
		for ch.Lifecycle != "blessed" {
			ch = nextArtifactChange(t, sub)
		}
		o = call(server, "a")
		require.True(t, o.OK, "%+v", o.Err)
		assert.Equal(t, "execute:blessed", o.Meta.Decision)

		c := bothTextContract()
		c.Purpose = "string utilities, second edition"
		require.NoError(t, operator.AddRole(c))
		deadline := time.After(bothHang)
		for got := false; !got; {
			select {
			case e := <-sub.C:
				got = e.Kind == forge.LiveRole && e.Role == "text"
			case <-deadline:
				t.Fatal("no role change (a hang)")
			}
		}
		rec, err := server.Store().Role("text")
		require.NoError(t, err)
		assert.Equal(t, c.Purpose, rec.Purpose)
	}},

	// TestExtrinsicFailureLeavesHealthUntouched: an outage is counted as extrinsic, costs no
	// repair, and keeps the code that passed the gate.
	{"ExtrinsicFailureLeavesHealthUntouched", func(t *testing.T, e *bothEnv) {
		code := "package artifact\n\nimport \"forge/host\"\n\nfunc Fetch(url string) (string, error) {\n\treturn host.Get(url)\n}\n"
		f := e.open(&answers{codes: []string{code}})
		require.NoError(t, f.AddRole(registry.Contract{Role: "web", Purpose: "fetch pages",
			Capabilities: &registry.Capabilities{HTTP: &registry.HTTPCapability{Allow: []string{"127.0.0.1:1"}, Timeout: "500ms"}}}))
		o := f.Call(context.Background(), "web", "fetch", json.RawMessage(`{"url":"http://127.0.0.1:1/"}`))
		require.False(t, o.OK)
		assert.Equal(t, "extrinsic", o.Err.Class, "%+v", o.Err)
		assert.True(t, o.Err.Retriable)
		f.Flush()
		art, err := e.open(nil).Store().Load("web", "fetch")
		require.NoError(t, err, "code that passed the gate is kept even when its first run met an outage")
		assert.Zero(t, art.IntrinsicFailureCount+art.AdaptiveFailureCount)
		assert.Equal(t, int64(1), art.ExtrinsicFailureCount)
		assert.Zero(t, art.RepairCountSinceRegen)
		o = f.Call(context.Background(), "web", "fetch", json.RawMessage(`{"url":"http://127.0.0.1:1/"}`))
		assert.Equal(t, "extrinsic", o.Err.Class)
		assert.Zero(t, o.Meta.ProviderCalls, "no repair for an outage")
	}},

	// TestGateExhaustedPersistsNothing, TestEditGoesThroughTheGate: code that fails the gate is
	// never stored; an operator's edit that passes is a new generation every handle runs.
	{"GateKeepsFailingCodeOut", func(t *testing.T, e *bothEnv) {
		upperWrong := "package artifact\n\nfunc Upper(s string) string { return s }\n"
		f := e.open(upperCassette(t, []string{upperWrong, upperWrong, upperWrong, bothUpperOK}))
		require.NoError(t, f.AddRole(bothTextContract()))
		o := call(f, "x")
		require.False(t, o.OK)
		assert.Equal(t, "gate", o.Err.Type)
		assert.Equal(t, "intrinsic", o.Err.Class)
		assert.Equal(t, "acceptance", o.Err.Rule)
		assert.Equal(t, forge.DefaultMaxProviderCalls, o.Meta.ProviderCalls)
		other := e.open(nil)
		_, err := other.Store().Load("text", "upper")
		assert.ErrorIs(t, err, registry.ErrNotFound)

		o = f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"x"}`))
		require.True(t, o.OK, "%+v", o.Err)
		o = other.Edit(context.Background(), "text", "upper", upperWrong)
		require.False(t, o.OK, "code that fails the acceptance example is refused")
		assert.Equal(t, "gate", o.Err.Type)
		assert.Equal(t, 1, load(t, f).Generation, "nothing stored")
		edited := bothUpperOK + "\n// edited by an operator\n"
		o = other.Edit(context.Background(), "text", "upper", edited)
		require.True(t, o.OK, "%+v", o.Err)
		assert.Equal(t, 2, o.Meta.ArtifactGen)
		art := load(t, f)
		assert.Equal(t, "operator:edit", art.History[0].Trigger)
		assert.Equal(t, edited, art.Code)
		eventually(t, "the edit in the first handle", func() bool {
			o = call(f, "b")
			require.True(t, o.OK, "%+v", o.Err)
			return o.Meta.ArtifactGen == 2
		})
	}},

	// TestPromptVersionChangeKeepsProvenArtifact: a record written by an older prompt version is
	// still run, not regenerated.
	{"PromptVersionChangeKeepsProvenArtifact", func(t *testing.T, e *bothEnv) {
		p := upperCassette(t, []string{bothUpperOK})
		f := e.open(p)
		require.NoError(t, f.AddRole(bothTextContract()))
		require.True(t, call(f, "a").OK)
		_, err := f.Store().Update("text", "upper", func(a *registry.Artifact, _ bool) error {
			a.PromptVersion = "an-older-prompt"
			a.History[0].PromptVersion = "an-older-prompt"
			return nil
		})
		require.NoError(t, err)
		o := call(f, "a")
		require.True(t, o.OK)
		assert.Equal(t, forge.SourcePersisted, o.Meta.ProgramSource)
		assert.Equal(t, int64(1), p.n.Load())
		assert.Equal(t, "an-older-prompt", load(t, e.open(nil)).PromptVersion)
	}},

	// TestLearningPays: a lesson learned in one session is recalled in a later session's prompt
	// for another role, and kept in the store's knowledge (the fleet's documents, or the
	// directory's knowledge/).
	{"KnowledgeRecordedAndRecalled", func(t *testing.T, e *bothEnv) {
		// A handle that is running all along, its knowledge read before anything is learned.
		mC := &bothPitfall{}
		fC := e.open(mC)
		_, err := fC.Learner().List("")
		require.NoError(t, err)

		mA := &bothPitfall{}
		fA := e.open(mA)
		localA := fA.Store().LocalDir()
		require.NoError(t, fA.AddRole(bothClockContract("clock", "year", "the year of the current time")))
		o := fA.Call(context.Background(), "clock", "year", json.RawMessage(`{}`))
		require.True(t, o.OK, "%v", o.Err)
		require.NoError(t, fA.Close())

		mB := &bothPitfall{}
		fB := e.open(mB)
		require.NoError(t, fB.AddRole(bothClockContract("calendar", "day", "the day of the month of the current time")))
		o = fB.Call(context.Background(), "calendar", "day", json.RawMessage(`{}`))
		require.True(t, o.OK, "%v", o.Err)
		require.NoError(t, fB.Close())

		assert.Equal(t, 2, mA.calls, "role A hits the pitfall and is fixed by feedback")
		assert.Equal(t, 1, mB.calls, "role B, in a later session, passes at the first attempt with the lesson")
		require.NotEmpty(t, mB.prompts)
		assert.Contains(t, mB.prompts[0], "## Lessons from earlier generations")
		assert.Contains(t, mB.prompts[0], "time.Now")

		reader := e.open(nil)
		l, err := forge.OpenKnowledge(reader.Store(), learner.Options{})
		require.NoError(t, err)
		shared, err := l.List(learner.ForgeDomain)
		require.NoError(t, err)
		require.Len(t, shared, 1, "one sandbox lesson in the shared forge domain")
		assert.Equal(t, learner.Correction, shared[0].Category)
		assert.Contains(t, shared[0].Content, "policy: time.Now is not available in the sandbox", "forge's own wording (issue 22 item 1)")
		assert.Equal(t, learner.FromForge, shared[0].Source)
		assert.InDelta(t, 0.2, shared[0].Confidence, 1e-9, "role B's first-attempt pass confirmed the lesson it used")
		own, err := l.List("clock")
		require.NoError(t, err)
		assert.Len(t, own, 1, "the lesson is in the role's own domain too")
		if e.fleet {
			_, err = os.Stat(filepath.Join(localA, learner.Dir))
			assert.True(t, os.IsNotExist(err), "the fleet keeps knowledge in the store, nothing in LocalDir")
		}

		// The handle that was running all along recalls the lesson too (a domain it has not
		// cached is read from the store; a cached one is compared every learner.Options.Revalidate).
		require.NoError(t, fC.AddRole(bothClockContract("almanac", "day", "the day of the month, for the almanac")))
		o = fC.Call(context.Background(), "almanac", "day", json.RawMessage(`{}`))
		require.True(t, o.OK, "%v", o.Err)
		assert.Equal(t, 1, mC.calls, "the running handle recalled the lesson another handle learned")
	}},
	// TestDamagedKnowledgeIsQuarantinedByTheStore: a knowledge document that does not parse is
	// set aside through the store (a registry.Maintainer on both backends), and the domain starts
	// again with the new lesson.
	{"DamagedKnowledgeIsQuarantinedByTheStore", func(t *testing.T, e *bothEnv) {
		const damaged = "{not: [a list"
		if e.fleet {
			require.NoError(t, e.open(nil).Store().Knowledge().Modify("forge.yaml", func([]byte) ([]byte, error) { return []byte(damaged), nil }))
		} else {
			require.NoError(t, os.MkdirAll(filepath.Join(e.store, learner.Dir), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(e.store, learner.Dir, "forge.yaml"), []byte(damaged), 0o644))
		}
		f := e.open(&bothPitfall{})
		require.NoError(t, f.AddRole(bothClockContract("clock", "year", "the year of the current time")))
		o := f.Call(context.Background(), "clock", "year", json.RawMessage(`{}`))
		require.True(t, o.OK, "%v", o.Err)
		m, err := f.Maintainer()
		require.NoError(t, err)
		q, err := m.Quarantined()
		require.NoError(t, err)
		require.Len(t, q, 1)
		if e.fleet {
			// The fleet names the record by its data bucket key (the name escaped into a token).
			tok, err := fleet.EscapeToken("forge.yaml")
			require.NoError(t, err)
			assert.True(t, strings.HasSuffix(q[0].Path, "_data/knowledge."+tok), q[0].Path)
			assert.Equal(t, "knowledge", q[0].Kind)
		} else {
			assert.Contains(t, q[0].Path, filepath.Join(learner.Dir, "forge.yaml"))
		}
		assert.Contains(t, q[0].Reason, "knowledge file does not parse")
		require.NoError(t, f.Close())
		l, err := forge.OpenKnowledge(e.open(nil).Store(), learner.Options{})
		require.NoError(t, err)
		es, err := l.List(learner.ForgeDomain)
		require.NoError(t, err)
		assert.Len(t, es, 1, "the domain started again and learned the new lesson")
	}},

	// TestColdSelfDelegation and TestDelegationNeverDeadlocks (yaegi, a ring of three roles):
	// a cold method whose gate runs a candidate delegating to itself generates once (no lock is
	// taken again by the candidate's own calls), a cold ring generates each role once, and
	// concurrent callers at the depth cap finish without the provider.
	{"DelegationColdSelfAndRing", func(t *testing.T, e *bothEnv) {
		p := &ringAnswers{ring: []string{"a", "b", "c"}}
		f := e.open(p)
		for _, r := range p.ring {
			c := registry.Contract{Role: r, Purpose: "delegation test", Methods: map[string]string{"p": "func P(n int) (string, error)"},
				Capabilities: &registry.Capabilities{Call: true}, Sandbox: "yaegi", Limits: &registry.Limits{Timeout: "60s"}}
			require.NoError(t, f.AddRole(c))
		}
		self := registry.Contract{Role: "s", Purpose: "delegation test", Methods: map[string]string{"p": "func P(n int) (string, error)"},
			Capabilities: &registry.Capabilities{Call: true}, Sandbox: "yaegi", Limits: &registry.Limits{Timeout: "60s"},
			Acceptance: &registry.Acceptance{Examples: []registry.Example{{Method: "p", Args: json.RawMessage(`{"n":3}`), Expect: json.RawMessage(`"done"`)}}}}
		require.NoError(t, f.AddRole(self))
		o := f.Call(context.Background(), "s", "p", json.RawMessage(`{"n":5}`))
		require.True(t, o.OK, "%+v", o.Err)
		assert.Equal(t, 1, o.Meta.ProviderCalls, "the self-delegating method is generated once")

		o = f.Call(context.Background(), "a", "p", json.RawMessage(`{"n":4}`))
		require.True(t, o.OK, "%+v", o.Err)
		assert.JSONEq(t, `"done"`, string(o.Value))
		assert.Equal(t, int64(1+3), p.n.Load(), "each role of the ring generated once")

		other := e.open(nil) // another process: no provider, runs what is stored
		var wg sync.WaitGroup
		outs := make([]forge.Outcome, 4)
		for i := range outs {
			h := f
			if i%2 == 1 {
				h = other
			}
			wg.Add(1)
			go func(i int, h *forge.Forge) {
				defer wg.Done()
				outs[i] = h.Call(context.Background(), "a", "p", json.RawMessage(fmt.Sprintf(`{"n":%d}`, sandbox.DefaultMaxCallDepth)))
			}(i, h)
		}
		wg.Wait()
		for i, o := range outs {
			require.True(t, o.OK, "caller %d: %+v", i, o.Err)
			assert.JSONEq(t, `"done"`, string(o.Value))
			assert.Zero(t, o.Meta.ProviderCalls)
		}
		assert.Equal(t, int64(1+3), p.n.Load())
	}},
}

// bothBackends opens a fresh store per scenario: "dir" a directory, "nats" a new store name on
// the embedded server at url.
func bothBackends(t *testing.T, url string) []struct {
	name string
	env  func(t *testing.T, i int) *bothEnv
} {
	return []struct {
		name string
		env  func(t *testing.T, i int) *bothEnv
	}{
		{"dir", func(t *testing.T, _ int) *bothEnv { return &bothEnv{t: t, store: t.TempDir()} }},
		{"nats", func(t *testing.T, i int) *bothEnv {
			return &bothEnv{t: t, store: fmt.Sprintf("%s/both%d", url, i), fleet: true}
		}},
	}
}

// startBothServer starts the embedded single-node JetStream server the table's fleet stores use.
func startBothServer(t testing.TB) string {
	t.Helper()
	url, stop, err := embedded.Start(t.TempDir())
	require.NoError(t, err, "starting an embedded nats-server for the fleet store")
	t.Cleanup(stop)
	return url
}

// TestBackends runs every scenario on both store backends.
func TestBackends(t *testing.T) {
	url := startBothServer(t)
	for _, be := range bothBackends(t, url) {
		t.Run(be.name, func(t *testing.T) {
			for i, sc := range bothScenarios {
				t.Run(sc.name, func(t *testing.T) {
					sc.run(t, be.env(t, i))
				})
			}
		})
	}
}

// BenchmarkBackendsBlessVisibility: how long a bless by one handle takes to reach another
// handle's next call, on each backend (the directory store polling every 20 ms, the fleet store
// through its watch). Issue 13 asks for under 1 s.
func BenchmarkBackendsBlessVisibility(b *testing.B) {
	url, stop, err := embedded.Start(b.TempDir())
	require.NoError(b, err)
	defer stop()
	for _, be := range []struct {
		name  string
		store func() string
	}{
		{"dir", func() string { return b.TempDir() }},
		{"nats", func() string { return fmt.Sprintf("%s/bench%d", url, time.Now().UnixNano()) }},
	} {
		b.Run(be.name, func(b *testing.B) {
			store := be.store()
			open := func(p provider.Provider) *forge.Forge {
				f, err := forge.Open(forge.Options{Store: store, Provider: p, DefaultSandbox: "yaegi", LocalDir: b.TempDir()})
				require.NoError(b, err)
				b.Cleanup(func() { f.Close() })
				return f
			}
			server := open(upperCassette(b, []string{bothUpperOK}))
			server.Store().SetRevalidate(20 * time.Millisecond)
			require.NoError(b, server.AddRole(bothTextContract()))
			require.True(b, call(server, "a").OK)
			operator := open(nil)
			var worst, total time.Duration
			b.ResetTimer()
			for n := 0; n < b.N; n++ {
				lc := registry.Blessed
				if n%2 == 1 {
					lc = registry.Durable
				}
				_, err := operator.Store().Update("text", "upper", func(a *registry.Artifact, _ bool) error { a.Lifecycle = lc; return nil })
				require.NoError(b, err)
				blessed := lc == registry.Blessed
				start := time.Now()
				for {
					o := call(server, "a")
					if o.OK && (o.Meta.Decision == "execute:blessed") == blessed {
						break
					}
					if time.Since(start) > bothHang {
						b.Fatalf("%s not seen (a hang): %+v", lc, o)
					}
					time.Sleep(100 * time.Microsecond)
				}
				d := time.Since(start)
				total += d
				worst = max(worst, d)
			}
			b.StopTimer()
			b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1000, "mean-ms")
			b.ReportMetric(float64(worst.Microseconds())/1000, "max-ms")
		})
	}
}

// TestBackendsFleetStoreDown: the fleet-only side of the table. With its server gone, a forge on
// the fleet store keeps serving warm calls from memory, and its Flush and Close return at once
// (the outcomes are kept for the next flush) instead of each waiting out the operation timeout
// (they took 44 s and 30 s); when the server is back, the kept outcomes are counted once. The
// bounds are hang detectors.
func TestBackendsFleetStoreDown(t *testing.T) {
	node := startRestartable(t, t.TempDir())
	e := &bothEnv{t: t, store: node.url() + "/down", fleet: true}
	noTimer := func(o *forge.Options) { o.FlushInterval = time.Hour } // only the test's flushes
	f := e.open(upperCassette(t, []string{bothUpperOK}), noTimer)
	require.NoError(t, f.AddRole(bothTextContract()))
	require.True(t, call(f, "a").OK)
	f.Flush()
	conn := f.Store().(*fleet.FleetStore).Store().Conn()

	node.Stop()
	eventually(t, "the client noticing the server is gone", func() bool { return !conn.IsConnected() })
	for i := 0; i < 3; i++ {
		o := call(f, "b")
		require.True(t, o.OK, "a warm call runs from memory: %+v", o.Err)
		assert.Equal(t, forge.SourcePersisted, o.Meta.ProgramSource)
	}
	start := time.Now()
	f.Flush()
	took := time.Since(start)
	t.Logf("Flush with the server down: %v", took)
	assert.Less(t, took, bothHang, "Flush waited for an unreachable server")
	rec := f.Store().NewRecorder(time.Hour)
	rec.Record("text", "upper", registry.Success, time.Millisecond, "")
	rep := rec.Close()
	require.Len(t, rep.Dropped, 1)
	for _, err := range rep.Dropped {
		assert.ErrorContains(t, err, "kept for the next flush")
		assert.ErrorContains(t, err, "check that nats-server runs there")
	}

	node.start(t)
	eventually(t, "the client reconnecting", conn.IsConnected)
	eventually(t, "the kept outcomes flushed", func() bool {
		f.Flush()
		a, err := e.open(nil).Store().Load("text", "upper")
		return err == nil && a.SuccessCount == 4
	})
	require.True(t, call(f, "c").OK)

	node.Stop()
	eventually(t, "the client noticing the server is gone again", func() bool { return !conn.IsConnected() })
	start = time.Now()
	err := f.Close() // the last call's counters cannot be written: Close says so
	took = time.Since(start)
	require.Error(t, err)
	assert.ErrorContains(t, err, "could not be written to the store")
	assert.ErrorContains(t, err, "text.upper")
	t.Logf("Close with the server down: %v", took)
	assert.Less(t, took, bothHang, "Close waited for an unreachable server")
}

// restartable is a single-node JetStream server that can be stopped and started again on its
// port, as a server restart looks to its clients (embedded.Start picks a new port each time).
type restartable struct {
	o   *server.Options
	srv *server.Server
}

func startRestartable(t *testing.T, dir string) *restartable {
	n := &restartable{o: &server.Options{ServerName: "forge-down", Host: "127.0.0.1", Port: -1, JetStream: true,
		StoreDir: dir, NoLog: true, NoSigs: true, JetStreamMaxMemory: 64 << 20, JetStreamMaxStore: 1 << 30}}
	n.start(t)
	n.o.Port = n.srv.Addr().(*net.TCPAddr).Port
	t.Cleanup(n.Stop)
	return n
}

func (n *restartable) start(t *testing.T) {
	t.Helper()
	srv, err := server.NewServer(n.o)
	require.NoError(t, err)
	go srv.Start()
	require.True(t, srv.ReadyForConnections(bothHang), "the nats-server did not start within %v", bothHang)
	n.srv = srv
}

func (n *restartable) url() string { return "nats://" + n.srv.Addr().String() }

// Stop shuts the server down and waits for it (a stopped server is left alone).
func (n *restartable) Stop() {
	if n.srv != nil {
		n.srv.Shutdown()
		n.srv.WaitForShutdown()
		n.srv = nil
	}
}

package forge

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/provider"
	"github.com/artifactforge/forge/registry"
)

// funcProvider answers every request with fn.
type funcProvider struct {
	mu   sync.Mutex
	reqs []provider.Request
	fn   func(n int, r provider.Request) (provider.Answer, error)
}

func (p *funcProvider) Generate(ctx context.Context, r provider.Request) (provider.Answer, error) {
	p.mu.Lock()
	p.reqs = append(p.reqs, r)
	n := len(p.reqs)
	p.mu.Unlock()
	return p.fn(n, r)
}

func (p *funcProvider) Name() string { return "func" }

func (p *funcProvider) requests() []provider.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]provider.Request(nil), p.reqs...)
}

// codeAnswers answers the n-th request with codes[n-1] (the last one after that).
func codeAnswers(codes ...string) *funcProvider {
	return &funcProvider{fn: func(n int, _ provider.Request) (provider.Answer, error) {
		c := codes[min(n, len(codes))-1]
		return provider.Answer{Code: c, Raw: c, Model: "func"}, nil
	}}
}

// noCode answers like a model that wrote no code at all (`echo sorry, no code`).
func noCode() provider.Provider {
	return &funcProvider{fn: func(int, provider.Request) (provider.Answer, error) {
		raw := "sorry, no code"
		_, err := provider.Heal(raw)
		return provider.Answer{Raw: raw}, &provider.Error{Kind: provider.BadAnswer, Provider: "func", Message: "no code in the answer", Err: err}
	}}
}

// Issue 9 item 1: a regeneration that produces nothing usable leaves the current generation
// exactly as it was, says why, and the next call runs the persisted code.
func TestFailedRegenLeavesHealthyCodeAlone(t *testing.T) {
	store := t.TempDir()
	f := openForge(t, store, codeAnswers(upperOK))
	require.NoError(t, f.AddRole(textContract()))
	require.True(t, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
	f.Flush()
	before, err := f.Store().Load("text", "upper")
	require.NoError(t, err)

	op := openForge(t, store, noCode())
	o := op.Regenerate(context.Background(), "text", "upper")
	require.False(t, o.OK)
	assert.Contains(t, o.Err.Message, "no generated code passed verification")
	assert.Contains(t, o.Err.Message, "the current generation 1 of text.upper is unchanged")
	op.Flush()

	after, err := f.Store().Load("text", "upper")
	require.NoError(t, err)
	assert.Equal(t, before.Lifecycle, after.Lifecycle, "lifecycle unchanged")
	assert.NotEqual(t, registry.Degraded, after.Lifecycle)
	assert.Equal(t, before.Counters, after.Counters, "no failure counted against the code")
	assert.Equal(t, before.Generation, after.Generation)
	assert.Equal(t, before.LastFailureClass, after.LastFailureClass)

	o = f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"b"}`))
	require.True(t, o.OK, "%+v", o.Err)
	assert.Equal(t, SourcePersisted, o.Meta.ProgramSource, "the next call runs the healthy code, no repair")
	assert.Zero(t, o.Meta.ProviderCalls)

	// With a working provider, the regeneration's generation is the operator's.
	op2 := openForge(t, store, codeAnswers(upperOK+"// v2\n"))
	o = op2.Regenerate(context.Background(), "text", "upper")
	require.True(t, o.OK, "%+v", o.Err)
	assert.Equal(t, "regenerate:operator", o.Meta.Decision)
	art, err := f.Store().Load("text", "upper")
	require.NoError(t, err)
	assert.Equal(t, 2, art.Generation)
	assert.Equal(t, "operator:regen", art.History[0].Trigger)
}

// blockingProvider answers with code once release is closed, and says when it was first asked.
func blockingProvider(code string) (p *funcProvider, entered, release chan struct{}) {
	entered, release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	p = &funcProvider{fn: func(int, provider.Request) (provider.Answer, error) {
		once.Do(func() { close(entered) })
		<-release
		return provider.Answer{Code: code, Raw: code, Model: "func"}, nil
	}}
	return p, entered, release
}

// Issue 9 item 2: a second regeneration while one runs joins it (in this process) or waits for
// it (another process, through the generation lock) and reports its result; it never runs the
// fresh code with no args, and nothing is counted against the code.
func TestConcurrentRegensJoin(t *testing.T) {
	for _, crossProcess := range []bool{false, true} {
		name := "in-process"
		if crossProcess {
			name = "cross-process"
		}
		t.Run(name, func(t *testing.T) {
			store := t.TempDir()
			f := openForge(t, store, codeAnswers(upperOK))
			require.NoError(t, f.AddRole(textContract()))
			require.True(t, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
			f.Flush()

			p1, entered, release := blockingProvider(upperOK + "// v2\n")
			a := openForge(t, store, p1)
			b := a
			p2 := codeAnswers(upperOK + "// v3\n")
			if crossProcess {
				b = openForge(t, store, p2) // another process: its own single flight, the same store lock
			}
			var wg sync.WaitGroup
			var oa, ob Outcome
			wg.Add(1)
			go func() { defer wg.Done(); oa = a.Regenerate(context.Background(), "text", "upper") }()
			<-entered
			wg.Add(1)
			go func() { defer wg.Done(); ob = b.Regenerate(context.Background(), "text", "upper") }()
			time.Sleep(200 * time.Millisecond) // let the second reach the flight or the lock (ordering only)
			close(release)
			wg.Wait()
			require.True(t, oa.OK, "%+v", oa.Err)
			require.True(t, ob.OK, "the second regeneration: %+v", ob.Err)
			assert.True(t, ob.Meta.Joined, "the second regeneration joined the first")
			assert.Equal(t, oa.Meta.ArtifactGen, ob.Meta.ArtifactGen)
			assert.Empty(t, p2.requests(), "one generation only")
			a.Flush()
			b.Flush()
			art, err := a.Store().Load("text", "upper")
			require.NoError(t, err)
			assert.Equal(t, 2, art.Generation)
			assert.Zero(t, art.FailureCount, "no failure counted")
			assert.Empty(t, art.LastFailureReason)
		})
	}
}

// Issue 9 item 8: an answer byte-identical to the current code adds no generation, so the kept
// history still holds every real one.
func TestIdenticalRegenKeepsHistory(t *testing.T) {
	store := t.TempDir()
	v2, v3 := upperOK+"// v2\n", upperOK+"// v3\n"
	f := openForge(t, store, codeAnswers(upperOK, v2, v3, v3))
	require.NoError(t, f.AddRole(textContract()))
	require.True(t, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
	require.True(t, f.Regenerate(context.Background(), "text", "upper").OK)
	require.True(t, f.Regenerate(context.Background(), "text", "upper").OK)
	before, err := f.Store().Load("text", "upper")
	require.NoError(t, err)
	require.Equal(t, 3, before.Generation)

	o := f.Regenerate(context.Background(), "text", "upper")
	require.True(t, o.OK, "%+v", o.Err)
	assert.True(t, o.Meta.Unchanged)
	assert.Equal(t, 3, o.Meta.ArtifactGen)
	after, err := f.Store().Load("text", "upper")
	require.NoError(t, err)
	assert.Equal(t, 3, after.Generation)
	require.Len(t, after.History, len(before.History))
	for i := range before.History {
		assert.Equal(t, before.History[i].ID, after.History[i].ID)
	}
	_, err = f.Rollback("text", "upper", 1)
	assert.NoError(t, err, "generation 1 is still kept")
}

// Issue 9 item 4: with no code generator configured, a failure that needs a repair is reported
// first (class, rule, message), then that a repair needs a provider and how to configure one.
func TestNoProviderReportsTheFailureFirst(t *testing.T) {
	store := t.TempDir()
	f := openForge(t, store, codeAnswers(upperPanics))
	require.NoError(t, f.AddRole(textContract()))
	require.True(t, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
	require.NoError(t, f.Close())

	g := openForge(t, store, nil)
	o := g.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":""}`))
	require.False(t, o.OK)
	assert.Equal(t, "intrinsic", o.Err.Class)
	assert.Equal(t, "panic", o.Err.Rule)
	assert.Equal(t, "panic", o.Err.Type)
	assert.True(t, strings.HasPrefix(o.Err.Message, "intrinsic failure (rule panic): "), o.Err.Message)
	assert.Contains(t, o.Err.Message, "index out of bounds")
	assert.Contains(t, o.Err.Message, "repairing it needs a code generator")
	assert.Contains(t, o.Err.Message, "FORGE_PROVIDER")
}

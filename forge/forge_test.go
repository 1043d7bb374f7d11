package forge

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/provider"
	"github.com/artifactforge/forge/provider/replay"
	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/gate"
	"github.com/artifactforge/forge/sandbox/yaegi"
	"github.com/artifactforge/forge/selector"
)

const upperOK = "package artifact\n\nimport \"strings\"\n\nfunc Upper(s string) string { return strings.ToUpper(s) }\n"

// upperPanics indexes past the end of an empty string: an intrinsic failure on "".
const upperPanics = "package artifact\n\nimport \"strings\"\n\nfunc Upper(s string) string { return strings.ToUpper(s[:1]) + strings.ToUpper(s[1:]) }\n"

const upperWrong = "package artifact\n\nfunc Upper(s string) string { return s }\n"

// cassette builds a replay provider from (role, method, kind, attempt, code-or-error) lines.
type line struct {
	Role    string `json:"role"`
	Method  string `json:"method"`
	Kind    string `json:"kind"`
	Attempt int    `json:"attempt"`
	Code    string `json:"code,omitempty"`
	Error   string `json:"error,omitempty"`
}

// countingProvider counts the provider calls that reach the cassette.
type countingProvider struct {
	provider.Provider
	n atomic.Int64
}

func (p *countingProvider) Generate(ctx context.Context, r provider.Request) (provider.Answer, error) {
	p.n.Add(1)
	return p.Provider.Generate(ctx, r)
}

func cassette(t testing.TB, lines ...line) *countingProvider {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		j, err := json.Marshal(l)
		require.NoError(t, err)
		b.Write(j)
		b.WriteByte('\n')
	}
	c, err := replay.New("test", []byte(b.String()))
	require.NoError(t, err)
	return &countingProvider{Provider: c}
}

func textContract() registry.Contract {
	return registry.Contract{Role: "text", Purpose: "string utilities",
		Methods:    map[string]string{"upper": "func Upper(s string) string"},
		Acceptance: &registry.Acceptance{Examples: []registry.Example{{Method: "upper", Args: json.RawMessage(`{"s":"go"}`), Expect: json.RawMessage(`"GO"`)}}}}
}

func openForge(t testing.TB, store string, p provider.Provider, mod ...func(*Options)) *Forge {
	t.Helper()
	// The call path's tests run trusted code: in-process yaegi keeps them fast. The safe default
	// itself is tested in backend_test.go.
	opts := Options{Store: store, Provider: p, DefaultSandbox: "yaegi"}
	for _, m := range mod {
		m(&opts)
	}
	f, err := Open(opts)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

func TestFirstCallGeneratesSecondRunsPersisted(t *testing.T) {
	store := t.TempDir()
	p := cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK})
	f := openForge(t, store, p)
	require.NoError(t, f.AddRole(textContract()))

	o := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"hello"}`))
	require.True(t, o.OK, "%+v", o.Err)
	assert.JSONEq(t, `"HELLO"`, string(o.Value))
	assert.Equal(t, SourceGenerated, o.Meta.ProgramSource)
	assert.Equal(t, 1, o.Meta.ProviderCalls)
	assert.Equal(t, 1, o.Meta.ArtifactGen)

	o = f.Call(context.Background(), "text", "upper", json.RawMessage(`["again"]`))
	require.True(t, o.OK, "%+v", o.Err)
	assert.JSONEq(t, `"AGAIN"`, string(o.Value))
	assert.Equal(t, SourcePersisted, o.Meta.ProgramSource)
	assert.Zero(t, o.Meta.ProviderCalls)
	assert.Equal(t, int64(1), p.n.Load())

	art, err := f.Store().Load("text", "upper")
	require.NoError(t, err)
	assert.Equal(t, "initial_forge", art.History[0].Trigger)
	assert.Equal(t, "func Upper(s string) string", art.Signature.Decl)
	assert.Equal(t, PromptVersion, art.PromptVersion)
}

func TestCrossSessionReuseWithoutProvider(t *testing.T) {
	store := t.TempDir()
	f1 := openForge(t, store, cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK}))
	require.NoError(t, f1.AddRole(textContract()))
	require.True(t, f1.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
	require.NoError(t, f1.Close())

	f2 := openForge(t, store, nil) // no provider configured at all
	o := f2.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"b"}`))
	require.True(t, o.OK, "%+v", o.Err)
	assert.JSONEq(t, `"B"`, string(o.Value))
	assert.Equal(t, SourcePersisted, o.Meta.ProgramSource)

	o = f2.Call(context.Background(), "text", "lower", json.RawMessage(`{"s":"b"}`))
	require.False(t, o.OK)
	assert.Equal(t, "unknown_method", o.Err.Type)
	assert.Equal(t, "caller", o.Err.Class)
}

func TestNoProviderConfiguredSaysHow(t *testing.T) {
	f := openForge(t, t.TempDir(), nil)
	require.NoError(t, f.AddRole(textContract()))
	o := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`))
	require.False(t, o.OK)
	assert.Equal(t, "extrinsic", o.Err.Class)
	assert.Contains(t, o.Err.Message, "FORGE_PROVIDER")
}

func TestGateFeedbackThenSuccess(t *testing.T) {
	p := cassette(t,
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: "package artifact\nfunc Upper(s string) string { return undefinedThing(s) }"},
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 2, Code: upperWrong}, // fails the acceptance example
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 3, Code: upperOK},
	)
	f := openForge(t, t.TempDir(), p)
	require.NoError(t, f.AddRole(textContract()))
	o := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"x"}`))
	require.True(t, o.OK, "%+v", o.Err)
	assert.Equal(t, 3, o.Meta.ProviderCalls)
	art, err := f.Store().Load("text", "upper")
	require.NoError(t, err)
	assert.Equal(t, 1, art.Generation, "failing fresh code is never persisted")
	assert.Equal(t, upperOK, art.Code)
}

func TestGateExhaustedPersistsNothing(t *testing.T) {
	p := cassette(t,
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperWrong},
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 2, Code: upperWrong},
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 3, Code: upperWrong},
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 4, Code: upperOK},
	)
	f := openForge(t, t.TempDir(), p)
	require.NoError(t, f.AddRole(textContract()))
	o := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"x"}`))
	require.False(t, o.OK)
	assert.Equal(t, "gate", o.Err.Type)
	assert.Equal(t, "intrinsic", o.Err.Class)
	assert.Equal(t, "acceptance", o.Err.Rule)
	assert.Equal(t, DefaultMaxProviderCalls, o.Meta.ProviderCalls)
	_, err := f.Store().Load("text", "upper")
	assert.ErrorIs(t, err, registry.ErrNotFound)
}

func TestRepairWithoutRegeneration(t *testing.T) {
	p := cassette(t,
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperPanics},
		line{Role: "text", Method: "upper", Kind: "repair", Attempt: 1, Code: upperOK},
	)
	f := openForge(t, t.TempDir(), p)
	require.NoError(t, f.AddRole(textContract()))
	require.True(t, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"ok"}`)).OK)

	o := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":""}`))
	require.True(t, o.OK, "%+v", o.Err)
	assert.JSONEq(t, `""`, string(o.Value))
	assert.Equal(t, SourceRepaired, o.Meta.ProgramSource)
	assert.True(t, o.Meta.RepairAttempted)
	assert.True(t, o.Meta.RepairSucceeded)
	assert.Equal(t, 1, o.Meta.ProviderCalls)
	art, _ := f.Store().Load("text", "upper")
	assert.Equal(t, 2, art.Generation)
	assert.Equal(t, "repair:intrinsic", art.History[0].Trigger)
	assert.Equal(t, 1, art.RepairCountSinceRegen)
}

// upperPanicsOn panics (nil map write) on strings of length n: each repair below fixes the input
// that failed and breaks another, so the repairs pass the gate and still fail later calls.
func upperPanicsOn(n int) string {
	return fmt.Sprintf("package artifact\n\nimport \"strings\"\n\nfunc Upper(s string) string {\n\tif len(s) == %d {\n\t\tvar m map[string]int\n\t\tm[s] = 1\n\t}\n\treturn strings.ToUpper(s)\n}\n", n)
}

func TestBudgetExhaustionForcesRegeneration(t *testing.T) {
	p := cassette(t,
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperPanicsOn(0)},
		line{Role: "text", Method: "upper", Kind: "repair", Attempt: 1, Code: upperPanicsOn(1)},
		line{Role: "text", Method: "upper", Kind: "repair", Attempt: 2, Code: upperPanicsOn(3)},
		line{Role: "text", Method: "upper", Kind: "repair", Attempt: 3, Code: upperPanicsOn(4)},
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 2, Code: upperOK},
	)
	f := openForge(t, t.TempDir(), p)
	require.NoError(t, f.AddRole(textContract()))
	require.True(t, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"ok"}`)).OK)

	for i, s := range []string{"", "a", "abc"} {
		o := f.Call(context.Background(), "text", "upper", json.RawMessage(fmt.Sprintf(`{"s":%q}`, s)))
		require.True(t, o.OK, "round %d: %+v", i+1, o.Err)
		assert.Equal(t, SourceRepaired, o.Meta.ProgramSource)
		art, _ := f.Store().Load("text", "upper")
		assert.Equal(t, i+1, art.RepairCountSinceRegen, "round %d", i+1)
	}
	o := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"abcd"}`))
	require.True(t, o.OK, "%+v", o.Err)
	assert.Equal(t, SourceRegenerated, o.Meta.ProgramSource)
	art, _ := f.Store().Load("text", "upper")
	assert.Equal(t, "regenerate:budget_exhausted", art.History[0].Trigger)
	assert.Zero(t, art.RepairCountSinceRegen, "regeneration resets the budget")
	assert.Equal(t, 5, art.Generation)
}

func TestStaleContractIsRepaired(t *testing.T) {
	p := cassette(t,
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK},
		line{Role: "text", Method: "upper", Kind: "repair", Attempt: 1, Code: upperOK + "\n// fits the new contract\n"},
	)
	f := openForge(t, t.TempDir(), p)
	require.NoError(t, f.AddRole(textContract()))
	require.True(t, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
	c := textContract()
	c.Purpose = "string utilities, now shouting"
	require.NoError(t, f.AddRole(c))
	o := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`))
	require.True(t, o.OK, "%+v", o.Err)
	assert.Equal(t, "repair:stale_contract", o.Meta.Decision)
	assert.Equal(t, SourceRepaired, o.Meta.ProgramSource)
	art, _ := f.Store().Load("text", "upper")
	assert.Equal(t, "repair:adaptive", art.History[0].Trigger)
	assert.Equal(t, c.Fingerprint(), art.ContractFingerprint)
}

func TestPromptVersionChangeKeepsProvenArtifact(t *testing.T) {
	store := t.TempDir()
	p := cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK})
	f := openForge(t, store, p)
	require.NoError(t, f.AddRole(textContract()))
	require.True(t, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
	_, err := f.Store().Update("text", "upper", func(a *registry.Artifact, _ bool) error {
		a.PromptVersion = "an-older-prompt"
		a.History[0].PromptVersion = "an-older-prompt"
		return nil
	})
	require.NoError(t, err)
	o := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`))
	require.True(t, o.OK)
	assert.Equal(t, SourcePersisted, o.Meta.ProgramSource)
	assert.Equal(t, int64(1), p.n.Load())
}

func TestExtrinsicFailureLeavesHealthUntouched(t *testing.T) {
	code := "package artifact\n\nimport \"forge/host\"\n\nfunc Fetch(url string) (string, error) {\n\treturn host.Get(url)\n}\n"
	p := cassette(t, line{Role: "web", Method: "fetch", Kind: "generate", Attempt: 1, Code: code})
	f := openForge(t, t.TempDir(), p)
	require.NoError(t, f.AddRole(registry.Contract{Role: "web", Purpose: "fetch pages",
		Capabilities: &registry.Capabilities{HTTP: &registry.HTTPCapability{Allow: []string{"127.0.0.1:1"}, Timeout: "500ms"}}}))
	o := f.Call(context.Background(), "web", "fetch", json.RawMessage(`{"url":"http://127.0.0.1:1/"}`))
	require.False(t, o.OK)
	assert.Equal(t, "extrinsic", o.Err.Class, "%+v", o.Err)
	assert.True(t, o.Err.Retriable)
	f.Flush()
	art, err := f.Store().Load("web", "fetch")
	require.NoError(t, err, "code that passed the gate is kept even when its first run met an outage")
	assert.Zero(t, art.IntrinsicFailureCount+art.AdaptiveFailureCount)
	assert.Equal(t, int64(1), art.ExtrinsicFailureCount)
	assert.Zero(t, art.RepairCountSinceRegen)
	o = f.Call(context.Background(), "web", "fetch", json.RawMessage(`{"url":"http://127.0.0.1:1/"}`))
	assert.Equal(t, "extrinsic", o.Err.Class)
	assert.Zero(t, o.Meta.ProviderCalls, "no repair for an outage")
}

func TestConcurrentColdCallsShareOneGeneration(t *testing.T) {
	p := cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK})
	f := openForge(t, t.TempDir(), p)
	require.NoError(t, f.AddRole(textContract()))
	var wg sync.WaitGroup
	outs := make([]Outcome, 64)
	for i := range outs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			outs[i] = f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"x`+strings.Repeat("y", i%3)+`"}`))
		}(i)
	}
	wg.Wait()
	for i, o := range outs {
		require.True(t, o.OK, "call %d: %+v", i, o.Err)
		assert.JSONEq(t, `"X`+strings.Repeat("Y", i%3)+`"`, string(o.Value))
	}
	assert.Equal(t, int64(1), p.n.Load(), "exactly one generation")
}

func TestOperatorVerbs(t *testing.T) {
	p := cassette(t,
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK},
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 2, Code: upperOK + "// v2\n"},
	)
	f := openForge(t, t.TempDir(), p)
	require.NoError(t, f.AddRole(textContract()))
	require.True(t, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)

	o := f.Regenerate(context.Background(), "text", "upper")
	require.True(t, o.OK, "%+v", o.Err)
	art, _ := f.Store().Load("text", "upper")
	assert.Equal(t, 2, art.Generation)
	assert.Equal(t, "operator:regen", art.History[0].Trigger)

	art, err := f.Rollback("text", "upper", 1)
	require.NoError(t, err)
	assert.Equal(t, upperOK, art.Code)
	assert.Equal(t, 3, art.Generation)

	require.NoError(t, f.Quarantine("text", "upper"))
	o = f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`))
	require.False(t, o.OK)
	assert.Equal(t, "refused", o.Err.Type)
	assert.Contains(t, o.Err.Message, "forge rollback text upper")

	_, err = f.Rollback("text", "upper", 2)
	require.NoError(t, err)
	require.NoError(t, f.Bless("text", "upper", true))
	o = f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`))
	require.True(t, o.OK)
	assert.Equal(t, "execute:blessed", o.Meta.Decision)

	require.NoError(t, f.MarkRegenerate("text", "upper"))
	art, _ = f.Store().Load("text", "upper")
	assert.True(t, art.ForceRegenerate)

	assert.ErrorIs(t, f.Bless("text", "nope", false), registry.ErrNotFound)
}

func TestReadPathOffGeneratesEveryTime(t *testing.T) {
	p := cassette(t,
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK},
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 2, Code: upperOK},
	)
	f := openForge(t, t.TempDir(), p, func(o *Options) { o.Switches = selector.Switches{ReadPathOff: true} })
	require.NoError(t, f.AddRole(textContract()))
	require.True(t, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
	o := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`))
	require.True(t, o.OK)
	assert.Equal(t, 1, o.Meta.ProviderCalls)
	assert.Equal(t, "generate:read_path_off", o.Meta.Decision)
}

func TestEventsAreWritten(t *testing.T) {
	store := t.TempDir()
	var mu sync.Mutex
	var got []Event
	p := cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK})
	f := openForge(t, store, p, func(o *Options) {
		o.EventSink = func(e Event) { mu.Lock(); got = append(got, e); mu.Unlock() }
	})
	require.NoError(t, f.AddRole(textContract()))
	f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`))
	f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`))
	f.Flush()
	require.Len(t, got, 2)
	assert.Equal(t, "generated", got[0].ProgramSource)
	assert.False(t, got[0].ArtifactHit)
	assert.Equal(t, "persisted", got[1].ProgramSource)
	assert.True(t, got[1].ArtifactHit)
	assert.NotZero(t, got[1].CallID)
	assert.Equal(t, got[1].CallID, got[1].TraceID)
	events, err := readEvents(store)
	require.NoError(t, err)
	require.Len(t, events, 2)
	assert.Equal(t, got[1].CallID, events[1].CallID)
	_ = time.Second
}

// countingSandbox counts compilations of the backend it wraps.
type countingSandbox struct {
	sandbox.Sandbox
	compiles atomic.Int64
}

func (s *countingSandbox) Compile(ctx context.Context, src sandbox.Source) (sandbox.Program, error) {
	s.compiles.Add(1)
	return s.Sandbox.Compile(ctx, src)
}

func TestFlushDoesNotRecompile(t *testing.T) {
	sb := &countingSandbox{Sandbox: yaegi.New(yaegi.Options{})}
	p := cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK})
	f := openForge(t, t.TempDir(), p, func(o *Options) {
		o.Sandboxes = func(string) (sandbox.Sandbox, error) { return sb, nil }
	})
	require.NoError(t, f.AddRole(textContract()))
	require.True(t, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
	compiled := sb.compiles.Load()
	for i := 0; i < 3; i++ {
		f.Flush() // rewrites the artifact file and the registry: new snapshots, same code
		require.True(t, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
	}
	assert.Equal(t, compiled, sb.compiles.Load(), "a metrics flush must not cost a recompilation")
}

func TestWasmRoleEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a wasm module with the Go toolchain")
	}
	fib := "package artifact\n\nfunc Fib(n int) int {\n\ta, b := 0, 1\n\tfor i := range n {\n\t\t_ = i\n\t\ta, b = b, a+b\n\t}\n\treturn a\n}\n"
	store := t.TempDir()
	f := openForge(t, store, cassette(t, line{Role: "wmath", Method: "fib", Kind: "generate", Attempt: 1, Code: fib}))
	require.NoError(t, f.AddRole(registry.Contract{Role: "wmath", Purpose: "integer math in hard isolation",
		Methods: map[string]string{"fib": "func Fib(n int) int"}, Sandbox: "wasm", Limits: &registry.Limits{Timeout: "30s", Memory: "64MB"},
		Acceptance: &registry.Acceptance{Examples: []registry.Example{{Method: "fib", Args: json.RawMessage(`{"n":10}`), Expect: json.RawMessage(`55`)}}}}))
	o := f.Call(context.Background(), "wmath", "fib", json.RawMessage(`{"n":30}`))
	require.True(t, o.OK, "%+v", o.Err)
	assert.JSONEq(t, `832040`, string(o.Value))
	assert.Equal(t, SourceGenerated, o.Meta.ProgramSource)
	o = f.Call(context.Background(), "wmath", "fib", json.RawMessage(`[40]`))
	require.True(t, o.OK, "%+v", o.Err)
	assert.JSONEq(t, `102334155`, string(o.Value))
	assert.Equal(t, SourcePersisted, o.Meta.ProgramSource)
	o = f.Call(context.Background(), "wmath", "fib", json.RawMessage(`{"n":"x"}`))
	require.False(t, o.OK)
	assert.Equal(t, "caller", o.Err.Class)
	assert.DirExists(t, filepath.Join(store, "cache", "wasm"), "modules are cached under the store")
}

func TestOperatorVerbFromAnotherProcessReachesARunningForge(t *testing.T) {
	store := t.TempDir()
	server := openForge(t, store, cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK}))
	server.Store().SetRevalidate(20 * time.Millisecond)
	require.NoError(t, server.AddRole(textContract()))
	require.True(t, server.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)

	operator := openForge(t, store, nil) // `forge quarantine text upper` in another process
	require.NoError(t, operator.Quarantine("text", "upper"))
	time.Sleep(30 * time.Millisecond)
	o := server.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`))
	require.False(t, o.OK, "the running forge must see the quarantine")
	assert.Equal(t, "refused", o.Err.Type)

	_, err := operator.Rollback("text", "upper", 0)
	assert.Error(t, err, "one generation only: nothing to roll back to")
	_, err = operator.Rollback("text", "upper", 1)
	require.NoError(t, err, "rolling back to the current generation lifts the quarantine")
	require.NoError(t, operator.Bless("text", "upper", false))
	time.Sleep(30 * time.Millisecond)
	o = server.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`))
	require.True(t, o.OK, "%+v", o.Err)
	assert.Equal(t, "execute:blessed", o.Meta.Decision)
}

// recordingProvider keeps the requests it was sent.
type recordingProvider struct {
	provider.Provider
	mu   sync.Mutex
	reqs []provider.Request
}

func (p *recordingProvider) Generate(ctx context.Context, r provider.Request) (provider.Answer, error) {
	p.mu.Lock()
	p.reqs = append(p.reqs, r)
	p.mu.Unlock()
	return p.Provider.Generate(ctx, r)
}

func TestSystemPromptFitsTheBackend(t *testing.T) {
	assert.Contains(t, systemPrompt("yaegi"), "yaegi) has gaps")
	assert.NotContains(t, systemPrompt("wasm"), "has gaps", "the wasm backend runs real Go")
	for _, b := range []string{"yaegi", "wasm"} {
		assert.True(t, strings.HasSuffix(systemPrompt(b), "nothing else.\n"), b)
		assert.Contains(t, systemPrompt(b), `"forge/host"`)
	}
	p := &recordingProvider{Provider: cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK})}
	f := openForge(t, t.TempDir(), p)
	require.NoError(t, f.AddRole(textContract()))
	require.True(t, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
	require.Len(t, p.reqs, 1)
	assert.Equal(t, systemPrompt("yaegi"), p.reqs[0].System)
}

// TestGateCatchesStateKeptBetweenCalls: code that answers the examples right once but differently
// when called again (a package-level counter) fails the gate with feedback that names the cause,
// and is never persisted; a role whose code may read the clock is not held to this.
func TestGateCatchesStateKeptBetweenCalls(t *testing.T) {
	const stateful = "package artifact\n\nimport \"strings\"\n\nvar calls int\n\n" +
		"func Upper(s string) string {\n\tcalls++\n\tif calls > 1 {\n\t\treturn s\n\t}\n\treturn strings.ToUpper(s)\n}\n"
	p := &recordingProvider{Provider: cassette(t,
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: stateful},
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 2, Code: upperOK},
	)}
	f := openForge(t, t.TempDir(), p)
	require.NoError(t, f.AddRole(textContract()))
	o := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"x"}`))
	require.True(t, o.OK, "%+v", o.Err)
	assert.Equal(t, 2, o.Meta.ProviderCalls)
	require.Len(t, p.reqs, 2)
	assert.Contains(t, p.reqs[1].Prompt, "keeps state between calls")
	art, err := f.Store().Load("text", "upper")
	require.NoError(t, err)
	assert.Equal(t, upperOK, art.Code)

	c := textContract()
	c.Capabilities = &registry.Capabilities{Now: true}
	f2 := openForge(t, t.TempDir(), cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: stateful}))
	require.NoError(t, f2.AddRole(c))
	o = f2.Call(context.Background(), "text", "upper", nil)
	require.True(t, o.OK, "a role that may read the clock runs its examples once: %+v", o.Err)
}

// TestSystemPromptListsTheWholeHostAPI: every name forge/host exports is in the system prompt, so
// the model knows all of it (the wasm shim is held to the same list in its own package).
func TestSystemPromptListsTheWholeHostAPI(t *testing.T) {
	for _, b := range []string{"yaegi", "wasm"} {
		for _, name := range gate.HostAPI() {
			assert.Contains(t, systemPrompt(b), "host."+name, "%s prompt", b)
		}
	}
}

// Counters the last flush cannot write (here: metrics/ replaced by a file, as a store this user
// cannot write would refuse them) make Close fail with the store and the first artifact named,
// instead of being lost without a word.
func TestCloseSaysWhichCountersWereLost(t *testing.T) {
	store := t.TempDir()
	p := cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK})
	f, err := Open(Options{Store: store, Provider: p, DefaultSandbox: "yaegi", FlushInterval: time.Hour})
	require.NoError(t, err)
	require.NoError(t, f.AddRole(textContract()))
	o := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"hello"}`))
	require.True(t, o.OK, "%+v", o.Err)
	o = f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"again"}`))
	require.True(t, o.OK, "%+v", o.Err)

	// No flush has run (FlushInterval is an hour): the recorder has no journal open yet.
	metrics := filepath.Join(store, "metrics")
	require.NoError(t, os.RemoveAll(metrics))
	require.NoError(t, os.WriteFile(metrics, []byte("not a directory"), 0o644))
	err = f.Close()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "text.upper")
	assert.Contains(t, err.Error(), "could not be written to the store "+store)
}

// A quarantined artifact marked for regeneration on its next call, whose regeneration writes the
// same code again, is not answered by that code: the quarantine stands and the call says how out.
func TestQuarantinedRegenWritingTheSameCodeStillRefuses(t *testing.T) {
	store := t.TempDir()
	p := cassette(t,
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK},
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 2, Code: upperOK}) // the second generate request
	f := openForge(t, store, p)
	require.NoError(t, f.AddRole(textContract()))
	o := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"hello"}`))
	require.True(t, o.OK, "%+v", o.Err)
	require.NoError(t, f.Quarantine("text", "upper"))
	require.NoError(t, f.MarkRegenerate("text", "upper"))

	o = f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"again"}`))
	require.False(t, o.OK, "the quarantined code answered: %s", o.Value)
	assert.Equal(t, "refused", o.Err.Type)
	assert.Contains(t, o.Err.Message, "quarantine stands")
	assert.Contains(t, o.Err.Message, "forge edit text upper")
	art, err := f.Store().Load("text", "upper")
	require.NoError(t, err)
	assert.Equal(t, registry.Quarantined, art.Lifecycle)
	assert.Equal(t, 1, art.Generation)

	o = f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"third"}`))
	require.False(t, o.OK, "still refused: %s", o.Value)
}

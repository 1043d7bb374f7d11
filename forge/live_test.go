package forge

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/provider"
	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/wasm"
	"github.com/artifactforge/forge/sandbox/yaegi"
)

// lifeSandbox wraps a backend and counts its programs: compiled, closed, and runs of a closed
// program (which must never happen). hold, when set, makes runs of that function wait for
// release (a call in flight).
type lifeSandbox struct {
	sandbox.Sandbox
	compiles atomic.Int64
	closes   atomic.Int64
	badRuns  atomic.Int64
	delay    time.Duration // added to every Compile

	mu      sync.Mutex
	hold    string
	held    chan struct{} // closed when a held run has started
	release chan struct{}
}

type lifeProgram struct {
	sandbox.Program
	sb     *lifeSandbox
	closed atomic.Bool
}

func (p *lifeProgram) Close() error {
	if !p.closed.Swap(true) {
		p.sb.closes.Add(1)
	}
	return p.Program.Close()
}

func (s *lifeSandbox) Compile(ctx context.Context, src sandbox.Source) (sandbox.Program, error) {
	if s.delay > 0 {
		time.Sleep(s.delay)
	}
	p, err := s.Sandbox.Compile(ctx, src)
	if err != nil {
		return nil, err
	}
	s.compiles.Add(1)
	return &lifeProgram{Program: p, sb: s}, nil
}

func (s *lifeSandbox) Run(ctx context.Context, prog sandbox.Program, in sandbox.Input) (sandbox.Output, error) {
	p := prog.(*lifeProgram)
	if p.closed.Load() {
		s.badRuns.Add(1)
		return sandbox.Output{}, sandbox.Errorf(sandbox.KindInternal, "test: run of a closed program")
	}
	s.mu.Lock()
	hold, held, release := s.hold, s.held, s.release
	s.mu.Unlock()
	if hold != "" && p.Signature().Func == hold {
		close(held)
		<-release
	}
	out, err := s.Sandbox.Run(ctx, p.Program, in)
	if p.closed.Load() {
		s.badRuns.Add(1) // closed while it ran
	}
	return out, err
}

// open is how many compiled programs are not closed.
func (s *lifeSandbox) open() int64 { return s.compiles.Load() - s.closes.Load() }

// methodsProvider writes method mN of any role as func MN(x int) int { return x + N }; version,
// when set, makes every answer new code (a package variable the function reads).
type methodsProvider struct {
	n       atomic.Int64
	version atomic.Bool
}

func (p *methodsProvider) Name() string { return "methods" }

func (p *methodsProvider) Generate(_ context.Context, r provider.Request) (provider.Answer, error) {
	n := p.n.Add(1)
	name := sandbox.ExportedName(r.Method)
	code := fmt.Sprintf("package artifact\n\nfunc %s(x int) int { return x + %s }\n", name, strings.TrimPrefix(r.Method, "m"))
	if r.Method == "upper" {
		code = upperOK
	}
	if p.version.Load() {
		// A package variable the function reads: every answer builds to a different module.
		code += fmt.Sprintf("\nvar answer = %d\n", n)
		code = strings.Replace(code, "{ return ", "{\n\tif answer < 0 {\n\t\tpanic(answer)\n\t}\n\treturn ", 1)
	}
	return provider.Answer{Code: code, Model: "methods"}, nil
}

func methodsContract(role string, n int) registry.Contract {
	m := map[string]string{}
	for i := range n {
		m[fmt.Sprintf("m%d", i)] = fmt.Sprintf("func M%d(x int) int", i)
	}
	return registry.Contract{Role: role, Purpose: "live set test", Methods: m}
}

func liveForge(t testing.TB, store string, p provider.Provider, sb *lifeSandbox, maxLive int) *Forge {
	t.Helper()
	return openForge(t, store, p, func(o *Options) {
		o.MaxLivePrograms = maxLive
		o.Sandboxes = func(string) (sandbox.Sandbox, error) { return sb, nil }
	})
}

func TestLiveSetEvictionKeepsAnswers(t *testing.T) {
	sb := &lifeSandbox{Sandbox: yaegi.New(yaegi.Options{})}
	f := liveForge(t, t.TempDir(), &methodsProvider{}, sb, 2)
	require.NoError(t, f.AddRole(methodsContract("calc", 5)))
	ctx := context.Background()
	for round := range 3 {
		for i := range 5 {
			o := f.Call(ctx, "calc", fmt.Sprintf("m%d", i), json.RawMessage(fmt.Sprintf(`{"x":%d}`, 10*round)))
			require.True(t, o.OK, "round %d m%d: %+v", round, i, o.Err)
			assert.JSONEq(t, fmt.Sprint(10*round+i), string(o.Value), "round %d m%d", round, i)
			st := f.Live()
			assert.LessOrEqual(t, st.Programs, 2)
			assert.LessOrEqual(t, sb.open(), int64(2), "programs evicted with no run in flight are closed")
		}
	}
	st := f.Live()
	assert.Equal(t, 2, st.Programs)
	assert.Positive(t, st.Evictions)
	assert.Equal(t, st.Closed, sb.closes.Load())
	assert.Greater(t, sb.compiles.Load(), int64(5), "evicted methods compile again")
	assert.Zero(t, sb.badRuns.Load())
	require.NoError(t, f.Close())
	assert.Zero(t, sb.open(), "Close closes every live program")
}

func TestLiveSetCallInFlightSurvivesEviction(t *testing.T) {
	sb := &lifeSandbox{Sandbox: yaegi.New(yaegi.Options{})}
	f := liveForge(t, t.TempDir(), &methodsProvider{}, sb, 1)
	require.NoError(t, f.AddRole(methodsContract("calc", 3)))
	ctx := context.Background()
	for i := range 3 { // persist all three
		require.True(t, f.Call(ctx, "calc", fmt.Sprintf("m%d", i), json.RawMessage(`{"x":1}`)).OK)
	}
	sb.mu.Lock()
	sb.hold, sb.held, sb.release = "M0", make(chan struct{}), make(chan struct{})
	held, release := sb.held, sb.release
	sb.mu.Unlock()
	done := make(chan Outcome, 1)
	go func() { done <- f.Call(ctx, "calc", "m0", json.RawMessage(`{"x":100}`)) }()
	select {
	case <-held:
	case <-time.After(30 * time.Second):
		t.Fatal("the held call never started running")
	}
	sb.mu.Lock()
	sb.hold = ""
	sb.mu.Unlock()
	before := f.Live().Evictions
	for i := 1; i < 3; i++ { // each evicts the program m0's call is running
		o := f.Call(ctx, "calc", fmt.Sprintf("m%d", i), json.RawMessage(`{"x":1}`))
		require.True(t, o.OK, "%+v", o.Err)
	}
	assert.Greater(t, f.Live().Evictions, before)
	assert.Equal(t, int64(2), sb.open(), "the evicted program of the call in flight stays open, beside the live one")
	close(release)
	select {
	case o := <-done:
		require.True(t, o.OK, "%+v", o.Err)
		assert.JSONEq(t, `100`, string(o.Value))
	case <-time.After(30 * time.Second):
		t.Fatal("the call in flight never ended")
	}
	assert.Equal(t, int64(1), sb.open(), "the evicted program closed when its run ended")
	assert.Zero(t, sb.badRuns.Load())
}

func TestLiveSetDelegationChainTinyBudget(t *testing.T) {
	sb := &lifeSandbox{Sandbox: yaegi.New(yaegi.Options{})}
	p := &ringProvider{ring: []string{"a", "b"}}
	f := liveForge(t, t.TempDir(), p, sb, 1)
	for _, r := range p.ring {
		require.NoError(t, f.AddRole(registry.Contract{Role: r, Purpose: "delegation test", Methods: map[string]string{"p": "func P(n int) (string, error)"},
			Capabilities: &registry.Capabilities{Call: true}, Limits: &registry.Limits{Timeout: "20s"}}))
	}
	ctx := context.Background()
	o := f.Call(ctx, "a", "p", pArgs(5)) // generates a and b on the way
	require.True(t, o.OK, "%+v", o.Err)
	assert.JSONEq(t, `"done"`, string(o.Value))
	for range 3 { // persisted: a -> b -> a -> ..., each level evicting its caller's program
		o := f.Call(ctx, "a", "p", pArgs(6))
		require.True(t, o.OK, "%+v", o.Err)
		assert.JSONEq(t, `"done"`, string(o.Value))
	}
	assert.Positive(t, f.Live().Evictions)
	assert.LessOrEqual(t, f.Live().Programs, 1)
	assert.Equal(t, int64(1), sb.open(), "every program of the chain but the live one closed when its run ended")
	assert.Zero(t, sb.badRuns.Load())
}

func TestRegenerateClosesOldProgram(t *testing.T) {
	sb := &lifeSandbox{Sandbox: yaegi.New(yaegi.Options{})}
	p := &methodsProvider{}
	p.version.Store(true)
	f := liveForge(t, t.TempDir(), p, sb, 0)
	require.NoError(t, f.AddRole(textContract()))
	ctx := context.Background()
	require.True(t, f.Call(ctx, "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
	require.Equal(t, int64(1), sb.open())
	for i := range 10 {
		o := f.Regenerate(ctx, "text", "upper")
		require.True(t, o.OK, "%+v", o.Err)
		assert.Equal(t, i+2, o.Meta.ArtifactGen)
		o = f.Call(ctx, "text", "upper", json.RawMessage(`{"s":"b"}`))
		require.True(t, o.OK, "%+v", o.Err)
		assert.JSONEq(t, `"B"`, string(o.Value))
		assert.Equal(t, int64(1), sb.open(), "regeneration %d: the old program is closed", i+1)
	}
	assert.Equal(t, int64(10), f.Live().Replaced)

	// A rollback makes other code current: its program replaces the current one, which closes.
	_, err := f.Rollback("text", "upper", 0)
	require.NoError(t, err)
	assert.Zero(t, sb.open(), "the rolled-back program is dropped at once")
	require.True(t, f.Call(ctx, "text", "upper", json.RawMessage(`{"s":"c"}`)).OK)
	assert.Equal(t, int64(1), sb.open())
	assert.Zero(t, sb.badRuns.Load())
}

func TestGateClosesCodeThatFails(t *testing.T) {
	sb := &lifeSandbox{Sandbox: yaegi.New(yaegi.Options{})}
	p := cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperWrong},
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 2, Code: upperOK})
	f := liveForge(t, t.TempDir(), p, sb, 0)
	require.NoError(t, f.AddRole(textContract()))
	o := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`))
	require.True(t, o.OK, "%+v", o.Err)
	assert.Equal(t, int64(2), sb.compiles.Load())
	assert.Equal(t, int64(1), sb.open(), "the answer that failed its acceptance example is closed")
}

func TestConcurrentMissesCompileOnce(t *testing.T) {
	store := t.TempDir()
	f1 := openForge(t, store, &methodsProvider{})
	require.NoError(t, f1.AddRole(methodsContract("calc", 1)))
	require.True(t, f1.Call(context.Background(), "calc", "m0", json.RawMessage(`{"x":1}`)).OK)
	require.NoError(t, f1.Close())

	sb := &lifeSandbox{Sandbox: yaegi.New(yaegi.Options{}), delay: 100 * time.Millisecond}
	f := liveForge(t, store, nil, sb, 0)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Go(func() {
			o := f.Call(context.Background(), "calc", "m0", json.RawMessage(fmt.Sprintf(`{"x":%d}`, i)))
			if !o.OK {
				errs <- o.Err
				return
			}
			if string(o.Value) != fmt.Sprint(i) {
				errs <- fmt.Errorf("call %d answered %s", i, o.Value)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assert.Equal(t, int64(1), sb.compiles.Load(), "16 concurrent misses of one method compile it once")
}

func TestLiveBudgetOptions(t *testing.T) {
	o, err := OptionsFromEnv(func(k string) string {
		return map[string]string{"FORGE_MAX_LIVE_PROGRAMS": "50", "FORGE_MAX_LIVE_BYTES": "256MiB"}[k]
	})
	require.NoError(t, err)
	assert.Equal(t, 50, o.MaxLivePrograms)
	assert.Equal(t, int64(256<<20), o.MaxLiveBytes)
	o, err = OptionsFromEnv(func(k string) string {
		return map[string]string{"FORGE_MAX_LIVE_PROGRAMS": "-1", "FORGE_MAX_LIVE_BYTES": "-1"}[k]
	})
	require.NoError(t, err)
	assert.Equal(t, 0, liveBudget(o.MaxLivePrograms, DefaultMaxLivePrograms))
	assert.Equal(t, int64(0), liveBudget(o.MaxLiveBytes, DefaultMaxLiveBytes))
	assert.Equal(t, DefaultMaxLivePrograms, liveBudget(0, DefaultMaxLivePrograms))
	for _, bad := range []map[string]string{{"FORGE_MAX_LIVE_PROGRAMS": "many"}, {"FORGE_MAX_LIVE_PROGRAMS": "0"}, {"FORGE_MAX_LIVE_BYTES": "lots"}, {"FORGE_MAX_LIVE_BYTES": "-2"}} {
		_, err := OptionsFromEnv(func(k string) string { return bad[k] })
		assert.Error(t, err, "%v", bad)
	}
}

// TestWasmRegenerationsCloseOldModules regenerates a wasm method ten times through the forge:
// each replaced program is closed, so the sandbox holds one program, one compiled module and
// its warm instance at the end, as after the first generation.
func TestWasmRegenerationsCloseOldModules(t *testing.T) {
	if testing.Short() {
		t.Skip("builds eleven wasm modules (cached across runs)")
	}
	sb, err := wasm.New(wasm.Options{CacheDir: wasmTestCache(t), IdleTimeout: -1})
	require.NoError(t, err)
	p := &methodsProvider{}
	p.version.Store(true)
	f := openForge(t, t.TempDir(), p, func(o *Options) {
		o.DefaultSandbox = "wasm"
		o.Sandboxes = func(string) (sandbox.Sandbox, error) { return sb, nil }
	})
	c := textContract()
	c.Sandbox = "wasm"
	require.NoError(t, f.AddRole(c))
	ctx := context.Background()
	o := f.Call(ctx, "text", "upper", json.RawMessage(`{"s":"a"}`))
	require.True(t, o.OK, "%+v", o.Err)
	start := sb.Live()
	require.Equal(t, wasm.LiveCounts{Programs: 1, Modules: 1, Instances: 1}, start)
	for i := range 10 {
		o := f.Regenerate(ctx, "text", "upper")
		require.True(t, o.OK, "%+v", o.Err)
		o = f.Call(ctx, "text", "upper", json.RawMessage(`{"s":"b"}`))
		require.True(t, o.OK, "%+v", o.Err)
		assert.Equal(t, start, sb.Live(), "after regeneration %d", i+1)
	}
	assert.Equal(t, int64(10), f.Live().Closed, "ten replaced programs closed")
	require.NoError(t, f.Close())
	assert.Equal(t, wasm.LiveCounts{}, sb.Live(), "Close gives everything back")
}

// sizedProgram is a program that reports a fixed size.
type sizedProgram struct {
	sandbox.Program
	bytes int64
}

func (p *sizedProgram) LiveBytes() int64 { return p.bytes }
func (p *sizedProgram) Close() error     { return nil }

// TestLiveBytesCountSharedProgramOnce: a program several methods share (wasm shares one per
// code) counts once against the memory budget, and leaves it with its last method.
func TestLiveBytesCountSharedProgramOnce(t *testing.T) {
	s := newLiveSet(0, 100)
	shared := &sizedProgram{bytes: 30}
	put := func(role string, prog sandbox.Program) {
		s.put(newCompiled(&registry.Artifact{Role: role, Method: "add", CodeChecksum: "c"}, prog, nil, s))
	}
	for i := range 50 {
		put(fmt.Sprintf("shared%d", i), shared)
	}
	st := s.stats()
	assert.Equal(t, 50, st.Programs, "fifty methods of one 30-byte program fit a 100-byte budget")
	assert.Equal(t, int64(30), st.Bytes)
	assert.Zero(t, st.Evictions)

	// Three programs of their own: 30 (shared) + 3×30 > 100, so entries go until it fits again.
	for i := range 3 {
		put(fmt.Sprintf("own%d", i), &sizedProgram{bytes: 30})
	}
	st = s.stats()
	assert.LessOrEqual(t, st.Bytes, int64(100), "the set fits its budget: %+v", st)
	assert.Positive(t, st.Evictions)
	seen := map[sandbox.Sizer]bool{}
	var want int64
	for _, p := range s.all {
		if sz := p.prog.(sandbox.Sizer); !seen[sz] {
			seen[sz] = true
			want += sz.LiveBytes()
		}
	}
	assert.Equal(t, want, st.Bytes, "Bytes counts each live program once")
	s.close()
	assert.Zero(t, s.stats().Bytes)
}

// TestWasmIdenticalMethodsStayLiveUnderDefaultBudget touches 60 methods of identical code on
// wasm under the default live-set budgets: they share one module, which counts once, so all stay
// live (when each counted its module, about 40 did).
func TestWasmIdenticalMethodsStayLiveUnderDefaultBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a wasm module (cached across runs)")
	}
	sb, err := wasm.New(wasm.Options{CacheDir: wasmTestCache(t), IdleTimeout: -1})
	require.NoError(t, err)
	const n = 60
	store, roles, want := workingSetStore(t, n, false)
	f := openForge(t, store, nil, func(o *Options) {
		o.DefaultSandbox = "wasm"
		o.Sandboxes = func(string) (sandbox.Sandbox, error) { return sb, nil }
	})
	ctx := context.Background()
	for i, r := range roles {
		o := f.Call(ctx, r, "add", json.RawMessage(`{"x":1}`))
		require.True(t, o.OK, "%+v", o.Err)
		require.Equal(t, want[i], string(o.Value))
	}
	st := f.Live()
	require.Equal(t, DefaultLiveBytes(), st.MaxBytes, "the default budget")
	assert.Equal(t, n, st.Programs, "every method stays live: %+v", st)
	assert.Zero(t, st.Evictions)
	assert.Equal(t, wasm.LiveCounts{Programs: 1, Modules: 1, Instances: 1}, sb.Live(), "one module serves them all")
}

// TestDefaultLiveBytes: a quarter of the usable memory, within [DefaultMaxLiveBytes,
// MaxDefaultLiveBytes]; 512 MiB when unknown.
func TestDefaultLiveBytes(t *testing.T) {
	for _, c := range []struct{ mem, want int64 }{
		{0, 512 << 20}, {1 << 30, 512 << 20}, {2 << 30, 512 << 20}, {4 << 30, 1 << 30},
		{12 << 30, 3 << 30}, {16 << 30, 4 << 30}, {256 << 30, 4 << 30},
	} {
		assert.Equal(t, c.want, liveBytesFor(c.mem), "%d bytes of memory", c.mem)
	}
	d := DefaultLiveBytes()
	assert.GreaterOrEqual(t, d, int64(DefaultMaxLiveBytes))
	assert.LessOrEqual(t, d, int64(MaxDefaultLiveBytes))
}

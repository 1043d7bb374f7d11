package forge

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
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
	"github.com/artifactforge/forge/selector"
)

// delegCode is role's method p: p(0) answers "done", p(n) delegates n-1 to next.p. A ring of one
// role is self-delegation; of two or three roles, a cycle.
func delegCode(next string) string {
	return `package artifact

import "forge/host"

func P(n int) (string, error) {
	if n <= 0 {
		return "done", nil
	}
	var s string
	if err := host.CallInto("` + next + `", "p", map[string]int{"n": n - 1}, &s); err != nil {
		return "", err
	}
	return s, nil
}
`
}

// runawayCode delegates to itself with a growing argument: it never ends.
const runawayCode = `package artifact

import "forge/host"

func P(n int) (string, error) {
	var s string
	err := host.CallInto("a", "p", map[string]int{"n": n + 1}, &s)
	return s, err
}
`

// ringProvider writes role r's p as delegCode(next role in the ring), or code[r] when set.
type ringProvider struct {
	ring []string
	code map[string]string
	n    atomic.Int64
	mu   sync.Mutex
	reqs []string // kind role.method attempt, for failure messages
}

func (p *ringProvider) Generate(_ context.Context, r provider.Request) (provider.Answer, error) {
	p.n.Add(1)
	p.mu.Lock()
	p.reqs = append(p.reqs, fmt.Sprintf("%s %s.%s #%d", r.Kind, r.Role, r.Method, r.Attempt))
	p.mu.Unlock()
	if c, ok := p.code[r.Role]; ok {
		return provider.Answer{Code: c, Model: "ring"}, nil
	}
	for i, role := range p.ring {
		if role == r.Role {
			return provider.Answer{Code: delegCode(p.ring[(i+1)%len(p.ring)]), Model: "ring"}, nil
		}
	}
	return provider.Answer{}, &provider.Error{Kind: provider.Misconfigured, Provider: "ring", Message: "no code for role " + r.Role}
}

func (p *ringProvider) Name() string { return "ring" }

func (p *ringProvider) requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.reqs...)
}

// wasmTestCache is shared with sandbox/wasm's tests, so modules are built once per machine.
func wasmTestCache(t testing.TB) string {
	if d := os.Getenv("FORGE_WASM_TEST_CACHE"); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	return filepath.Join(d, "forge-test")
}

// delegForge opens a forge whose roles form ring on backend, with the hang-detecting timeout
// (a deadlock shows as a deadline, never as a pass). GOMAXPROCS must be set before: it sizes
// the pools.
func delegForge(t testing.TB, backend string, p *ringProvider, timeout string, mod ...func(*registry.Contract)) (*Forge, *eventRecorder) {
	t.Helper()
	ev := &eventRecorder{}
	f := openForge(t, t.TempDir(), p, func(o *Options) {
		o.EventSink = ev.add
		o.Maxima.Timeout = 3 * time.Minute // TestDelegationNeverDeadlocks' bound
		o.Sandboxes = func(name string) (sandbox.Sandbox, error) {
			if name == "wasm" {
				return wasm.New(wasm.Options{CacheDir: wasmTestCache(t)})
			}
			return yaegi.New(yaegi.Options{}), nil
		}
	})
	isolation := ""
	if backend == "yaegi-process" {
		backend, isolation = "yaegi", sandbox.IsolationProcess
	}
	for _, r := range p.ring {
		c := registry.Contract{Role: r, Purpose: "delegation test", Methods: map[string]string{"p": "func P(n int) (string, error)"},
			Capabilities: &registry.Capabilities{Call: true}, Sandbox: backend, Limits: &registry.Limits{Timeout: timeout, Isolation: isolation}}
		for _, m := range mod {
			m(&c)
		}
		require.NoError(t, f.AddRole(c))
	}
	return f, ev
}

type eventRecorder struct {
	mu  sync.Mutex
	evs []Event
}

func (r *eventRecorder) add(e Event) {
	r.mu.Lock()
	r.evs = append(r.evs, e)
	r.mu.Unlock()
}

func (r *eventRecorder) all() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.evs...)
}

// failuresOf lists the failed calls among evs, for a test's failure message.
func failuresOf(evs []Event) []string {
	var out []string
	for _, e := range evs {
		if !e.OK && e.Kind == "" {
			out = append(out, fmt.Sprintf("%s.%s depth %d: %s/%s/%s", e.Role, e.Method, e.Depth, e.FailureType, e.FailureClass, e.FailureRule))
		}
	}
	return out
}

func pArgs(n int) json.RawMessage { return json.RawMessage(fmt.Sprintf(`{"n":%d}`, n)) }

// TestDelegationNeverDeadlocks is issue 15's matrix: self-delegation and cycles of 2 and 3 roles,
// 1, 4 and 32 concurrent callers, GOMAXPROCS 1 and 8 (the pools hold 2 per GOMAXPROCS), each
// caller at the depth cap (every depth up to it is a level of its chain). Before the fix, any
// depth at or past the pool size waited for its caller's deadline.
func TestDelegationNeverDeadlocks(t *testing.T) {
	backends := []string{"yaegi"}
	if !testing.Short() {
		backends = append(backends, "wasm", "yaegi-process")
	}
	for _, backend := range backends {
		for _, procs := range []int{1, 8} {
			for _, ringLen := range []int{1, 2, 3} {
				for _, callers := range []int{1, 4, 32} {
					if backend == "yaegi-process" && (callers == 32 || ringLen == 3) {
						continue // each level past the pool starts a worker process: keep this part small
					}
					name := fmt.Sprintf("%s/procs=%d/ring=%d/callers=%d", backend, procs, ringLen, callers)
					t.Run(name, func(t *testing.T) {
						defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
						ring := []string{"a", "b", "c"}[:ringLen]
						p := &ringProvider{ring: ring}
						// 180s, not 60s: at load 16-18 on 2 cores, wasm's 32 chains 17 deep (every level
						// past the pool instantiates a module) took 62 s and failed on the deadline,
						// no deadlock; a deadlock still ends on the deadline, later.
						f, ev := delegForge(t, backend, p, "180s")
						for _, r := range ring { // generate and persist every role (no delegation at n=0)
							o := f.Call(context.Background(), r, "p", pArgs(0))
							require.True(t, o.OK, "%+v", o.Err)
						}
						start := time.Now()
						var wg sync.WaitGroup
						outs := make([]Outcome, callers)
						for i := range outs {
							wg.Add(1)
							go func(i int) {
								defer wg.Done()
								outs[i] = f.Call(context.Background(), "a", "p", pArgs(sandbox.DefaultMaxCallDepth))
							}(i)
						}
						wg.Wait()
						t.Logf("%s: %d callers at depth %d in %v", name, callers, sandbox.DefaultMaxCallDepth, time.Since(start).Round(time.Millisecond))
						for i, o := range outs {
							require.True(t, o.OK, "caller %d: %+v", i, o.Err)
							assert.JSONEq(t, `"done"`, string(o.Value))
							assert.Zero(t, o.Meta.ProviderCalls, "caller %d: %+v; provider asked %v; failures: %v", i, o.Meta, p.requests(), failuresOf(ev.all()))
						}
						checkDelegationTree(t, ev.all())
					})
				}
			}
		}
	}
}

// TestDelegationEveryDepth: one caller, every depth from 1 to the cap, self-delegation on yaegi.
func TestDelegationEveryDepth(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	p := &ringProvider{ring: []string{"a"}}
	f, _ := delegForge(t, "yaegi", p, "60s")
	for n := 0; n <= sandbox.DefaultMaxCallDepth; n++ {
		o := f.Call(context.Background(), "a", "p", pArgs(n))
		require.True(t, o.OK, "depth %d: %+v", n, o.Err)
	}
}

// checkDelegationTree rebuilds the delegation trees from events: every delegated call names a
// parent of the same trace one level up, and every trace has one root.
func checkDelegationTree(t *testing.T, evs []Event) {
	t.Helper()
	byID := map[ID]Event{}
	for _, e := range evs {
		byID[e.CallID] = e
	}
	roots := map[ID]int{}
	for _, e := range evs {
		if e.ParentCallID == 0 {
			assert.Zero(t, e.Depth)
			assert.Equal(t, e.CallID, e.TraceID)
			roots[e.TraceID]++
			continue
		}
		parent, ok := byID[e.ParentCallID]
		require.True(t, ok, "event %s.%s names a parent that has no event", e.Role, e.Method)
		assert.Equal(t, parent.TraceID, e.TraceID)
		assert.Equal(t, parent.Depth+1, e.Depth)
	}
	for _, e := range evs {
		assert.Equal(t, 1, roots[e.TraceID], "trace %v has one root", e.TraceID)
	}
}

// TestDelegationCapFailsFastIntrinsic: past the cap the call fails at once, intrinsic, naming
// the chain; the runaway artifact is blamed, never an outage.
func TestDelegationCapFailsFastIntrinsic(t *testing.T) {
	for _, backend := range []string{"yaegi", "wasm", "yaegi-process"} {
		if backend != "yaegi" && testing.Short() {
			continue
		}
		t.Run(backend, func(t *testing.T) {
			p := &ringProvider{ring: []string{"a"}}
			f, ev := delegForge(t, backend, p, "60s")
			require.True(t, f.Call(context.Background(), "a", "p", pArgs(0)).OK)
			require.True(t, f.Call(context.Background(), "a", "p", pArgs(sandbox.DefaultMaxCallDepth)).OK)
			o := f.Call(context.Background(), "a", "p", pArgs(sandbox.DefaultMaxCallDepth+1))
			require.False(t, o.OK)
			// The top-level event's sandbox time is one whole chain: at the cap it answers, one
			// level more it fails (the last run is the repair's verification of the same code).
			var atCap, overCap time.Duration
			for _, e := range ev.all() {
				if e.Depth == 0 && e.OK && e.Action == "execute" {
					atCap = time.Duration(e.SandboxNS)
				}
				if e.Depth == 0 && !e.OK {
					overCap = time.Duration(e.SandboxNS)
				}
			}
			t.Logf("%s: chain of %d answers in %v; %d fails in %v", backend, sandbox.DefaultMaxCallDepth+1, atCap, sandbox.DefaultMaxCallDepth+2, overCap)
			assert.Equal(t, "intrinsic", o.Err.Class, "%+v", o.Err)
			assert.Equal(t, "call_depth_cap", o.Err.Rule)
			if backend == "yaegi-process" {
				// The worker refuses without the chain; the forge adds it.
				assert.Contains(t, o.Err.Message, "a.p would be call 17 deep, the cap is 16")
				assert.Contains(t, o.Err.Message, "(chain: "+strings.Repeat("a.p → ", sandbox.DefaultMaxCallDepth)+"a.p)")
			} else {
				assert.Contains(t, o.Err.Message, strings.Repeat("a.p → ", sandbox.DefaultMaxCallDepth+1)+"a.p would be call 17 deep, the cap is 16")
			}
			checkDelegationTree(t, ev.all())
		})
	}
}

// TestRunawayDelegationIsIntrinsic is P(n) calling P(n+1): it ends at the cap, quickly, intrinsic,
// and the top-level call asks for a repair with the chain in the feedback.
func TestRunawayDelegationIsIntrinsic(t *testing.T) {
	p := &ringProvider{ring: []string{"a"}, code: map[string]string{"a": runawayCode}}
	f, _ := delegForge(t, "yaegi", p, "60s")
	f.opts.Switches = selector.Switches{RepairOff: true}
	// Persist the runaway code as if it had been verified earlier (its gate would refuse it).
	_, err := f.store.Update("a", "p", func(a *registry.Artifact, _ bool) error {
		a.Promote(runawayCode, "test", "test", PromptVersion, time.Now())
		a.Lifecycle = registry.Candidate
		rec, err := f.store.Role("a")
		if err != nil {
			return err
		}
		a.ContractFingerprint = rec.Fingerprint
		return nil
	})
	require.NoError(t, err)
	start := time.Now()
	o := f.Call(context.Background(), "a", "p", pArgs(0))
	took := time.Since(start)
	require.False(t, o.OK)
	assert.Equal(t, "intrinsic", o.Err.Class, "%+v", o.Err)
	assert.Equal(t, "call_depth_cap", o.Err.Rule)
	assert.Contains(t, o.Err.Message, "a.p → a.p")
	assert.Less(t, took, 20*time.Second, "ends at the cap, not at the 60s deadline")
	t.Logf("runaway delegation stopped after %v", took)
}

// TestDelegationBlamesOnlyTheRunaway: a → b where b delegates to itself without end: b is
// blamed (intrinsic), a only delegated to it (its call failed for a reason outside its code).
func TestDelegationBlamesOnlyTheRunaway(t *testing.T) {
	runawayB := strings.ReplaceAll(runawayCode, `"a", "p"`, `"b", "p"`)
	p := &ringProvider{ring: []string{"a", "b"}, code: map[string]string{"b": runawayB}}
	f, ev := delegForge(t, "yaegi", p, "60s")
	f.opts.Switches = selector.Switches{RepairOff: true}
	o := f.Call(context.Background(), "a", "p", pArgs(1))
	require.False(t, o.OK)
	assert.Equal(t, "extrinsic", o.Err.Class, "a's code only delegated: %+v", o.Err)
	assert.Contains(t, o.Err.Message, "a.p → b.p → b.p")
	var bBlamed int
	for _, e := range ev.all() {
		if e.Role == "b" && e.FailureRule == "call_depth_cap" {
			bBlamed++
		}
		if e.Role == "a" {
			assert.NotEqual(t, "intrinsic", e.FailureClass)
		}
	}
	assert.Positive(t, bBlamed)
}

// spinCode computes forever unless n is 0.
const spinCode = `package artifact

func P(n int) (string, error) {
	if n == 0 {
		return "ok", nil
	}
	s := 0
	for i := 0; ; i++ {
		s += i
	}
}
`

// fetchCode fetches the URL in n's place (see TestDeadlineDuringDelegation) unless n is 0.
func fetchCode(url string) string {
	return `package artifact

import "forge/host"

func P(n int) (string, error) {
	if n == 0 {
		return "ok", nil
	}
	return host.Get("` + url + `")
}
`
}

// TestDeadlineDuringDelegation: a's 300ms deadline hits while its delegated call of b runs. When
// b computes, the time is code's time: a's failure is intrinsic (deadline_compute), and b, cut
// short by its caller's deadline well before its own limit, is not blamed (deadline_caller).
// When b waits on a slow upstream, a's deadline is host_in_flight (extrinsic), as for its own HTTP.
func TestDeadlineDuringDelegation(t *testing.T) {
	if raceEnabled {
		t.Skip("deadlines stop yaegi interpreters (see raceEnabled)")
	}
	slow := make(chan struct{})
	srv := httptestServer(t, slow)
	for _, tc := range []struct {
		name, bCode, wantRule string
	}{
		{"compute", spinCode, "deadline_compute"},
		{"upstream", fetchCode(srv), "deadline_host_in_flight"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &ringProvider{ring: []string{"a", "b"}, code: map[string]string{"b": tc.bCode}}
			f, ev := delegForge(t, "yaegi", p, "10s", func(c *registry.Contract) {
				if c.Role == "a" {
					c.Limits.Timeout = "300ms"
				}
				if c.Role == "b" {
					c.Capabilities.HTTP = &registry.HTTPCapability{Allow: []string{strings.TrimPrefix(srv, "http://")}, Timeout: "10s"}
				}
			})
			f.opts.Switches = selector.Switches{RepairOff: true}
			require.True(t, f.Call(context.Background(), "b", "p", pArgs(0)).OK)
			require.True(t, f.Call(context.Background(), "a", "p", pArgs(0)).OK)
			start := time.Now()
			o := f.Call(context.Background(), "a", "p", pArgs(2)) // b gets n=1
			t.Logf("a's 300ms call ended after %v", time.Since(start).Round(time.Millisecond))
			require.False(t, o.OK)
			assert.Equal(t, tc.wantRule, o.Err.Rule, "%+v", o.Err)
			f.Flush()
			var bRule string
			for _, e := range ev.all() {
				if e.Role == "b" && e.Depth == 1 {
					bRule = e.FailureRule
				}
			}
			if tc.name == "compute" {
				assert.Equal(t, "deadline_caller", bRule, "b ran 300ms of its 10s: the deadline was its caller's")
			} else {
				assert.Equal(t, "deadline_host_in_flight", bRule)
			}
		})
	}
	close(slow)
}

// TestColdSelfDelegation: the first call of code that delegates to itself generates it, and the
// gate's run of the call's own args (and of an acceptance example) reaches the code under
// verification instead of waiting for the generation it is part of.
func TestColdSelfDelegation(t *testing.T) {
	for _, backend := range []string{"yaegi", "wasm"} {
		if backend == "wasm" && testing.Short() {
			continue
		}
		t.Run(backend, func(t *testing.T) {
			p := &ringProvider{ring: []string{"a"}}
			f, ev := delegForge(t, backend, p, "60s", func(c *registry.Contract) {
				c.Acceptance = &registry.Acceptance{Examples: []registry.Example{{Method: "p", Args: pArgs(3), Expect: json.RawMessage(`"done"`)}}}
			})
			start := time.Now()
			o := f.Call(context.Background(), "a", "p", pArgs(5))
			require.True(t, o.OK, "%+v", o.Err)
			t.Logf("%s: cold call of a self-delegating method in %v", backend, time.Since(start).Round(time.Millisecond))
			assert.Equal(t, 1, o.Meta.ProviderCalls)
			candidates := 0
			for _, e := range ev.all() {
				if e.Reason == "candidate" {
					candidates++
				}
			}
			assert.Equal(t, 3+5, candidates, "the example's 3 levels and the call's 5 ran the candidate")
			checkDelegationTree(t, ev.all())
		})
	}
}

package wasm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

// peekCode reads past the end of its first argument (what a reused input buffer would expose)
// and echoes its second: each caller must see only its own token, and nothing past its args.
const peekCode = `package artifact

type Peek struct{ Past string }

func (p *Peek) UnmarshalJSON(b []byte) error {
	p.Past = string(b[len(b):cap(b)])
	return nil
}

type Seen struct {
	Token string ` + "`json:\"token\"`" + `
	Past  string ` + "`json:\"past\"`" + `
}

func Leak(p Peek, token string) Seen { return Seen{Token: token, Past: p.Past} }
`

// TestInputIsolatedBetweenCallers replays the report: a long call, a call with a token, then a
// short call on the same instance; no call sees bytes past its own args.
func TestInputIsolatedBetweenCallers(t *testing.T) {
	p := compile(t, peekCode)
	ctx := context.Background()
	for i, token := range []string{strings.Repeat("L", 4000), "second-caller-token", "c"} {
		args, _ := json.Marshal([]any{map[string]int{"n": i}, token})
		out, err := shared.Run(ctx, p, sandbox.Input{Args: args})
		require.NoError(t, err)
		var s struct{ Token, Past string }
		require.NoError(t, json.Unmarshal(out.Value, &s))
		assert.Equal(t, token, s.Token)
		assert.Empty(t, s.Past, "call %d read past its argument", i)
	}
}

// TestBulkCopyStopsAtDeadline: a loop of 64 MiB copies is one bulk instruction per copy, and
// ran 14.8 s past a 1 s deadline before bulk operations were charged by size. The bound here
// only detects a hang; the corpus logs the real overrun (~20 ms).
func TestBulkCopyStopsAtDeadline(t *testing.T) {
	p := compile(t, `package artifact

func Churn() int {
	src := make([]byte, 64<<20)
	dst := make([]byte, 64<<20)
	n := 0
	for {
		n += copy(dst, src)
	}
}
`)
	start := time.Now()
	_, err := shared.Run(context.Background(), p, sandbox.Input{Limits: sandbox.Limits{Timeout: 500 * time.Millisecond}})
	elapsed := time.Since(start)
	require.Error(t, err)
	assert.Equal(t, sandbox.KindDeadline, sandbox.KindOf(err), err.Error())
	assert.Less(t, elapsed, 3*time.Second, "a deadline of 500ms")
	t.Logf("stopped after %v (deadline 500ms)", elapsed)
}

// TestHostOpsAreNotInFlight: a runaway loop that calls Log, Now or Rand hits its deadline as
// the code's own (not "host call in flight", which would make it extrinsic forever).
func TestHostOpsAreNotInFlight(t *testing.T) {
	p := compile(t, `package artifact

import "forge/host"

func Spin(op string) int {
	n := 0
	for {
		switch op {
		case "log":
			host.Log("tick")
		case "now":
			n += host.Now().Nanosecond()
		case "rand":
			n += host.RandIntn(10)
		}
	}
}
`)
	caps := sandbox.Capabilities{Log: true, Now: true, Rand: true}
	for _, op := range []string{"log", "now", "rand"} {
		out, err := shared.Run(context.Background(), p, sandbox.Input{Args: []byte(`["` + op + `"]`), Caps: caps,
			Limits: sandbox.Limits{Timeout: 200 * time.Millisecond}})
		require.Error(t, err, op)
		var se *sandbox.Error
		require.ErrorAs(t, err, &se)
		assert.Equal(t, sandbox.KindDeadline, se.Kind, op)
		assert.False(t, se.HostCallInFlight, "%s: %v", op, err)
		if op == "log" {
			assert.LessOrEqual(t, len(out.Logs), sandbox.MaxLogLines)
		}
	}
}

// TestGuestDataIsCapped: a 40 MiB error or panic text and oversized delegation args are bounded
// before the host parses or keeps them.
func TestGuestDataIsCapped(t *testing.T) {
	p := compile(t, `package artifact

import (
	"errors"
	"forge/host"
	"strings"
)

func Big(what string) (int, error) {
	switch what {
	case "error":
		return 0, errors.New(strings.Repeat("e", 40<<20))
	case "panic":
		panic(strings.Repeat("p", 40<<20))
	case "call":
		_, err := host.Call("other", "method", make([]int, 1<<20))
		return 0, err
	}
	return 0, nil
}
`)
	called := false
	call := func(context.Context, string, string, json.RawMessage) (json.RawMessage, error) {
		called = true
		return json.RawMessage(`1`), nil
	}
	for what, kind := range map[string]sandbox.Kind{"error": sandbox.KindReturned, "panic": sandbox.KindPanic, "call": sandbox.KindReturned} {
		_, err := shared.Run(context.Background(), p, sandbox.Input{Args: []byte(`["` + what + `"]`), Caps: sandbox.Capabilities{Call: true}, Call: call,
			Limits: sandbox.Limits{Timeout: 5 * time.Second}})
		require.Error(t, err, what)
		se := sandbox.AsError(err)
		assert.Equal(t, kind, se.Kind, what)
		assert.LessOrEqual(t, len(se.Message), sandbox.MaxErrorBytes+64, what)
		if what == "call" {
			assert.Contains(t, se.Message, "cap")
		} else {
			assert.Contains(t, se.Message, "more bytes cut]", what)
		}
	}
	assert.False(t, called, "oversized delegation args reached the call path")
}

// TestInvalidResultRefused: a result that is not JSON never leaves the bridge. The guest's own
// encoder cannot produce one, so this module's dispatcher is altered to return raw bytes.
func TestInvalidResultRefused(t *testing.T) {
	code := "package artifact\n\nfunc Seven() int { return 7 }\n"
	sig, err := sandbox.ParseSignature(sandbox.Source{Code: code, Func: "Seven"})
	require.NoError(t, err)
	for _, legacy := range []bool{false, true} {
		noLean = legacy
		g := callGuest(code, sig)
		noLean = false
		d := g.files["artifact/forge__call.go"]
		ret := `return forge__lean.Ok(r, forge__enc, "int")` // the lean dispatcher
		if legacy {
			ret = "return forge__ok(Seven())" // the encoding/json one
		}
		require.Contains(t, d, ret)
		g.files["artifact/forge__call.go"] = strings.Replace(d, ret, `return append([]byte{'v'}, "{not json"...)`, 1)
		if !legacy {
			g.files["artifact/forge__call.go"] = strings.Replace(g.files["artifact/forge__call.go"], "r := Seven()", "Seven()", 1)
		}
		bin, err := shared.builder.build(context.Background(), g, false)
		require.NoError(t, err)
		p := &Program{src: sandbox.Source{Code: code}, sig: sig, bin: bin, sb: shared, pools: map[uint32]*pool{}}
		_, err = shared.Run(context.Background(), p, sandbox.Input{})
		require.Error(t, err)
		assert.Equal(t, sandbox.KindResult, sandbox.KindOf(err), err.Error())
	}
}

// TestWaitingForInstanceIsCapacity: with every instance held by calls blocked on a slow
// upstream, a call that cannot get one fails as KindCapacity (never the code's fault), not as a
// deadline of the code.
func TestWaitingForInstanceIsCapacity(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-time.After(5 * time.Second):
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	defer close(release)
	u, _ := url.Parse(srv.URL)
	sb, err := New(Options{CacheDir: testCacheDir, PoolSize: 1})
	require.NoError(t, err)
	defer sb.Close()
	prog, err := sb.Compile(context.Background(), sandbox.Source{Code: `package artifact

import "forge/host"

func Fetch(url string) (string, error) { return host.Get(url) }
`})
	require.NoError(t, err)
	caps := sandbox.Capabilities{HTTP: &sandbox.HTTPCap{Allow: []string{u.Host}, Private: true}}
	args, _ := json.Marshal([]string{srv.URL})
	holding := make(chan error, 1)
	go func() {
		_, err := sb.Run(context.Background(), prog, sandbox.Input{Args: args, Caps: caps, Limits: sandbox.Limits{Timeout: 10 * time.Second}})
		holding <- err
	}()
	require.Eventually(t, func() bool { return len(prog.(*Program).pools[pagesFor(sandbox.DefaultMemoryBytes)].idle) == 0 }, 5*time.Second, time.Millisecond)
	time.Sleep(50 * time.Millisecond) // the first call is now inside its HTTP request
	_, err = sb.Run(context.Background(), prog, sandbox.Input{Args: args, Caps: caps, Limits: sandbox.Limits{Timeout: 300 * time.Millisecond}})
	require.Error(t, err)
	assert.Equal(t, sandbox.KindCapacity, sandbox.KindOf(err), err.Error())
	release <- struct{}{}
	require.NoError(t, <-holding)
}

func TestWaitedTooLong(t *testing.T) {
	dl := &sandbox.Error{Kind: sandbox.KindDeadline, Message: "deadline exceeded"}
	err := waitedTooLong(dl, 600*time.Millisecond, time.Second)
	assert.Equal(t, sandbox.KindCapacity, sandbox.KindOf(err))
	assert.Contains(t, err.Error(), "ran only 400ms")
	inFlight := &sandbox.Error{Kind: sandbox.KindDeadline, HostCallInFlight: true}
	assert.Same(t, error(inFlight), waitedTooLong(inFlight, time.Second, time.Second))
	panicked := &sandbox.Error{Kind: sandbox.KindPanic}
	assert.Same(t, error(panicked), waitedTooLong(panicked, time.Second, time.Second))
}

// TestCompileRefusesHugeFunction: thousands of call sites in one function would make wazero's
// compiler use hundreds of MiB of host memory; the module is refused before compiling.
func TestCompileRefusesHugeFunction(t *testing.T) {
	var b strings.Builder
	// f defers, so the inliner (-l=4 for the artifact, guestGcflags) leaves every call in place.
	b.WriteString("package artifact\n\nvar sink int\n\nfunc f(i int) {\n\tdefer func() { sink++ }()\n\tif i < 0 {\n\t\tf(i + 1)\n\t}\n\tsink += i\n}\n\nfunc Unrolled() int {\n")
	for i := range 4000 {
		fmt.Fprintf(&b, "\tf(%d)\n", i)
	}
	b.WriteString("\treturn sink\n}\n")
	_, err := shared.Compile(context.Background(), sandbox.Source{Code: b.String()})
	require.Error(t, err)
	se := sandbox.AsError(err)
	assert.Equal(t, sandbox.KindCompile, se.Kind, err.Error())
	assert.Contains(t, se.Message, "bytes of WebAssembly, over the")
}

func TestCheckModuleBounds(t *testing.T) {
	fn := func(size int) []byte { // one function body of size bytes (never decoded)
		code := appendU32(appendU32(nil, 1), uint32(size))
		return append(code, make([]byte, size)...)
	}
	require.NoError(t, checkModule(wasmModule(sec(10, fn(100)...))))
	err := checkModule(wasmModule(sec(10, fn(MaxFunctionBytes+1)...)))
	assert.Equal(t, sandbox.KindCompile, sandbox.KindOf(err))
	err = checkModule(append(wasmModule(), make([]byte, MaxModuleBytes)...))
	assert.Equal(t, sandbox.KindCompile, sandbox.KindOf(err))
	many := appendU32(nil, MaxFunctions+1)
	err = checkModule(wasmModule(sec(10, many...)))
	assert.Equal(t, sandbox.KindCompile, sandbox.KindOf(err))
}

// TestMultiCallerContainment runs hostile and innocent programs at once from several goroutines
// on one Sandbox: every innocent call succeeds with its own data, no caller sees bytes past its
// own args, and every hostile call ends with its own kind near its deadline.
func TestMultiCallerContainment(t *testing.T) {
	peek := compile(t, peekCode)
	add := compile(t, "package artifact\n\nfunc Add(a, b int) int { return a + b }\n")
	hostile := compile(t, `package artifact

import (
	"errors"
	"forge/host"
	"strings"
)

var sink []byte

func Attack(what string) (int, error) {
	switch what {
	case "spin":
		for n := 1; n > 0; n++ {
		}
	case "copy":
		src, dst := make([]byte, 32<<20), make([]byte, 32<<20)
		for {
			copy(dst, src)
		}
	case "log":
		for {
			host.Log("")
		}
	case "garbage":
		for i := 0; i < 500; i++ {
			sink = make([]byte, 1<<20)
		}
		return len(sink), nil
	case "error":
		return 0, errors.New(strings.Repeat("e", 8<<20))
	}
	return 0, nil
}
`)
	// Runaway attacks get 300ms; the two that must finish get 3s (they allocate hundreds of MiB
	// on two cores shared with the rest). The hostile calls outnumber the pool (PoolSize is 2 x
	// GOMAXPROCS), so a runaway may also end as KindCapacity: it waited for an instance held by
	// another runaway, which is not its code's fault.
	want := map[string]sandbox.Kind{"spin": sandbox.KindDeadline, "copy": sandbox.KindDeadline, "log": sandbox.KindDeadline, "garbage": "", "error": sandbox.KindReturned}
	timeout := map[string]time.Duration{"spin": 300 * time.Millisecond, "copy": 300 * time.Millisecond, "log": 300 * time.Millisecond, "garbage": 3 * time.Second, "error": 3 * time.Second}
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() { // innocent: each caller's token, of different lengths, comes back alone
			defer wg.Done()
			for i := range 30 {
				token := fmt.Sprintf("caller-%d-call-%d-%s", g, i, strings.Repeat("x", (g*37+i*11)%300))
				args, _ := json.Marshal([]any{map[string]int{"n": i}, token})
				out, err := shared.Run(ctx, peek, sandbox.Input{Args: args})
				if !assert.NoError(t, err) {
					return
				}
				var s struct{ Token, Past string }
				require.NoError(t, json.Unmarshal(out.Value, &s))
				assert.Equal(t, token, s.Token)
				assert.Empty(t, s.Past)
				out, err = shared.Run(ctx, add, sandbox.Input{Args: []byte(fmt.Sprintf("[%d, %d]", g, i))})
				if assert.NoError(t, err) {
					assert.Equal(t, fmt.Sprint(g+i), string(out.Value))
				}
			}
		}()
	}
	for what, kind := range want {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 2 {
				start := time.Now()
				_, err := shared.Run(ctx, hostile, sandbox.Input{Args: []byte(`["` + what + `"]`), Caps: sandbox.Capabilities{Log: true},
					Limits: sandbox.Limits{Timeout: timeout[what], MemoryBytes: 128 << 20}})
				elapsed := time.Since(start)
				got := sandbox.KindOf(err)
				if kind == sandbox.KindDeadline && got == sandbox.KindCapacity {
					got = kind
				}
				if kind == "" {
					assert.NoError(t, err, what)
				} else if assert.Error(t, err, what) {
					assert.Equal(t, kind, got, "%s: %v", what, err)
					assert.LessOrEqual(t, len(sandbox.AsError(err).Message), sandbox.MaxErrorBytes+64)
				}
				assert.Less(t, elapsed, timeout[what]+3*time.Second, "%s: hang (deadline %v)", what, timeout[what])
			}
		}()
	}
	wg.Wait()
}

// TestCompileSharedPerModule: concurrent compiles of one module share a single CompileModule
// (wazero's half-published-module race stays closed), while a different module compiles at the
// same time (the per-runtime lock that made one artifact wait for another is gone).
func TestCompileSharedPerModule(t *testing.T) {
	ctx := context.Background()
	var bins [][]byte
	for _, code := range []string{"package artifact\n\nfunc A(x int) int { return x + 1 }\n", "package artifact\n\nfunc B(x int) int { return x * 2 }\n"} {
		sig, err := sandbox.ParseSignature(sandbox.Source{Code: code})
		require.NoError(t, err)
		bin, err := shared.builder.build(ctx, callGuest(code, sig), true)
		require.NoError(t, err)
		bins = append(bins, bin)
	}
	eng, err := newEngine(ctx, nil, pagesFor(sandbox.DefaultMemoryBytes), false, false) // no disk cache: real compiles
	require.NoError(t, err)
	defer eng.rt.Close(ctx)
	slots := make(chan struct{}, 2)
	done := make(chan struct{})
	var both atomic.Bool
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(100 * time.Microsecond):
			}
			if len(slots) == 2 {
				both.Store(true)
			}
		}
	}()
	cms := make([]any, 6) // module A from 6 goroutines, module B from one, all at once
	var wg sync.WaitGroup
	for i := range len(cms) + 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == len(cms) {
				_, err := eng.compile(ctx, bins[1], "b", slots)
				assert.NoError(t, err)
				return
			}
			cm, err := eng.compile(ctx, bins[0], "a", slots)
			assert.NoError(t, err)
			cms[i] = cm
		}()
	}
	wg.Wait()
	close(done)
	for _, cm := range cms[1:] {
		assert.True(t, cm == cms[0], "concurrent compiles of one module were not shared")
	}
	assert.True(t, both.Load(), "the two modules never compiled at the same time")
}

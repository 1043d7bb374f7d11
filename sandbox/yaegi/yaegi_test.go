package yaegi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

func compile(t *testing.T, sb *Sandbox, code string) sandbox.Program {
	t.Helper()
	p, err := sb.Compile(context.Background(), sandbox.Source{Code: code})
	require.NoError(t, err)
	return p
}

func TestHostHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			_, _ = w.Write([]byte(`{"title": "hello"}`))
		case "/garbage":
			_, _ = w.Write([]byte(`<html>moved</html>`))
		case "/slow":
			time.Sleep(2 * time.Second)
		case "/big":
			_, _ = w.Write([]byte(strings.Repeat("x", 5000)))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	code := `package artifact

import (
	"encoding/json"
	"fmt"
	"forge/host"
)

func Title(path string) (string, error) {
	body, err := host.Get("` + srv.URL + `" + path)
	if err != nil {
		return "", fmt.Errorf("fetch: %w", err)
	}
	var doc struct {
		Title string ` + "`json:\"title\"`" + `
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		return "", fmt.Errorf("decode: %w", err)
	}
	return doc.Title, nil
}
`
	sb := New(Options{})
	defer sb.Close()
	p := compile(t, sb, code)
	caps := sandbox.Capabilities{HTTP: &sandbox.HTTPCap{Allow: []string{u.Host}, MaxBytes: 1000}}
	run := func(path string, caps sandbox.Capabilities, timeout time.Duration) (sandbox.Output, *sandbox.Error) {
		out, err := sb.Run(context.Background(), p, sandbox.Input{Args: json.RawMessage(`["` + path + `"]`), Caps: caps, Limits: sandbox.Limits{Timeout: timeout}})
		if err == nil {
			return out, nil
		}
		var se *sandbox.Error
		require.True(t, errors.As(err, &se), "%v", err)
		return out, se
	}

	out, se := run("/ok", caps, time.Second)
	require.Nil(t, se)
	assert.JSONEq(t, `"hello"`, string(out.Value))
	assert.Equal(t, 1, out.HostCalls)
	assert.True(t, out.UpstreamRead)

	_, se = run("/missing", caps, time.Second)
	require.NotNil(t, se)
	assert.Equal(t, sandbox.KindHost, se.Kind)
	assert.Equal(t, http.StatusNotFound, se.HTTPStatus)

	_, se = run("/garbage", caps, time.Second)
	require.NotNil(t, se)
	assert.Equal(t, sandbox.KindDecode, se.Kind)
	assert.True(t, se.UpstreamRead)

	_, se = run("/big", caps, time.Second)
	require.NotNil(t, se)
	assert.Equal(t, sandbox.KindHost, se.Kind)
	assert.Contains(t, se.Message, "larger than 1000 bytes")

	_, se = run("/ok", sandbox.Capabilities{HTTP: &sandbox.HTTPCap{Allow: []string{"api.example.com"}}}, time.Second)
	require.NotNil(t, se)
	assert.Equal(t, sandbox.KindPolicy, se.Kind)

	start := time.Now()
	_, se = run("/slow", caps, 200*time.Millisecond)
	require.NotNil(t, se)
	assert.Equal(t, sandbox.KindDeadline, se.Kind)
	assert.True(t, se.HostCallInFlight, "the deadline hit during host.Get")
	t.Logf("the deadline ended the call after %v (200ms deadline)", time.Since(start))
	assert.Less(t, time.Since(start), hangBound)
}

func TestHostCallDelegation(t *testing.T) {
	code := `package artifact

import "forge/host"

type answer struct{ Sum int }

func Twice(x int) (int, error) {
	var a answer
	if err := host.CallInto("math", "add", map[string]int{"a": x, "b": x}, &a); err != nil {
		return 0, err
	}
	return a.Sum, nil
}
`
	var mu sync.Mutex
	var depths []int
	call := func(ctx context.Context, role, method string, args json.RawMessage) (json.RawMessage, error) {
		mu.Lock()
		depths = append(depths, sandbox.CallDepth(ctx))
		mu.Unlock()
		var in struct{ A, B int }
		if err := json.Unmarshal(args, &in); err != nil {
			return nil, err
		}
		return json.Marshal(map[string]int{"Sum": in.A + in.B})
	}
	for _, iso := range []string{"", sandbox.IsolationProcess} {
		t.Run("isolation="+iso, func(t *testing.T) {
			sb := New(Options{})
			defer sb.Close()
			p := compile(t, sb, code)
			in := sandbox.Input{Args: json.RawMessage(`{"x": 21}`), Caps: sandbox.Capabilities{Call: true}, Call: call, Limits: sandbox.Limits{Isolation: iso}}
			out, err := sb.Run(context.Background(), p, in)
			require.NoError(t, err)
			assert.JSONEq(t, "42", string(out.Value))
			in.Caps.Call = false
			_, err = sb.Run(context.Background(), p, in)
			assert.Equal(t, sandbox.KindPolicy, sandbox.KindOf(err))
		})
	}
	assert.Equal(t, []int{1, 1}, depths)
}

func TestOrderArgs(t *testing.T) {
	sig := sandbox.Signature{Func: "F", Params: []sandbox.Param{{Name: "a", Type: "int"}, {Name: "b", Type: "string"}}}
	vsig := sandbox.Signature{Func: "V", Params: []sandbox.Param{{Name: "sep", Type: "string"}, {Name: "xs", Type: "[]int"}}, Variadic: true}
	one := sandbox.Signature{Func: "O", Params: []sandbox.Param{{Name: "xs", Type: "[]int"}}}
	tests := []struct {
		name  string
		sig   sandbox.Signature
		args  string
		want  []string
		param string
		bad   bool
	}{
		{"array", sig, `[1, "x"]`, []string{`1`, `"x"`}, "", false},
		{"object any order", sig, ` {"b": "y,}", "a": [1] } `, []string{`[1]`, `"y,}"`}, "", false},
		{"escaped key", sig, `{"\u0061": 1, "b": ""}`, []string{`1`, `""`}, "", false},
		{"missing", sig, `{"a": 1}`, nil, "b", true},
		{"unknown", sig, `{"a": 1, "b": "", "c": 2}`, nil, "c", true},
		{"too many", sig, `[1, "x", 3]`, nil, "", true},
		{"too few", sig, `[1]`, nil, "b", true},
		{"invalid json", sig, `[1,`, nil, "", true},
		{"empty means none", sandbox.Signature{Func: "N"}, ``, []string{}, "", false},
		{"variadic spread", vsig, `[",", 1, 2]`, []string{`","`, `[1,2]`}, "", false},
		{"variadic as list", vsig, `[",", [1, 2]]`, []string{`","`, `[1, 2]`}, "", false},
		{"variadic omitted", vsig, `[","]`, []string{`","`}, "", false},
		{"bare value", one, `[1, 2]`, []string{`1`, `2`}, "", true},
		{"bare scalar", sandbox.Signature{Func: "S", Params: []sandbox.Param{{Name: "n", Type: "int"}}}, `7`, []string{`7`}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sandbox.OrderArgs(tt.sig, json.RawMessage(tt.args))
			if tt.bad {
				require.Error(t, err)
				var se *sandbox.Error
				require.True(t, errors.As(err, &se))
				assert.Equal(t, sandbox.KindArgs, se.Kind)
				assert.Equal(t, tt.param, se.Param)
				return
			}
			require.NoError(t, err)
			strs := make([]string, len(got))
			for i, g := range got {
				strs[i] = string(g)
			}
			assert.Equal(t, tt.want, strs)
		})
	}
}

// TestConcurrentCalls checks that pooled interpreters never mix up calls.
func TestConcurrentCalls(t *testing.T) {
	sb := New(Options{PoolSize: 3})
	defer sb.Close()
	p := compile(t, sb, "package artifact\nimport \"strings\"\nfunc Echo(s string, n int) string { return strings.Repeat(s, n) }")
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				s := string(rune('a' + g))
				out, err := sb.Run(context.Background(), p, sandbox.Input{Args: json.RawMessage(`["` + s + `", ` + string(rune('0'+i%10)) + `]`)})
				if !assert.NoError(t, err) {
					return
				}
				assert.JSONEq(t, `"`+strings.Repeat(s, i%10)+`"`, string(out.Value))
			}
		}()
	}
	wg.Wait()
}

// TestStatePersistsOnlyWithinAnInterpreter documents that package-level state survives between
// calls served by the same pooled interpreter (like a warm process) and that a panic discards it.
func TestPanicDiscardsInterpreter(t *testing.T) {
	sb := New(Options{PoolSize: 1})
	defer sb.Close()
	p := compile(t, sb, "package artifact\nvar n int\nfunc Next(fail bool) int { n++; if fail { panic(\"x\") }; return n }")
	run := func(fail bool) (string, error) {
		b, _ := json.Marshal([]bool{fail})
		out, err := sb.Run(context.Background(), p, sandbox.Input{Args: b})
		return string(out.Value), err
	}
	v, err := run(false)
	require.NoError(t, err)
	assert.Equal(t, "1", v)
	v, _ = run(false)
	assert.Equal(t, "2", v)
	_, err = run(true)
	assert.Equal(t, sandbox.KindPanic, sandbox.KindOf(err))
	v, err = run(false)
	require.NoError(t, err)
	assert.Equal(t, "1", v, "a fresh interpreter after the panic")
}

func TestPolicyErrorsNameLineAndHint(t *testing.T) {
	sb := New(Options{})
	defer sb.Close()
	for code, want := range map[string]string{
		"package artifact\n\nimport \"os\"\n\nfunc F() {}":                    "line 3",
		"package artifact\n\nfunc F() {\n\tgo F()\n}":                         "line 4",
		"package artifact\n\nimport \"time\"\n\nfunc F() { time.Sleep(1) }":   "line 5",
		"package artifact\n\n//go:noinline\nfunc F() {}":                      "line 3",
		"package artifact\n\nimport \"github.com/x/y\"\n\nfunc F() { y.Z() }": "line 3",
	} {
		_, err := sb.Compile(context.Background(), sandbox.Source{Code: code})
		var se *sandbox.Error
		require.True(t, errors.As(err, &se), code)
		assert.Equal(t, sandbox.KindPolicy, se.Kind, code)
		assert.Contains(t, se.Error(), want, code)
		assert.NotEmpty(t, se.Hint, code)
	}
}

func TestCompileErrorKeepsLines(t *testing.T) {
	sb := New(Options{})
	defer sb.Close()
	// The rewrites (depth guard, range over int, min) must not move lines.
	code := "package artifact\n\nfunc F(n int) int {\n\ts := 0\n\tfor i := range n {\n\t\ts += min(i, 3)\n\t}\n\treturn F(s) + undefinedThing\n}\n"
	_, err := sb.Compile(context.Background(), sandbox.Source{Code: code})
	var se *sandbox.Error
	require.True(t, errors.As(err, &se))
	assert.Equal(t, sandbox.KindCompile, se.Kind)
	assert.Equal(t, 8, se.Line, se.Error())
}

func TestRunTestsReportsEachTest(t *testing.T) {
	art := "package artifact\nfunc Add(a, b int) int { return a + b }"
	tests := `package artifact

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPass(t *testing.T) {
	assert.Equal(t, 3, Add(1, 2))
	assert.ElementsMatch(t, []int{1, 2}, []int{2, 1})
	assert.InDelta(t, 1.0, 1.05, 0.1)
	require.NoError(t, nil)
	assert.Len(t, []int{1}, 1)
	assert.Contains(t, "forge", "org")
	assert.Empty(t, "")
	assert.NotEmpty(t, []int{1})
	assert.EqualValues(t, int64(3), Add(1, 2))
	assert.NotEqual(t, 4, Add(1, 2))
	assert.True(t, true)
	assert.False(t, false)
	assert.Nil(t, nil)
	assert.NotNil(t, t)
	assert.Error(t, errFor(true))
}

func errFor(b bool) error {
	if b {
		return assertErr{}
	}
	return nil
}

type assertErr struct{}

func (assertErr) Error() string { return "e" }

func TestFail(t *testing.T) {
	require.Equal(t, 4, Add(1, 2), "one plus two")
	t.Log("not reached")
}

func TestSubtests(t *testing.T) {
	t.Run("ok", func(t *testing.T) { t.Helper() })
	t.Run("bad", func(t *testing.T) { t.Fatalf("bad %d", 1) })
}

func TestSkipped(t *testing.T) { t.Skip("later") }
`
	res, err := RunTests(context.Background(), art, tests)
	require.NoError(t, err)
	require.Len(t, res, 4)
	byName := map[string]sandbox.TestResult{}
	for _, r := range res {
		byName[r.Name] = r
	}
	assert.True(t, byName["TestPass"].Passed, byName["TestPass"].Message)
	assert.False(t, byName["TestFail"].Passed)
	assert.Contains(t, byName["TestFail"].Message, "one plus two")
	assert.NotContains(t, byName["TestFail"].Message, "Error Trace")
	assert.False(t, byName["TestSubtests"].Passed)
	assert.Equal(t, "TestSubtests/bad: bad 1", byName["TestSubtests"].Message)
	assert.True(t, byName["TestSkipped"].Passed)
}

func TestTestsPolicy(t *testing.T) {
	_, err := RunTests(context.Background(), "func F() int { return 1 }", "package artifact\nimport (\"testing\"; \"time\"; \"github.com/stretchr/testify/assert\")\nfunc TestX(t *testing.T) { assert.Eventually(t, func() bool { return true }, time.Second, time.Millisecond) }")
	assert.Equal(t, sandbox.KindPolicy, sandbox.KindOf(err))
}

// TestHostZoneIsNotUTC proves the tests run in a host zone other than UTC (TestMain sets it):
// otherwise the time zone corpus cases could not tell the guest's zone from the host's.
func TestHostZoneIsNotUTC(t *testing.T) {
	if _, off := time.Unix(0, 0).Zone(); off == 0 {
		t.Fatalf("the test binary's local zone is UTC at the epoch (TZ=%q): want %s, whose zone data this machine must have", os.Getenv("TZ"), hostZone)
	}
	if time.Local.String() == "UTC" {
		t.Fatalf("time.Local is %q: want %s", time.Local, hostZone)
	}
}

// A program that needs the sort rewrite (slices.Sort) and an automatic import (strings, used
// without its import line) gets both: the sort import used to replace the automatic ones.
func TestSortRewriteKeepsAutoImports(t *testing.T) {
	sb := New(Options{})
	defer sb.Close()
	p := compile(t, sb, `package p

import "slices"

func Upper(xs []string) ([]string, error) {
	slices.Sort(xs)
	for i := range xs {
		xs[i] = strings.ToUpper(xs[i])
	}
	return xs, nil
}
`)
	defer p.Close()
	out, err := sb.Run(context.Background(), p, sandbox.Input{Args: json.RawMessage(`[["b","a"]]`)})
	require.NoError(t, err)
	assert.JSONEq(t, `["A","B"]`, string(out.Value))
}

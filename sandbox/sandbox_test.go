package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

func TestExportedName(t *testing.T) {
	for in, want := range map[string]string{
		"has_close_elements": "HasCloseElements",
		"HasCloseElements":   "HasCloseElements",
		"fetchTitle":         "FetchTitle",
		"get-user.name":      "GetUserName",
		"x":                  "X",
	} {
		assert.Equal(t, want, sandbox.ExportedName(in), in)
	}
}

func TestParseSignature(t *testing.T) {
	tests := []struct {
		name, code, fn string
		want           sandbox.Signature
		kind           sandbox.Kind
	}{
		{name: "value", code: "package artifact\nfunc Add(a, b int) int { return a + b }",
			want: sandbox.Signature{Func: "Add", Params: []sandbox.Param{{"a", "int"}, {"b", "int"}}, Result: "int", Shape: sandbox.ResultValue}},
		{name: "snake method and value+error", code: "func Other() {}\nfunc HasClose(xs []float64, t float64) (bool, error) { return false, nil }", fn: "has_close",
			want: sandbox.Signature{Func: "HasClose", Params: []sandbox.Param{{"xs", "[]float64"}, {"t", "float64"}}, Result: "bool", Shape: sandbox.ResultValueError}},
		{name: "error only, variadic", code: "package main\nfunc Check(xs ...string) error { return nil }",
			want: sandbox.Signature{Func: "Check", Params: []sandbox.Param{{"xs", "[]string"}}, Variadic: true, Shape: sandbox.ResultError}},
		{name: "no results, unnamed param", code: "func Do(int) {}",
			want: sandbox.Signature{Func: "Do", Params: []sandbox.Param{{"arg0", "int"}}, Shape: sandbox.ResultNone}},
		{name: "two exported", code: "func A() {}\nfunc B() {}", kind: sandbox.KindCompile},
		{name: "missing method", code: "func A() {}", fn: "b_c", kind: sandbox.KindCompile},
		{name: "three results", code: "func A() (int, int, error) { return 0, 0, nil }", kind: sandbox.KindCompile},
		{name: "generic", code: "func A[T any](x T) T { return x }", kind: sandbox.KindCompile},
		{name: "syntax", code: "package artifact\nfunc A( {", kind: sandbox.KindCompile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sig, err := sandbox.ParseSignature(sandbox.Source{Code: tt.code, Func: tt.fn})
			if tt.kind != "" {
				require.Error(t, err)
				assert.Equal(t, tt.kind, sandbox.KindOf(err))
				return
			}
			require.NoError(t, err)
			assert.NotEmpty(t, sig.ParamsSchema)
			// The exported fields (the args check that the schema makes is unexported).
			got := sandbox.Signature{Func: sig.Func, Params: sig.Params, Variadic: sig.Variadic, Result: sig.Result, Shape: sig.Shape}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParamsSchema(t *testing.T) {
	code := "package artifact\ntype P struct {\n\tName string `json:\"name\"`\n\tTags []string\n\tskip int\n\tNext *P `json:\"next,omitempty\"`\n}\nfunc F(p P, m map[string]float64, b []byte, when time.Time) bool { return true }"
	sig, err := sandbox.ParseSignature(sandbox.Source{Code: code})
	require.NoError(t, err)
	var schema map[string]any
	require.NoError(t, json.Unmarshal(sig.ParamsSchema, &schema))
	assert.Equal(t, []any{"p", "m", "b", "when"}, schema["required"])
	props := schema["properties"].(map[string]any)
	p := props["p"].(map[string]any)
	assert.Equal(t, "object", p["type"])
	pp := p["properties"].(map[string]any)
	assert.Contains(t, pp, "name")
	assert.Contains(t, pp, "Tags")
	assert.NotContains(t, pp, "skip")
	assert.Contains(t, pp, "next", "recursive types stop instead of looping")
	assert.Equal(t, map[string]any{"type": []any{"object", "null"}, "additionalProperties": map[string]any{"type": "number"}}, props["m"])
	assert.Equal(t, "base64", props["b"].(map[string]any)["contentEncoding"])
	assert.Equal(t, "date-time", props["when"].(map[string]any)["format"])
}

func TestErrorIsAndAs(t *testing.T) {
	base := &sandbox.Error{Kind: sandbox.KindDeadline, Message: "deadline exceeded", HostCallInFlight: true, Err: context.DeadlineExceeded}
	err := fmt.Errorf("forge: call x.y: %w", base)
	var se *sandbox.Error
	require.True(t, errors.As(err, &se))
	assert.True(t, se.HostCallInFlight)
	assert.True(t, errors.Is(err, &sandbox.Error{Kind: sandbox.KindDeadline}))
	assert.False(t, errors.Is(err, &sandbox.Error{Kind: sandbox.KindPanic}))
	assert.True(t, errors.Is(err, context.DeadlineExceeded))
	assert.Equal(t, sandbox.KindDeadline, sandbox.KindOf(err))
	assert.Equal(t, sandbox.KindInternal, sandbox.KindOf(errors.New("plain")))
	assert.Equal(t, "sandbox: args: param n: want int (hint: pass a number)",
		(&sandbox.Error{Kind: sandbox.KindArgs, Param: "n", Message: "want int", Hint: "pass a number"}).Error())
}

func TestLimitsWithDefaults(t *testing.T) {
	l := sandbox.Limits{Timeout: time.Second}.WithDefaults()
	assert.Equal(t, time.Second, l.Timeout)
	assert.Equal(t, int64(sandbox.DefaultMemoryBytes), l.MemoryBytes)
	assert.Equal(t, sandbox.DefaultOutputBytes, l.OutputBytes)
	assert.Equal(t, sandbox.DefaultMaxDepth, l.MaxDepth)
	assert.Equal(t, sandbox.DefaultMaxCallDepth, l.MaxCallDepth)
}

func TestCapabilitiesJSON(t *testing.T) {
	var c sandbox.Capabilities
	require.NoError(t, json.Unmarshal([]byte(`{"http":{"allow":["api.example.com"],"max_bytes":1024,"timeout":"1.5s"},"log":true,"call":true}`), &c))
	require.NotNil(t, c.HTTP)
	assert.Equal(t, 1500*time.Millisecond, c.HTTP.Timeout)
	assert.Equal(t, int64(1024), c.HTTP.MaxBytes)
	assert.True(t, c.Log && c.Call && !c.Now && !c.Rand)
	b, err := json.Marshal(c)
	require.NoError(t, err)
	assert.JSONEq(t, `{"http":{"allow":["api.example.com"],"max_bytes":1024,"timeout":"1.5s"},"log":true,"call":true}`, string(b))
	assert.Error(t, json.Unmarshal([]byte(`{"http":{"timeout":"soon"}}`), &c))
}

func TestHostAllowed(t *testing.T) {
	allow := []string{"api.example.com", "*.cdn.example.org", "localhost:8080"}
	for raw, want := range map[string]bool{
		"https://api.example.com/x":        true,
		"https://API.example.com:443/x":    true,
		"https://evil.com/api.example.com": false,
		"https://a.cdn.example.org/":       true,
		"https://cdn.example.org/":         false,
		"http://localhost:8080/":           true,
		"http://localhost:9090/":           false,
		"http://169.254.169.254/":          false,
	} {
		u, err := url.Parse(raw)
		require.NoError(t, err)
		assert.Equal(t, want, sandbox.HostAllowed(allow, u), raw)
	}
}

func TestHostDeniesWhatIsNotGranted(t *testing.T) {
	h := sandbox.NewHost(context.Background(), sandbox.Input{})
	_, err := h.Now()
	assert.Equal(t, sandbox.KindPolicy, sandbox.KindOf(err))
	_, err = h.Get("https://example.com")
	assert.Equal(t, sandbox.KindPolicy, sandbox.KindOf(err))
	_, err = h.Call("r", "m", nil)
	assert.Equal(t, sandbox.KindPolicy, sandbox.KindOf(err))
	// Even if the guest swallowed those errors and returned a value, the run fails on policy.
	var out sandbox.Output
	err = h.Finish(&out, nil)
	assert.Equal(t, sandbox.KindPolicy, sandbox.KindOf(err))
	assert.Contains(t, err.Error(), "host.Now")
}

func TestHostCallDepth(t *testing.T) {
	var seen []int
	call := func(ctx context.Context, role, method string, args json.RawMessage) (json.RawMessage, error) {
		seen = append(seen, sandbox.CallDepth(ctx))
		return json.RawMessage(`{"ok":true}`), nil
	}
	in := sandbox.Input{Caps: sandbox.Capabilities{Call: true}, Call: call, Limits: sandbox.Limits{MaxCallDepth: 2}}
	h := sandbox.NewHost(context.Background(), in)
	out, err := h.Call("r", "m", json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"ok":true}`, string(out))
	assert.True(t, h.UpstreamRead())

	deep := sandbox.NewHost(sandbox.WithCaller(sandbox.WithCallDepth(context.Background(), 2), chain{"a.p", "b.q", "a.p"}), in)
	_, err = deep.Call("b", "q", nil)
	assert.Equal(t, sandbox.KindCallDepth, sandbox.KindOf(err))
	assert.Contains(t, err.Error(), "a.p → b.q → a.p → b.q would be call 3 deep, the cap is 2")
	assert.Equal(t, []int{1}, seen)
	// The code that made the call that went over fails even if it recovers from the refusal.
	assert.Equal(t, sandbox.KindCallDepth, sandbox.KindOf(deep.Finish(nil, nil)))
}

type chain []string

func (c chain) CallChain() []string { return c }

func TestHostFinishClassifiesAfterHostFailure(t *testing.T) {
	call := func(ctx context.Context, role, method string, args json.RawMessage) (json.RawMessage, error) {
		return nil, errors.New("connection refused")
	}
	h := sandbox.NewHost(context.Background(), sandbox.Input{Caps: sandbox.Capabilities{Call: true}, Call: call})
	_, err := h.Call("r", "m", nil)
	require.Error(t, err)
	// The guest returned its own error after the failed host call: the failure is the host's.
	err = h.Finish(nil, &sandbox.Error{Kind: sandbox.KindReturned, Message: "could not fetch"})
	assert.Equal(t, sandbox.KindHost, sandbox.KindOf(err))

	ok := func(ctx context.Context, role, method string, args json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`"not an object"`), nil
	}
	h = sandbox.NewHost(context.Background(), sandbox.Input{Caps: sandbox.Capabilities{Call: true}, Call: ok})
	_, err = h.Call("r", "m", nil)
	require.NoError(t, err)
	var target struct{ X int }
	decodeErr := json.Unmarshal([]byte(`"not an object"`), &target)
	err = h.Finish(nil, &sandbox.Error{Kind: sandbox.KindReturned, Message: decodeErr.Error(), Err: decodeErr})
	var se *sandbox.Error
	require.True(t, errors.As(err, &se))
	assert.Equal(t, sandbox.KindDecode, se.Kind)
	assert.True(t, se.UpstreamRead)
}

// TestHostInFlightAtDeadline checks that a host call cut short by the call's context still counts
// as in flight after it has returned, while one that finished before does not.
func TestHostInFlightAtDeadline(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	h := sandbox.NewHost(ctx, sandbox.Input{Caps: sandbox.Capabilities{Call: true},
		Call: func(ctx context.Context, role, method string, args json.RawMessage) (json.RawMessage, error) {
			close(started)
			<-ctx.Done()
			return nil, ctx.Err()
		}})
	assert.False(t, h.InFlight())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = h.Call("r", "m", nil)
	}()
	<-started
	assert.True(t, h.InFlight())
	cancel()
	<-done
	assert.True(t, h.InFlight(), "the call was running when the context ended")

	ctx2, cancel2 := context.WithCancel(context.Background())
	h2 := sandbox.NewHost(ctx2, sandbox.Input{Caps: sandbox.Capabilities{Call: true},
		Call: func(context.Context, string, string, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage("1"), nil
		}})
	_, err := h2.Call("r", "m", nil)
	require.NoError(t, err)
	cancel2()
	assert.False(t, h2.InFlight(), "the call had finished before the context ended")
}

// loopbackName returns a host name other than localhost that resolves to a loopback address here
// (the machine's own name usually does, through /etc/hosts), or skips.
func loopbackName(t *testing.T) string {
	t.Helper()
	name, err := os.Hostname()
	if err != nil {
		t.Skipf("no host name: %v", err)
	}
	addrs, err := net.LookupHost(name)
	if err != nil || len(addrs) == 0 {
		t.Skipf("host name %q does not resolve: %v", name, err)
	}
	for _, a := range addrs {
		if ip := net.ParseIP(a); ip == nil || !ip.IsLoopback() {
			t.Skipf("host name %q resolves to %v, not only loopback", name, addrs)
		}
	}
	return strings.ToLower(name)
}

// TestHostHTTPRefusesNamesThatLeadToPrivateAddresses: an allowed name that resolves to a loopback
// address (what DNS rebinding does) is a policy error unless the role grants private; an IP literal
// or localhost on the list reaches the address, and a request to an address is not redirected to
// a name.
func TestHostHTTPRefusesNamesThatLeadToPrivateAddresses(t *testing.T) {
	name := loopbackName(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
			return
		}
		fmt.Fprint(w, "internal")
	}))
	defer srv.Close()
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	require.NoError(t, err)
	byName := "http://" + net.JoinHostPort(name, port) + "/"
	byIP := srv.URL + "/"
	byLocalhost := "http://" + net.JoinHostPort("localhost", port) + "/"
	get := func(cap sandbox.HTTPCap, u string) (string, error) {
		h := sandbox.NewHost(context.Background(), sandbox.Input{Caps: sandbox.Capabilities{HTTP: &cap}})
		return h.Get(u)
	}

	_, err = get(sandbox.HTTPCap{Allow: []string{name}}, byName)
	require.Error(t, err)
	assert.Equal(t, sandbox.KindPolicy, sandbox.KindOf(err))
	assert.Contains(t, err.Error(), "not a public address")
	assert.Contains(t, err.Error(), `"private": true`)

	body, err := get(sandbox.HTTPCap{Allow: []string{name}, Private: true}, byName)
	require.NoError(t, err)
	assert.Equal(t, "internal", body)

	body, err = get(sandbox.HTTPCap{Allow: []string{"127.0.0.1"}}, byIP)
	require.NoError(t, err)
	assert.Equal(t, "internal", body)
	body, err = get(sandbox.HTTPCap{Allow: []string{"localhost"}}, byLocalhost)
	require.NoError(t, err)
	assert.Equal(t, "internal", body)

	_, err = get(sandbox.HTTPCap{Allow: []string{"127.0.0.1", name}}, byIP+"redirect?to="+url.QueryEscape(byName))
	require.Error(t, err)
	assert.Equal(t, sandbox.KindPolicy, sandbox.KindOf(err))
	assert.Contains(t, err.Error(), "may not be redirected to a name")
}

// TestHostInFlightManagedCall: when the CallFunc runs the nested call in a sandbox (the forge),
// a deadline during the nested call is in flight only if the chain was blocked on external work.
func TestHostInFlightManagedCall(t *testing.T) {
	for _, external := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		started := make(chan struct{})
		h := sandbox.NewHost(ctx, sandbox.Input{Caps: sandbox.Capabilities{Call: true},
			Call: func(ctx context.Context, role, method string, args json.RawMessage) (json.RawMessage, error) {
				sandbox.ManagedCall(ctx)
				if external {
					defer sandbox.ExternalWork(ctx)()
				}
				close(started)
				<-ctx.Done()
				return nil, ctx.Err()
			}})
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = h.Call("r", "m", nil)
		}()
		<-started
		assert.Equal(t, external, h.InFlight(), "external=%v while running", external)
		cancel()
		<-done
		assert.Equal(t, external, h.InFlight(), "external=%v after the deadline", external)
	}
}

// TestResultSchema: the value result's JSON Schema (an MCP tool's outputSchema); none for a
// method that returns only an error or nothing.
func TestResultSchema(t *testing.T) {
	for code, want := range map[string]string{
		"package artifact\nfunc F(s string) (int8, error) { return 0, nil }":               `{"type":"integer","minimum":-128,"maximum":127}`,
		"package artifact\ntype R struct{ N int `json:\"n\"` }\nfunc F() R { return R{} }": `{"type":"object","properties":{"n":{"type":"integer","minimum":-9223372036854775808,"maximum":9223372036854775807}}}`,
		"package artifact\nfunc F(s string) []string { return nil }":                       `{"type":["array","null"],"items":{"type":"string"}}`,
		"package artifact\nfunc F(s string) error { return nil }":                          ``,
	} {
		sig, err := sandbox.ParseSignature(sandbox.Source{Code: code})
		require.NoError(t, err)
		if want == "" {
			assert.Empty(t, sig.ResultSchema, code)
			continue
		}
		assert.JSONEq(t, want, string(sig.ResultSchema), code)
	}
}

package forge

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/provider"
	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/wasm"
)

// stepSandbox is a fake backend that fails one gate step with a chosen error: "compile", "example"
// (an acceptance example run), "test" (the acceptance tests) or "own" (the call's own args).
type stepSandbox struct {
	step string
	err  error
}

type stepProgram struct {
	src sandbox.Source
	sig sandbox.Signature
}

func (p *stepProgram) Signature() sandbox.Signature { return p.sig }
func (p *stepProgram) Checksum() string             { return p.src.Checksum() }
func (p *stepProgram) Source() sandbox.Source       { return p.src }
func (p *stepProgram) Close() error                 { return nil }

func (s *stepSandbox) Compile(_ context.Context, src sandbox.Source) (sandbox.Program, error) {
	if s.step == "compile" {
		return nil, s.err
	}
	sig, err := sandbox.ParseSignature(src)
	if err != nil {
		return nil, err
	}
	return &stepProgram{src: src, sig: sig}, nil
}

func (s *stepSandbox) Run(_ context.Context, _ sandbox.Program, in sandbox.Input) (sandbox.Output, error) {
	own := string(in.Args) == `{"s":"own"}`
	if (own && s.step == "own") || (!own && s.step == "example") {
		return sandbox.Output{}, s.err
	}
	if own {
		return sandbox.Output{Value: json.RawMessage(`"OWN"`)}, nil
	}
	return sandbox.Output{Value: json.RawMessage(`"GO"`)}, nil
}

func (s *stepSandbox) Test(context.Context, sandbox.Source, string, sandbox.Input) ([]sandbox.TestResult, error) {
	if s.step == "test" {
		return nil, s.err
	}
	return []sandbox.TestResult{{Name: "TestUpper", Passed: true}}, nil
}

func (s *stepSandbox) Close() error { return nil }

// netErr is a host failure's network evidence, as the sandbox reports it.
type netErr struct{ kind string }

func (e netErr) Error() string       { return "dial tcp 127.0.0.1:1: connect: connection " + e.kind }
func (e netErr) NetworkKind() string { return e.kind }

// gateErrors is one error of every kind a sandbox can report to the gate, with the evidence that
// changes its class (host call in flight, network kind, HTTP status, upstream read), plus an error
// that is no *sandbox.Error at all.
func gateErrors() map[string]error {
	errs := map[string]error{}
	for _, k := range []sandbox.Kind{sandbox.KindCompile, sandbox.KindPolicy, sandbox.KindPanic, sandbox.KindDeadline,
		sandbox.KindDepth, sandbox.KindMemory, sandbox.KindOutput, sandbox.KindArgs, sandbox.KindHost, sandbox.KindDecode,
		sandbox.KindResult, sandbox.KindReturned, sandbox.KindInternal, sandbox.KindCapacity, sandbox.KindCallDepth} {
		errs[string(k)] = &sandbox.Error{Kind: k, Message: "injected " + string(k)}
	}
	errs["deadline_host_in_flight"] = &sandbox.Error{Kind: sandbox.KindDeadline, HostCallInFlight: true, Message: "deadline exceeded while a host call was in flight"}
	errs["host_refused"] = &sandbox.Error{Kind: sandbox.KindHost, Message: "http GET 127.0.0.1:1: connection refused", Err: netErr{"refused"}}
	errs["host_503"] = &sandbox.Error{Kind: sandbox.KindHost, HTTPStatus: 503, Message: "status 503"}
	errs["host_404"] = &sandbox.Error{Kind: sandbox.KindHost, HTTPStatus: 404, Message: "status 404"}
	errs["returned_after_upstream"] = &sandbox.Error{Kind: sandbox.KindReturned, UpstreamRead: true, Message: "bad upstream"}
	errs["foreign"] = errors.New("something that is no sandbox error")
	return errs
}

// TestGateNeverPersistsWhatItCouldNotVerify fails each gate step with each failure kind: the
// process survives, a failure the code is blamed for goes back to the provider as feedback, and a
// failure that is not the code's leaves the decision open (nothing persisted, one provider call).
// Only the call's own run, after every check with an expected value passed, may fail without
// the code's fault and still persist it (RATIONALE: the call's own args are the last step).
func TestGateNeverPersistsWhatItCouldNotVerify(t *testing.T) {
	for _, step := range []string{"compile", "example", "test", "own"} {
		for name, err := range gateErrors() {
			t.Run(step+"/"+name, func(t *testing.T) {
				p := &fixedProvider{code: upperOK}
				sb := &stepSandbox{step: step, err: err}
				f := openForge(t, t.TempDir(), p, func(o *Options) {
					o.Sandboxes = func(string) (sandbox.Sandbox, error) { return sb, nil }
				})
				c := textContract()
				c.Acceptance.Tests = "package artifact\n\nimport \"testing\"\n\nfunc TestUpper(t *testing.T) { _ = Upper(\"x\") }\n"
				require.NoError(t, f.AddRole(c))
				o := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"own"}`))
				require.False(t, o.OK)
				require.NotNil(t, o.Err)
				_, lerr := f.Store().Load("text", "upper")
				persisted := lerr == nil
				if !persisted {
					require.ErrorIs(t, lerr, registry.ErrNotFound)
				}
				blamed := o.Err.Class == "intrinsic" || o.Err.Class == "adaptive"
				switch {
				case blamed:
					assert.False(t, persisted, "code the gate failed must not be persisted: %+v", o.Err)
					assert.Equal(t, int64(DefaultMaxProviderCalls), p.n.Load(), "a failure of the code goes back as feedback")
				case step == "own":
					assert.True(t, persisted, "code that passed every check with an expected value is kept: %+v", o.Err)
				default:
					assert.False(t, persisted, "an undecided gate must not persist: %+v", o.Err)
					assert.Equal(t, int64(1), p.n.Load(), "no provider call is spent on a failure that is not the code's")
					assert.Contains(t, o.Err.Message, "nothing was persisted")
					assert.NotEqual(t, "caller", o.Err.Class)
				}
				if name == "host_refused" && step != "own" {
					assert.Equal(t, "extrinsic", o.Err.Class)
					assert.True(t, o.Err.Retriable, "an outage during the gate is retriable")
				}
			})
		}
	}
}

// TestGateProviderErrorsPersistNothing: every provider failure kind ends the call without a
// persisted artifact or a crash.
func TestGateProviderErrorsPersistNothing(t *testing.T) {
	for _, k := range []provider.ErrorKind{provider.Unavailable, provider.RateLimited, provider.BadAnswer, provider.Auth, provider.Misconfigured} {
		t.Run(string(k), func(t *testing.T) {
			p := &fixedProvider{err: &provider.Error{Kind: k, Provider: "fake", Message: "injected"}}
			f := openForge(t, t.TempDir(), p, func(o *Options) {
				o.Sandboxes = func(string) (sandbox.Sandbox, error) { return &stepSandbox{}, nil }
			})
			require.NoError(t, f.AddRole(textContract()))
			o := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"own"}`))
			require.False(t, o.OK)
			assert.Equal(t, "extrinsic", o.Err.Class)
			_, lerr := f.Store().Load("text", "upper")
			require.ErrorIs(t, lerr, registry.ErrNotFound)
		})
	}
}

// fixedProvider answers every request with the same code, or fails with err.
type fixedProvider struct {
	code string
	err  error
	n    atomic.Int64
}

func (p *fixedProvider) Generate(_ context.Context, r provider.Request) (provider.Answer, error) {
	p.n.Add(1)
	if p.err != nil {
		return provider.Answer{Raw: "prose"}, p.err
	}
	return provider.Answer{Code: p.code, Model: "fixed"}, nil
}

func (p *fixedProvider) Name() string { return "fixed" }

// TestGateOutageInExampleLeavesDecisionOpen is the real case on yaegi: innocent code whose
// acceptance example meets a refused connection is neither passed nor failed.
func TestGateOutageInExampleLeavesDecisionOpen(t *testing.T) {
	code := "package artifact\n\nimport \"forge/host\"\n\nfunc Fetch(url string) (string, error) {\n\treturn host.Get(url)\n}\n"
	p := &fixedProvider{code: code}
	f := openForge(t, t.TempDir(), p)
	require.NoError(t, f.AddRole(registry.Contract{Role: "web", Purpose: "fetch pages",
		Capabilities: &registry.Capabilities{HTTP: &registry.HTTPCapability{Allow: []string{"127.0.0.1:1"}, Timeout: "500ms"}},
		Acceptance: &registry.Acceptance{Examples: []registry.Example{{Method: "fetch",
			Args: json.RawMessage(`{"url":"http://127.0.0.1:1/"}`), Expect: json.RawMessage(`"hello"`)}}}}))
	o := f.Call(context.Background(), "web", "fetch", json.RawMessage(`{"url":"http://127.0.0.1:1/x"}`))
	require.False(t, o.OK)
	assert.Equal(t, "extrinsic", o.Err.Class, "%+v", o.Err)
	assert.Equal(t, "host_network_refused", o.Err.Rule)
	assert.True(t, o.Err.Retriable)
	assert.Contains(t, o.Err.Message, "nothing was persisted")
	assert.Equal(t, int64(1), p.n.Load())
	_, err := f.Store().Load("web", "fetch")
	require.ErrorIs(t, err, registry.ErrNotFound)
}

// httptestServer answers after slow is closed (a slow upstream); it returns its URL.
func httptestServer(t *testing.T, slow chan struct{}) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-slow:
		case <-r.Context().Done():
		}
		_, _ = w.Write([]byte("late"))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestGateWasmBuildFailuresAreTheCodes: code that breaks the wasm build outside its own lines
// (a predeclared name redeclared at package level, which the generated wrapper uses; a build
// line that excludes the file) is refused as the code's failure, with feedback, never persisted.
func TestGateWasmBuildFailuresAreTheCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds wasm modules with the Go toolchain")
	}
	for name, code := range map[string]string{
		"predeclared": "package artifact\n\nimport \"strings\"\n\ntype any = int\n\nfunc Upper(s string) string { return strings.ToUpper(s) }\n",
		"build line":  "// +build ignore\n\npackage artifact\n\nimport \"strings\"\n\nfunc Upper(s string) string { return strings.ToUpper(s) }\n",
	} {
		t.Run(name, func(t *testing.T) {
			p := &fixedProvider{code: code}
			f := openForge(t, t.TempDir(), p, func(o *Options) {
				o.Sandboxes = func(string) (sandbox.Sandbox, error) { return wasm.New(wasm.Options{CacheDir: wasmTestCache(t)}) }
			})
			c := textContract()
			c.Sandbox = "wasm"
			require.NoError(t, f.AddRole(c))
			o := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"own"}`))
			require.False(t, o.OK)
			assert.Equal(t, "intrinsic", o.Err.Class, "%+v", o.Err)
			assert.Equal(t, int64(DefaultMaxProviderCalls), p.n.Load(), "the failure goes back as feedback")
			_, err := f.Store().Load("text", "upper")
			require.ErrorIs(t, err, registry.ErrNotFound)
			t.Log(o.Err.Message)
		})
	}
}

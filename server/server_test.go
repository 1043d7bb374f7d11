package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/forge"
	forgemcp "github.com/artifactforge/forge/mcp"
	"github.com/artifactforge/forge/provider/replay"
	"github.com/artifactforge/forge/registry"
)

const upperOK = "package artifact\n\nimport \"strings\"\n\nfunc Upper(s string) string { return strings.ToUpper(s) }\n"
const upperWrong = "package artifact\n\nfunc Upper(s string) string { return s }\n"

// hang only detects a hang.
const hang = 10 * time.Second

func textContract() registry.Contract {
	return registry.Contract{Role: "text", Purpose: "string utilities",
		Methods:    map[string]string{"upper": "func Upper(s string) string", "lower": "func Lower(s string) string"},
		Acceptance: &registry.Acceptance{Examples: []registry.Example{{Method: "upper", Args: json.RawMessage(`{"s":"go"}`), Expect: json.RawMessage(`"GO"`)}}}}
}

func openForge(t testing.TB, store string) *forge.Forge {
	t.Helper()
	return openForgeAt(t, store, "")
}

// openForgeAt is openForge with a local directory (needed by a store URL).
func openForgeAt(t testing.TB, store, localDir string) *forge.Forge {
	t.Helper()
	line, _ := json.Marshal(map[string]any{"role": "text", "method": "upper", "kind": "generate", "attempt": 1, "code": upperOK,
		"usage": map[string]int{"input_tokens": 120, "output_tokens": 40}})
	p, err := replay.New("test", line)
	require.NoError(t, err)
	f, err := forge.Open(forge.Options{Store: store, LocalDir: localDir, Provider: p, DefaultSandbox: "yaegi"})
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	require.NoError(t, f.AddRole(textContract()))
	return f
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func newTestServer(t testing.TB, f *forge.Forge, o Options) (*Server, *httptest.Server) {
	t.Helper()
	o.Logger = quietLogger()
	s := New(f, o)
	ts := httptest.NewServer(s)
	t.Cleanup(func() { s.CloseStreams(); ts.Close() })
	return s, ts
}

func post(t testing.TB, url, token, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return roundTrip(t, req)
}

func get(t testing.TB, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	if v != nil {
		require.NoError(t, json.NewDecoder(resp.Body).Decode(v))
	}
	return resp.StatusCode
}

func callOutcome(t testing.TB, base, role, method, args string) forge.Outcome {
	t.Helper()
	return callStatusOutcome(t, 200, base, role, method, args)
}

// callStatusOutcome is callOutcome for a call that must answer with the given status.
func callStatusOutcome(t testing.TB, status int, base, role, method, args string) forge.Outcome {
	t.Helper()
	resp, body := post(t, base+"/v1/call/"+role+"/"+method, "", args)
	require.Equal(t, status, resp.StatusCode, "%s", body)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	var o forge.Outcome
	require.NoError(t, json.Unmarshal(body, &o))
	return o
}

func TestCallReadEndpointsAndMetrics(t *testing.T) {
	f := openForge(t, t.TempDir())
	s, ts := newTestServer(t, f, Options{})

	o := callOutcome(t, ts.URL, "text", "upper", `{"s":"hello"}`)
	require.True(t, o.OK, "%+v", o.Err)
	assert.JSONEq(t, `"HELLO"`, string(o.Value))
	assert.Equal(t, forge.SourceGenerated, o.Meta.ProgramSource)
	o = callOutcome(t, ts.URL, "text", "upper", `{"s":"again"}`)
	require.True(t, o.OK)
	assert.Equal(t, forge.SourcePersisted, o.Meta.ProgramSource)
	assert.Zero(t, o.Meta.ProviderCalls)
	o = callStatusOutcome(t, 404, ts.URL, "nope", "upper", `{}`)
	require.False(t, o.OK)
	assert.Equal(t, "caller", o.Err.Class)

	resp, body := post(t, ts.URL+"/v1/call/text/upper", "", `{"s":`)
	assert.Equal(t, 400, resp.StatusCode, "%s", body)
	resp, body = post(t, ts.URL+"/v1/call/text/upper", "", `{"s":"`+strings.Repeat("x", DefaultMaxBody)+`"}`)
	assert.Equal(t, 413, resp.StatusCode, "%s", body)

	var roles []registry.RoleRecord
	require.Equal(t, 200, get(t, ts.URL+"/v1/roles", &roles))
	require.Len(t, roles, 1)
	assert.Equal(t, "text", roles[0].Role)
	assert.Equal(t, 404, get(t, ts.URL+"/v1/roles/nope", nil))
	var rows []artifactRow
	require.Equal(t, 200, get(t, ts.URL+"/v1/artifacts", &rows))
	require.Len(t, rows, 1)
	assert.Equal(t, artifactRow{Role: "text", Method: "upper", Lifecycle: "candidate", Generation: 1, Trigger: "initial_forge", ContractMatch: true}, rows[0])
	var art registry.Artifact
	require.Equal(t, 200, get(t, ts.URL+"/v1/artifacts/text/upper", &art))
	assert.Equal(t, upperOK, art.Code)
	var hist []registry.Generation
	require.Equal(t, 200, get(t, ts.URL+"/v1/history/text/upper", &hist))
	assert.Len(t, hist, 1)
	var stale []forge.StaleArtifact
	require.Equal(t, 200, get(t, ts.URL+"/v1/stale", &stale))
	assert.Empty(t, stale)
	var st forge.Stats
	require.Equal(t, 200, get(t, ts.URL+"/v1/stats", &st))
	assert.Equal(t, int64(3), st.Overall.Calls)
	assert.Equal(t, int64(1), st.Overall.Persisted)
	assert.Equal(t, int64(1), st.Overall.ProviderCallsSaved)
	assert.Equal(t, 200, get(t, ts.URL+"/healthz", nil))
	assert.Equal(t, 200, get(t, ts.URL+"/readyz", nil))

	assert.Equal(t, 1.0, testutil.ToFloat64(s.metrics.calls.WithLabelValues("text", "upper", "persisted", "")))
	assert.Equal(t, 1.0, testutil.ToFloat64(s.metrics.calls.WithLabelValues("text", "upper", "generated", "")))
	assert.Equal(t, 1.0, testutil.ToFloat64(s.metrics.calls.WithLabelValues(forge.UnknownLabel, forge.UnknownLabel, "", "caller")))
	assert.Equal(t, 1.0, testutil.ToFloat64(s.metrics.generations.WithLabelValues("generated")))
	assert.Equal(t, 120.0, testutil.ToFloat64(s.metrics.tokens.WithLabelValues("input")))
	mresp, err := http.Get(ts.URL + "/metrics")
	require.NoError(t, err)
	text, _ := io.ReadAll(mresp.Body)
	mresp.Body.Close()
	assert.Contains(t, string(text), `forge_calls_total{class="",method="upper",role="text",source="persisted"} 1`)
	assert.Contains(t, string(text), `forge_call_duration_seconds_bucket{source="persisted"`)
	assert.Contains(t, string(text), `forge_live_events_dropped_total 0`)
	assert.Contains(t, string(text), `forge_events_dropped_total 0`)
	assert.Contains(t, string(text), `forge_events_lost_total 0`)
	assert.Contains(t, string(text), `forge_live_programs 1`)
}

func TestAdminVerbs(t *testing.T) {
	f := openForge(t, t.TempDir())
	_, open := newTestServer(t, f, Options{})
	resp, _ := post(t, open.URL+"/v1/admin/bless/text/upper", "x", "")
	assert.Equal(t, 403, resp.StatusCode, "no admin token configured: verbs are off")

	_, ts := newTestServer(t, f, Options{AdminToken: "s3cret"})
	require.True(t, callOutcome(t, ts.URL, "text", "upper", `{"s":"a"}`).OK)
	resp, _ = post(t, ts.URL+"/v1/admin/bless/text/upper", "wrong", "")
	assert.Equal(t, 401, resp.StatusCode)
	resp, _ = post(t, ts.URL+"/v1/admin/bless/text/upper", "", "")
	assert.Equal(t, 401, resp.StatusCode)

	resp, body := post(t, ts.URL+"/v1/admin/bless/text/upper", "s3cret", "")
	require.Equal(t, 200, resp.StatusCode, "%s", body)
	var vr verbResult
	require.NoError(t, json.Unmarshal(body, &vr))
	assert.Equal(t, registry.Blessed, vr.Artifact.Lifecycle)

	resp, body = post(t, ts.URL+"/v1/admin/edit/text/upper", "s3cret", upperWrong)
	require.Equal(t, 422, resp.StatusCode, "code the gate refuses is the operator's input")
	var o forge.Outcome
	require.NoError(t, json.Unmarshal(body, &o))
	require.False(t, o.OK)
	assert.Equal(t, "gate", o.Err.Type)

	resp, body = post(t, ts.URL+"/v1/admin/edit/text/upper", "s3cret", upperOK+"// v2\n")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, json.Unmarshal(body, &o))
	require.True(t, o.OK, "%s", body)
	assert.Equal(t, 2, o.Meta.ArtifactGen)

	resp, body = post(t, ts.URL+"/v1/admin/quarantine/text/upper", "s3cret", "")
	require.Equal(t, 200, resp.StatusCode, "%s", body)
	o = callStatusOutcome(t, 503, ts.URL, "text", "upper", `{"s":"a"}`)
	require.False(t, o.OK)
	assert.Equal(t, "refused", o.Err.Type)
	resp, body = post(t, ts.URL+"/v1/admin/rollback/text/upper?gen=1", "s3cret", "")
	require.Equal(t, 200, resp.StatusCode, "%s", body)
	require.NoError(t, json.Unmarshal(body, &vr))
	assert.Equal(t, 3, vr.Artifact.Generation, "a rollback is a new generation with the old code")
	assert.Equal(t, upperOK, vr.Artifact.Code)

	resp, _ = post(t, ts.URL+"/v1/admin/bless/text/missing", "s3cret", "")
	assert.Equal(t, 404, resp.StatusCode)
	resp, _ = post(t, ts.URL+"/v1/admin/explode/text/upper", "s3cret", "")
	assert.Equal(t, 404, resp.StatusCode)
}

// sseReader reads Server-Sent Events from a stream.
type sseReader struct {
	sc *bufio.Scanner
}

func (r *sseReader) next() (string, forge.LiveEvent, error) {
	var kind string
	for r.sc.Scan() {
		line := r.sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			kind = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var e forge.LiveEvent
			err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &e)
			return kind, e, err
		}
	}
	if r.sc.Err() != nil {
		return "", forge.LiveEvent{}, r.sc.Err()
	}
	return "", forge.LiveEvent{}, io.EOF
}

func openEvents(t testing.TB, url string) (*sseReader, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	sc.Scan() // the ": forge events" comment: the subscription is in place
	return &sseReader{sc: sc}, func() { cancel(); resp.Body.Close() }
}

// A bless in another process reaches the running server's event stream and its next call, with
// the revalidation poll switched off: only watch mode can deliver it.
func TestEventsStreamCallsAndOtherProcessChanges(t *testing.T) {
	store := t.TempDir()
	f := openForge(t, store)
	f.Store().SetRevalidate(time.Hour)
	require.NoError(t, f.Watch())
	_, ts := newTestServer(t, f, Options{})
	require.True(t, callOutcome(t, ts.URL, "text", "upper", `{"s":"a"}`).OK)

	ev, stop := openEvents(t, ts.URL+"/v1/events?role=text")
	defer stop()
	require.True(t, callOutcome(t, ts.URL, "text", "upper", `{"s":"b"}`).OK)
	// The first call's own writes (the new artifact) may reach the watcher, debounced, after the
	// subscription: artifact events before the call's are not what this test is about.
	kind, e, err := ev.next()
	for err == nil && kind == forge.LiveArtifact {
		kind, e, err = ev.next()
	}
	require.NoError(t, err)
	assert.Equal(t, forge.LiveCall, kind)
	assert.Equal(t, forge.SourcePersisted, e.Call.ProgramSource)

	operator, err := forge.Open(forge.Options{Store: store, NoEvents: true})
	require.NoError(t, err)
	defer operator.Close()
	require.NoError(t, operator.Bless("text", "upper", false))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			kind, e, err := ev.next()
			if err != nil || (kind == forge.LiveArtifact && e.Artifact.Lifecycle == "blessed") {
				assert.NoError(t, err)
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(hang):
		t.Fatal("no artifact event for the bless (a hang)")
	}
	o := callOutcome(t, ts.URL, "text", "upper", `{"s":"c"}`)
	require.True(t, o.OK)
	assert.Equal(t, "execute:blessed", o.Meta.Decision)

	assert.Equal(t, 400, get(t, ts.URL+"/v1/events?trace=zz", nil))
}

// 64 concurrent clients: no errors, and an event stream that sees every call (none lost).
func TestConcurrentClientsLoseNoEvents(t *testing.T) {
	f := openForge(t, t.TempDir())
	s, ts := newTestServer(t, f, Options{})
	require.True(t, callOutcome(t, ts.URL, "text", "upper", `{"s":"warm"}`).OK)
	ev, stop := openEvents(t, ts.URL+"/v1/events?source=persisted")
	defer stop()

	const clients, each = 64, 20
	var failures atomic.Int64
	var wg sync.WaitGroup
	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				resp, err := client.Post(ts.URL+"/v1/call/text/upper", "application/json", strings.NewReader(fmt.Sprintf(`{"s":"c%di%d"}`, c, i)))
				if err != nil {
					failures.Add(1)
					continue
				}
				var o forge.Outcome
				if json.NewDecoder(resp.Body).Decode(&o) != nil || !o.OK {
					failures.Add(1)
				}
				resp.Body.Close()
			}
		}(c)
	}
	wg.Wait()
	assert.Zero(t, failures.Load())
	got := 0
	deadline := time.AfterFunc(hang, stop)
	defer deadline.Stop()
	for got < clients*each {
		_, _, err := ev.next()
		require.NoError(t, err, "the stream ended after %d of %d events", got, clients*each)
		got++
	}
	assert.Equal(t, float64(clients*each), testutil.ToFloat64(s.metrics.calls.WithLabelValues("text", "upper", "persisted", "")))
	assert.Zero(t, f.LiveDropped())
}

// A shutdown (SIGTERM in `forge serve`) during load: every answered call is in the metrics and,
// once the forge is closed, in the event log.
func TestShutdownDuringLoadLosesNoMetricsOrEvents(t *testing.T) {
	store := t.TempDir()
	f := openForge(t, store)
	s := New(f, Options{Logger: quietLogger()})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	base := "http://" + ln.Addr().String()

	var answered atomic.Int64
	var wg sync.WaitGroup
	stopLoad := make(chan struct{})
	for c := 0; c < 16; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Transport: &http.Transport{}}
			for {
				select {
				case <-stopLoad:
					return
				default:
				}
				resp, err := client.Post(base+"/v1/call/text/upper", "application/json", strings.NewReader(`{"s":"x"}`))
				if err != nil {
					continue // refused: the server is shutting down
				}
				var o forge.Outcome
				if json.NewDecoder(resp.Body).Decode(&o) == nil && o.OK {
					answered.Add(1)
				}
				resp.Body.Close()
			}
		}()
	}
	for answered.Load() < 200 {
		time.Sleep(time.Millisecond)
	}
	cancel() // SIGTERM
	select {
	case err := <-served:
		require.NoError(t, err)
	case <-time.After(hang):
		t.Fatal("shutdown hung")
	}
	close(stopLoad)
	wg.Wait()
	counted := testutil.ToFloat64(s.metrics.calls.WithLabelValues("text", "upper", "persisted", "")) +
		testutil.ToFloat64(s.metrics.calls.WithLabelValues("text", "upper", "generated", ""))
	assert.Equal(t, float64(answered.Load()), counted, "every answered call is counted")
	require.NoError(t, f.Close())
	evs, err := forge.ReadEvents(store)
	require.NoError(t, err)
	var logged int64
	for i := range evs {
		logged += evs[i].Calls() // warm successes are aggregates: Count calls each
	}
	assert.Equal(t, answered.Load(), logged, "every answered call is in the event log")
}

// BenchmarkHTTPCall is a warm call through the server on loopback; compare with
// BenchmarkDirectCall (forge.Call in the same run) for the HTTP overhead.
func BenchmarkHTTPCall(b *testing.B) {
	f := openForge(b, b.TempDir())
	_, ts := newTestServer(b, f, Options{})
	require.True(b, callOutcome(b, ts.URL, "text", "upper", `{"s":"warm"}`).OK)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	body := []byte(`{"s":"hello"}`)
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		resp, err := client.Post(ts.URL+"/v1/call/text/upper", "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	reportPercentiles(b, lat)
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1000, "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1000, "p99-µs")
}

func BenchmarkDirectCall(b *testing.B) {
	f := openForge(b, b.TempDir())
	require.True(b, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"warm"}`)).OK)
	args := json.RawMessage(`{"s":"hello"}`)
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if o := f.Call(context.Background(), "text", "upper", args); !o.OK {
			b.Fatal(o.Err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	reportPercentiles(b, lat)
}

// BenchmarkHTTPCall64 is 64 concurrent HTTP clients calling a warm method (the load
// scenario; run with -benchtime=10s for ten seconds): errors fail it, p50/p99 are reported.
func BenchmarkHTTPCall64(b *testing.B) {
	f := openForge(b, b.TempDir())
	_, ts := newTestServer(b, f, Options{})
	require.True(b, callOutcome(b, ts.URL, "text", "upper", `{"s":"warm"}`).OK)
	tr := &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64}
	client := &http.Client{Transport: tr}
	var mu sync.Mutex
	var all []time.Duration
	var failures atomic.Int64
	b.SetParallelism(32) // 32 x GOMAXPROCS(2) = 64 clients here
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		lat := make([]time.Duration, 0, 1024)
		for pb.Next() {
			start := time.Now()
			resp, err := client.Post(ts.URL+"/v1/call/text/upper", "application/json", strings.NewReader(`{"s":"hello"}`))
			if err != nil {
				failures.Add(1)
				continue
			}
			var o forge.Outcome
			if json.NewDecoder(resp.Body).Decode(&o) != nil || !o.OK {
				failures.Add(1)
			}
			resp.Body.Close()
			lat = append(lat, time.Since(start))
		}
		mu.Lock()
		all = append(all, lat...)
		mu.Unlock()
	})
	b.StopTimer()
	if n := failures.Load(); n > 0 {
		b.Fatalf("%d failed calls", n)
	}
	reportPercentiles(b, all)
}

// An MCP client's open stream (streamable HTTP) does not hold a graceful shutdown.
func TestShutdownEndsMCPSessions(t *testing.T) {
	f := openForge(t, t.TempDir())
	ms, err := forgemcp.New(f, forgemcp.Options{})
	require.NoError(t, err)
	defer ms.Close()
	s := New(f, Options{Logger: quietLogger(), Extra: map[string]http.Handler{"/mcp": ms.HTTPHandler()}, OnShutdown: ms.CloseSessions})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	client := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: "http://" + ln.Addr().String() + "/mcp", MaxRetries: -1}, nil)
	require.NoError(t, err)
	defer cs.Close()
	_, err = cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	cancel()
	select {
	case err := <-served:
		require.NoError(t, err, "the shutdown finished without waiting out its timeout (without OnShutdown it fails here after 30 s)")
	case <-time.After(ShutdownTimeout + hang):
		t.Fatal("shutdown hung")
	}
}

package wasm

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

func compile(t *testing.T, code string) sandbox.Program {
	t.Helper()
	p, err := shared.Compile(context.Background(), sandbox.Source{Code: code})
	require.NoError(t, err)
	return p
}

// TestStoppedInstanceIsReplaced stops a runaway call at its deadline, then serves calls from
// several goroutines with the same program: the stopped instance was discarded, not reused.
func TestStoppedInstanceIsReplaced(t *testing.T) {
	p := compile(t, `package artifact

func Loop(n int) int {
	for n < 0 {
		n--
		if n == 0 {
			n = -1
		}
	}
	return n * 2
}
`)
	ctx := context.Background()
	start := time.Now()
	_, err := shared.Run(ctx, p, sandbox.Input{Args: []byte(`[-1]`), Limits: sandbox.Limits{Timeout: 100 * time.Millisecond}})
	elapsed := time.Since(start)
	require.Error(t, err)
	assert.Equal(t, sandbox.KindDeadline, sandbox.KindOf(err), err.Error())
	assert.Less(t, elapsed, 2*time.Second, "stopped near its deadline")
	t.Logf("stopped after %v (deadline 100ms)", elapsed)

	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				out, err := shared.Run(ctx, p, sandbox.Input{Args: []byte(`[21]`)})
				if !assert.NoError(t, err) {
					return
				}
				assert.Equal(t, "42", string(out.Value))
			}
		}()
	}
	wg.Wait()
}

const hostCode = `package artifact

import (
	"encoding/json"
	"forge/host"
)

type Answer struct {
	Body  string ` + "`json:\"body\"`" + `
	Total int    ` + "`json:\"total\"`" + `
}

func Fetch(url string) (Answer, error) {
	body, err := host.Get(url)
	if err != nil {
		return Answer{}, err
	}
	var n struct{ N int }
	if err := host.CallInto("math", "double", map[string]int{"x": len(body)}, &n); err != nil {
		return Answer{}, err
	}
	var v map[string]int
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		return Answer{}, err
	}
	host.Logf("fetched %d bytes", len(body))
	return Answer{Body: body, Total: v["a"] + n.N}, nil
}
`

// TestHostAPI drives forge/host through the wasm imports into sandbox.Host: HTTP to an allowed
// host, delegation, logs, and the evidence the classifier needs on failures.
func TestHostAPI(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			w.Write([]byte(`{"a": 40}`))
		case "/gone":
			http.Error(w, "gone", http.StatusGone)
		case "/html":
			w.Write([]byte(`<html>`))
		case "/slow":
			time.Sleep(time.Second)
		}
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	p := compile(t, hostCode)
	caps := sandbox.Capabilities{HTTP: &sandbox.HTTPCap{Allow: []string{u.Host}}, Call: true, Log: true}
	call := func(ctx context.Context, role, method string, args json.RawMessage) (json.RawMessage, error) {
		var a struct{ X int }
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, err
		}
		return json.Marshal(map[string]int{"N": 2 * a.X})
	}
	run := func(path string, caps sandbox.Capabilities, timeout time.Duration) (sandbox.Output, error) {
		args, _ := json.Marshal([]string{srv.URL + path})
		return shared.Run(context.Background(), p, sandbox.Input{Args: args, Caps: caps, Call: call, Limits: sandbox.Limits{Timeout: timeout}})
	}

	out, err := run("/ok", caps, time.Second)
	require.NoError(t, err)
	assert.JSONEq(t, `{"body": "{\"a\": 40}", "total": 58}`, string(out.Value))
	assert.Equal(t, []string{"fetched 9 bytes"}, out.Logs)
	assert.Equal(t, 2, out.HostCalls)
	assert.True(t, out.UpstreamRead)

	for _, c := range []struct {
		name     string
		path     string
		caps     sandbox.Capabilities
		timeout  time.Duration
		kind     sandbox.Kind
		status   int
		inFlight bool
	}{
		{"not allowed", "/ok", sandbox.Capabilities{HTTP: &sandbox.HTTPCap{Allow: []string{"api.example.com"}}}, time.Second, sandbox.KindPolicy, 0, false},
		{"no capability", "/ok", sandbox.Capabilities{}, time.Second, sandbox.KindPolicy, 0, false},
		{"status", "/gone", caps, time.Second, sandbox.KindHost, http.StatusGone, false},
		{"decode", "/html", caps, time.Second, sandbox.KindDecode, 0, false},
		{"deadline in host call", "/slow", caps, 200 * time.Millisecond, sandbox.KindDeadline, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := run(c.path, c.caps, c.timeout)
			require.Error(t, err)
			var se *sandbox.Error
			require.ErrorAs(t, err, &se)
			assert.Equal(t, c.kind, se.Kind, se.Error())
			assert.Equal(t, c.status, se.HTTPStatus)
			assert.Equal(t, c.inFlight, se.HostCallInFlight)
		})
	}
}

// TestMemoryCapPerCall runs one program under two memory caps: the same allocation fits the
// default cap and is a memory error under a small one, and the host process lives on.
func TestMemoryCapPerCall(t *testing.T) {
	p := compile(t, `package artifact

func Alloc(mb int) int {
	b := make([]byte, mb<<20)
	for i := range b {
		b[i] = 1
	}
	return len(b) >> 20
}
`)
	ctx := context.Background()
	out, err := shared.Run(ctx, p, sandbox.Input{Args: []byte(`[64]`)})
	require.NoError(t, err)
	assert.Equal(t, "64", string(out.Value))
	_, err = shared.Run(ctx, p, sandbox.Input{Args: []byte(`[64]`), Limits: sandbox.Limits{MemoryBytes: 32 << 20}})
	require.Error(t, err)
	assert.Equal(t, sandbox.KindMemory, sandbox.KindOf(err), err.Error())
}

// TestInlinedRecursionKeepsAnswersAndLines: under guestGcflags the artifact's recursive function
// is inlined into itself one level and into its caller; answers and the line a panic reports are
// those of the source as written.
func TestInlinedRecursionKeepsAnswersAndLines(t *testing.T) {
	p := compile(t, `package artifact

func walk(n, depth int) int {
	if n == depth {
		panic("bottom")
	}
	if n < 2 {
		return n
	}
	return walk(n-1, depth) + walk(n-2, depth)
}

func Walk(n, panicAt int) int { return walk(n, panicAt) }
`)
	ctx := context.Background()
	out, err := shared.Run(ctx, p, sandbox.Input{Args: []byte(`[20, -1]`)})
	require.NoError(t, err)
	assert.Equal(t, "6765", string(out.Value))
	for _, at := range []string{"0", "1", "7"} { // the panic at each level of the unrolled recursion
		_, err = shared.Run(ctx, p, sandbox.Input{Args: []byte(`[20, ` + at + `]`)})
		require.Error(t, err)
		se := sandbox.AsError(err)
		assert.Equal(t, sandbox.KindPanic, se.Kind, se.Error())
		assert.Equal(t, 5, se.Line, se.Error())
	}
}

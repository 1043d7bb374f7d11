package main

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/artifactforge/forge/registry/nats/embedded"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// natsForgeBinary is forge built with the embedded NATS server (-tags natsembedded), which
// `forge serve --nats-embedded` needs.
var natsForgeBinary = sync.OnceValues(func() (string, error) { return buildForgeBinary("-tags", "natsembedded") })

// The in-process CLI of these tests links the server in as a natsembedded build does.
func init() {
	if startNATSServer == nil {
		startNATSServer = func(dir, host string, port int, token string) (string, func(), error) {
			return embedded.StartWith(dir, embedded.Options{Host: host, Port: port, Token: token})
		}
	}
}

// TestEmbeddedNATSLeftOutOfDefaultBinary: the default forge binary links neither the NATS server
// (the largest dependency of its build) nor the testing package; `forge serve --nats-embedded`
// there says how to get a binary that has the server, which -tags natsembedded links in.
func TestEmbeddedNATSLeftOutOfDefaultBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	deps := func(flags ...string) map[string]bool {
		out, err := exec.Command("go", append(append([]string{"list", "-deps"}, flags...), ".")...).Output()
		require.NoError(t, err)
		m := map[string]bool{}
		for _, p := range strings.Fields(string(out)) {
			m[p] = true
		}
		return m
	}
	const server = "github.com/nats-io/nats-server/v2/server"
	def := deps()
	assert.False(t, def[server], "the default binary links the NATS server")
	assert.False(t, def["testing"], "the default binary links the testing package")
	assert.True(t, def["github.com/artifactforge/forge/registry/nats"], "the default binary keeps the fleet store client")
	assert.True(t, deps("-tags", "natsembedded")[server], "-tags natsembedded links the NATS server in")

	saved := startNATSServer
	startNATSServer = nil // as in the default binary
	defer func() { startNATSServer = saved }()
	code, _, errOut := runCLI(t, "serve", "--nats-embedded", t.TempDir(), "--nats-listen", "127.0.0.1:0", "--addr", "127.0.0.1:0")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "built without the embedded NATS server")
	assert.Contains(t, errOut, "go install -tags natsembedded ./cmd/forge")
	assert.Contains(t, errOut, "--store nats://127.0.0.1:4222/forge")
}

// startEmbeddedServe runs the built `forge serve --nats-embedded DIR` and returns the process, the
// store URL it printed for other processes and its HTTP base URL.
func startEmbeddedServe(t *testing.T, natsDir string, env []string) (*exec.Cmd, string, string) {
	cmd, storeURL, base, _ := startEmbeddedServeOut(t, natsDir, env)
	return cmd, storeURL, base
}

// startEmbeddedServeOut is startEmbeddedServe that also returns what the process printed so far
// (stdout and stderr), as it grows.
func startEmbeddedServeOut(t *testing.T, natsDir string, env []string) (*exec.Cmd, string, string, func() string) {
	t.Helper()
	path, err := natsForgeBinary()
	require.NoError(t, err)
	cas := filepath.Join(t.TempDir(), "cassette.jsonl")
	require.NoError(t, os.WriteFile(cas, []byte(upperCassette), 0o644))
	cmd := exec.Command(path, "serve", "--nats-embedded", natsDir, "--nats-listen", "127.0.0.1:0", "--addr", "127.0.0.1:0", "--no-mcp", "--provider", "replay:"+cas)
	cmd.Env = append(append(os.Environ(), "FORGE_PROVIDER=", "FORGE_SANDBOX=yaegi", "FORGE_STORE="), env...)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var all strings.Builder
	printed := &lockedWriter{w: &all}
	cmd.Stderr = printed
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	type lines struct{ store, base string }
	got := make(chan lines, 1)
	go func() {
		var l lines
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			printed.Write([]byte(sc.Text() + "\n"))
			if rest, ok := strings.CutPrefix(sc.Text(), "forge store "); ok {
				l.store, _, _ = strings.Cut(rest, " ")
			}
			if u, ok := strings.CutPrefix(sc.Text(), "forge serving on "); ok {
				l.base = u
				got <- l
			}
		}
	}()
	select {
	case l := <-got:
		require.NotEmpty(t, l.store, "the store URL is printed before serving starts")
		return cmd, l.store, l.base, func() string {
			printed.mu.Lock()
			defer printed.mu.Unlock()
			return all.String()
		}
	case <-time.After(time.Minute): // a hang bound
		t.Fatal("forge serve --nats-embedded did not start")
	}
	return nil, "", "", nil
}

// TestEmbeddedServeQuickstart: `forge serve --nats-embedded DIR` starts a JetStream server, keeps
// the store there and serves calls; other forge processes reach the same store with the URL it
// printed; the server's data outlives the process.
func TestEmbeddedServeQuickstart(t *testing.T) {
	natsDir := filepath.Join(t.TempDir(), "nats")
	env := []string{"FORGE_LOCAL_DIR=" + filepath.Join(t.TempDir(), "local")}
	cmd, storeURL, base := startEmbeddedServe(t, natsDir, env)
	assert.Regexp(t, `^nats://127\.0\.0\.1:\d+/forge$`, storeURL)

	r := bin(t, nil, env, "--store", storeURL, "role", "add", "--role", "text", "--purpose", "string utilities")
	require.Equal(t, 0, r.code, r.stderr)
	c := &http.Client{Timeout: time.Minute}
	o, err := serveCall(c, base, `{"s":"hi"}`)
	require.NoError(t, err)
	require.True(t, o.OK, "%+v", o.Err)
	assert.JSONEq(t, `"HI"`, string(o.Value))
	assert.Equal(t, 1, o.Meta.ProviderCalls)

	// Another process sees what the server generated.
	ls := func() []artifactRow {
		r := bin(t, nil, env, "--store", storeURL, "--json", "ls")
		require.Equal(t, 0, r.code, r.stderr)
		var rows []artifactRow
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows))
		return rows
	}
	rows := ls()
	require.Len(t, rows, 1)
	assert.Equal(t, "upper", rows[0].Method)
	assert.Equal(t, 1, rows[0].Generation)

	// Stopping serve stops the NATS server: the store is unreachable, and says where it looked.
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait())
	r = bin(t, nil, env, "--store", storeURL, "ls")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, strings.TrimPrefix(storeURL, "nats://")[:strings.Index(strings.TrimPrefix(storeURL, "nats://"), "/")])

	// Started again on the same directory, the store holds what it held, including the counters
	// the first server flushed on its way out.
	_, storeURL, base = startEmbeddedServe(t, natsDir, env)
	rows = ls()
	require.Len(t, rows, 1)
	assert.Equal(t, 1, rows[0].Generation)
	assert.Equal(t, int64(1), rows[0].SuccessCount)
	o, err = serveCall(c, base, `{"s":"again"}`)
	require.NoError(t, err)
	require.True(t, o.OK, "%+v", o.Err)
	assert.Equal(t, 0, o.Meta.ProviderCalls, "the persisted artifact runs")
}

func TestEmbeddedServeRefuses(t *testing.T) {
	t.Setenv("NATS_TOKEN", "")
	dir := t.TempDir()
	code, _, errOut := runCLI(t, "serve", "--nats-embedded", dir, "--nats-listen", "0.0.0.0:0", "--addr", "127.0.0.1:0")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "reachable from other machines")
	assert.Contains(t, errOut, "$NATS_TOKEN")

	code, _, errOut = runCLI(t, "--store", t.TempDir(), "serve", "--nats-embedded", dir, "--nats-listen", "127.0.0.1:0")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "leave --store out")

	code, _, errOut = runCLI(t, "serve", "--nats-embedded", dir, "--nats-listen", "nowhere")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "HOST:PORT")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	code, _, errOut = runCLI(t, "serve", "--nats-embedded", dir, "--nats-listen", ln.Addr().String())
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "pick another --nats-listen")
}

// TestEmbeddedServeToken: with $NATS_TOKEN set, the embedded server requires it of every client,
// the serving process uses it, and it is printed nowhere.
func TestEmbeddedServeToken(t *testing.T) {
	const token = "s3cret-fleet-token"
	env := []string{"FORGE_LOCAL_DIR=" + filepath.Join(t.TempDir(), "local"), "NATS_TOKEN=" + token}
	cmd, storeURL, base, printed := startEmbeddedServeOut(t, filepath.Join(t.TempDir(), "nats"), env)
	assert.NotContains(t, storeURL, token)
	r := bin(t, nil, env, "--store", storeURL, "role", "add", "--role", "text", "--purpose", "string utilities")
	require.Equal(t, 0, r.code, r.stderr)
	o, err := serveCall(&http.Client{Timeout: time.Minute}, base, `{"s":"hi"}`)
	require.NoError(t, err)
	require.True(t, o.OK, "%+v", o.Err)

	noToken := []string{env[0], "NATS_TOKEN="}
	r = bin(t, nil, noToken, "--store", storeURL, "ls")
	assert.Equal(t, 1, r.code, "a client without the token is refused")
	assert.Contains(t, strings.ToLower(r.stderr), "authorization", "the refusal says why")
	wrong := []string{env[0], "NATS_TOKEN=wrong-token"}
	r2 := bin(t, nil, wrong, "--store", strings.Replace(storeURL, "nats://", "nats://"+token+"x@", 1), "ls")
	assert.Equal(t, 1, r2.code)
	assert.NotContains(t, r2.stderr, token+"x", "a token in the store URL is never printed")

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait())
	assert.Contains(t, printed(), "clients need the token of $NATS_TOKEN")
	for _, out := range []string{printed(), r.stdout, r.stderr, r2.stdout} {
		assert.NotContains(t, out, token)
	}
}

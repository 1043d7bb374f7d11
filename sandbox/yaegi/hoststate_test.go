package yaegi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

// scannerToStderr scans an unterminated string with text/scanner every way the Error field can
// be nil (left as Init sets it, reset to nil, set from a nil variable, Init through a method
// value, a Scanner embedded in a struct of the file): text/scanner's default reports the error
// to the process's os.Stderr, the file name (the program's own text) first.
const scannerToStderr = `package artifact

import (
	"strings"
	"text/scanner"
)

type wrapped struct {
	scanner.Scanner
	n int
}

func Scan() int {
	count := 0
	var s scanner.Scanner
	s.Init(strings.NewReader("\"open"))
	s.Filename = "FORGE-INJECTED-LINE-1"
	s.Scan()
	count += s.ErrorCount
	s.Init(strings.NewReader("\"open"))
	s.Error = nil
	s.Filename = "FORGE-INJECTED-LINE-2"
	s.Scan()
	count += s.ErrorCount
	var none func(*scanner.Scanner, string)
	p := &s
	p.Init(strings.NewReader("\"open")).Error = none
	s.Filename = "FORGE-INJECTED-LINE-3"
	s.Scan()
	count += s.ErrorCount
	init := s.Init
	init(strings.NewReader("\"open"))
	s.Filename = "FORGE-INJECTED-LINE-4"
	s.Scan()
	count += s.ErrorCount
	var w wrapped
	w.Init(strings.NewReader("\"open"))
	w.Filename = "FORGE-INJECTED-LINE-5"
	w.Scan()
	return count + w.ErrorCount
}
`

// TestScannerErrorsStayOffHostStderr runs scannerToStderr in-process with os.Stderr captured:
// nothing the program does may reach the host's standard error, and each scan still counts its
// error (ErrorCount), as it does under wasm.
func TestScannerErrorsStayOffHostStderr(t *testing.T) {
	runOffStderr(t, scannerToStderr, `5`)
}

// runOffStderr runs src in-process with os.Stderr captured and checks its answer and that no
// text marked FORGE-INJECTED reached the host's standard error.
func runOffStderr(t *testing.T, src, want string) {
	t.Helper()
	sb := New(Options{PoolSize: 1})
	defer sb.Close()
	p := compile(t, sb, src)

	r, w, err := os.Pipe()
	require.NoError(t, err)
	saved := os.Stderr
	os.Stderr = w
	out, runErr := sb.Run(context.Background(), p, sandbox.Input{Args: json.RawMessage(`[]`)})
	os.Stderr = saved
	require.NoError(t, w.Close())
	leaked, err := io.ReadAll(r)
	require.NoError(t, err)

	require.NoError(t, runErr)
	assert.JSONEq(t, want, string(out.Value))
	assert.NotContains(t, string(leaked), "FORGE-INJECTED", "guest text reached the host's stderr")
}

// TestTestFilesSeeTheGuestZone runs acceptance tests, in-process and isolated, that read the
// zone of the test clock (time.Now, allowed in tests), of time.Unix and of Time.Local in the
// test file itself (its own rewrite and import of time): all are the sandbox's UTC "Local" zone,
// not the host's (TestMain runs the binary in New York's zone).
func TestTestFilesSeeTheGuestZone(t *testing.T) {
	ctx := context.Background()
	sb := New(Options{})
	defer sb.Close()
	code := "package artifact\n\nfunc Add(a, b int) int { return a + b }\n"
	tests := `package artifact

import (
	"testing"
	"time"
)

func TestZones(t *testing.T) {
	for i, u := range []time.Time{time.Now(), time.Unix(0, 0), time.Date(2020, 7, 1, 0, 0, 0, 0, time.UTC).Local()} {
		name, off := u.Zone()
		if name != "UTC" || off != 0 || u.Location().String() != "Local" {
			t.Errorf("time %d: zone %s %d, location %s", i, name, off, u.Location())
		}
	}
}
`
	for _, src := range []sandbox.Source{{Code: code}, isolatedSource(code)} {
		res, err := sb.Test(ctx, src, tests, sandbox.Input{})
		require.NoError(t, err)
		require.Len(t, res, 1)
		assert.True(t, res[0].Passed, "isolation %q: %s", src.Limits.Isolation, res[0].Message)
	}

	// A test file that does not import time, calling Local on the artifact's time: the rewrite
	// adds its own import of time to the test file (named apart from the artifact's).
	code = "package artifact\n\nimport \"time\"\n\nfunc Stamp() time.Time { return time.Date(2020, 7, 1, 12, 0, 0, 0, time.UTC) }\n"
	tests = "package artifact\n\nimport \"testing\"\n\nfunc TestStamp(t *testing.T) {\n\tif s := Stamp().Local().Format(\"15 MST\"); s != \"12 UTC\" {\n\t\tt.Errorf(\"local stamp %s\", s)\n\t}\n}\n"
	for _, src := range []sandbox.Source{{Code: code}, isolatedSource(code)} {
		res, err := sb.Test(ctx, src, tests, sandbox.Input{})
		require.NoError(t, err)
		require.Len(t, res, 1)
		assert.True(t, res[0].Passed, "isolation %q: %s", src.Limits.Isolation, res[0].Message)
	}
}

// keepsPrinterBuffer keeps the buffer fmt.Fprint hands its Write method (a pooled printer's, in
// the host process) and returns what it holds on a later call: whatever the host formatted since
// with that printer.
const keepsPrinterBuffer = `package artifact

import "fmt"

type writer struct{}

var buf []byte

func (writer) Write(p []byte) (int, error) {
	buf = p
	return len(p), nil
}

func Peek(step int) string {
	if step == 0 {
		fmt.Fprint(writer{}, "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz")
		return ""
	}
	return string(buf)
}
`

// TestPooledPrinterStaysHostOwned runs keepsPrinterBuffer in-process with one P (so the host's
// formatting and the guest share fmt's per-P printer pool deterministically): the buffer the
// guest kept must not show what the host formats afterwards.
func TestPooledPrinterStaysHostOwned(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	sb := New(Options{PoolSize: 1})
	defer sb.Close()
	p := compile(t, sb, keepsPrinterBuffer)
	_, err := sb.Run(context.Background(), p, sandbox.Input{Args: json.RawMessage(`[0]`)})
	require.NoError(t, err)
	secret := fmt.Sprintf("host-secret-%d", 42)
	out, err := sb.Run(context.Background(), p, sandbox.Input{Args: json.RawMessage(`[1]`)})
	require.NoError(t, err)
	assert.NotContains(t, string(out.Value), "host-secret", "guest code read what the host formatted (%s)", secret)
}

// keepsDiscardBuffer keeps the buffer io.Discard's ReadFrom hands its Read method (one of the
// process's pooled drain buffers) and returns what it holds on a later call.
const keepsDiscardBuffer = `package artifact

import "io"

type reader struct{ done bool }

var buf []byte

func (r *reader) Read(p []byte) (int, error) {
	if r.done {
		return 0, io.EOF
	}
	r.done = true
	buf = p
	return 1, nil
}

func Peek(step int) string {
	if step == 0 {
		io.Copy(io.Discard, &reader{})
		return ""
	}
	return string(buf[:16])
}
`

// TestPooledDrainBufferStaysHostOwned runs keepsDiscardBuffer in-process with one P: the buffer
// the guest kept must not show what the host drains afterwards through io.Discard (as net/http
// does with request bodies).
func TestPooledDrainBufferStaysHostOwned(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	sb := New(Options{PoolSize: 1})
	defer sb.Close()
	p := compile(t, sb, keepsDiscardBuffer)
	_, err := sb.Run(context.Background(), p, sandbox.Input{Args: json.RawMessage(`[0]`)})
	require.NoError(t, err)
	_, err = io.Copy(io.Discard, struct{ io.Reader }{strings.NewReader("host-secret-body")})
	require.NoError(t, err)
	out, err := sb.Run(context.Background(), p, sandbox.Input{Args: json.RawMessage(`[1]`)})
	require.NoError(t, err)
	assert.NotContains(t, string(out.Value), "host-secret", "guest code read what the host drained")
}

// keepsPrinterState keeps the fmt.State its Format method is handed (fmt's pooled printer: the
// value is converted to fmt.Formatter so that fmt sees the method) and writes to it on a later
// call, after fmt has put the printer back in its pool.
const keepsPrinterState = `package artifact

import "fmt"

type formatter struct{}

var kept fmt.State

func (formatter) Format(s fmt.State, verb rune) {
	kept = s
	s.Write([]byte("f"))
}

func Poison(step int) string {
	if step == 0 {
		var f fmt.Formatter = formatter{}
		return fmt.Sprintf("%v", f)
	}
	_, err := kept.Write([]byte("FORGE-INJECTED"))
	if err != nil {
		return err.Error()
	}
	return "written"
}
`

// TestPooledPrinterStateStaysHostOwned runs keepsPrinterState in-process with one P: a write
// through the kept fmt.State after its Format call returned must not prefix what the host
// formats next with the same pooled printer.
func TestPooledPrinterStateStaysHostOwned(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	sb := New(Options{PoolSize: 1})
	defer sb.Close()
	p := compile(t, sb, keepsPrinterState)
	out, err := sb.Run(context.Background(), p, sandbox.Input{Args: json.RawMessage(`[0]`)})
	require.NoError(t, err)
	assert.JSONEq(t, `"f"`, string(out.Value))
	out, err = sb.Run(context.Background(), p, sandbox.Input{Args: json.RawMessage(`[1]`)})
	require.NoError(t, err)
	for i := range 100 {
		if s := fmt.Sprintf("host %d", i); s != "host "+strconv.Itoa(i) {
			t.Fatalf("the host's formatting was changed by guest code: %q", s)
		}
	}
	assert.Contains(t, string(out.Value), "used after its Format call returned")
}

// TestTestFileCannotReseedHostRand runs an acceptance test that calls math/rand.Seed, in-process,
// with GODEBUG=randseednop=0 (a host may run with it: Seed then reseeds the process's shared
// source): the host's top-level math/rand sequence must not become the seeded one.
func TestTestFileCannotReseedHostRand(t *testing.T) {
	t.Setenv("GODEBUG", "randseednop=0")
	sb := New(Options{})
	defer sb.Close()
	code := "package artifact\n\nfunc Add(a, b int) int { return a + b }\n"
	tests := "package artifact\n\nimport (\n\t\"math/rand\"\n\t\"testing\"\n)\n\nfunc TestSeed(t *testing.T) { rand.Seed(7) }\n"
	res, err := sb.Test(context.Background(), sandbox.Source{Code: code}, tests, sandbox.Input{})
	require.NoError(t, err)
	require.Len(t, res, 1)
	seeded := rand.New(rand.NewSource(7))
	same := 0
	for range 4 {
		if rand.Int63() == seeded.Int63() {
			same++
		}
	}
	assert.Less(t, same, 4, "the host's math/rand source was reseeded by guest code")
}

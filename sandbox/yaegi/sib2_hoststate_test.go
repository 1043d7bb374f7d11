package yaegi

import (
	"context"
	"math/rand"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

// scannerInitIndirect calls text/scanner's Init through an interface of the file, that
// interface's method value and a type parameter: each leaves the Error field nil, so an
// unterminated string is reported to the process's os.Stderr unless the call is routed.
const scannerInitIndirect = `package artifact

import (
	"io"
	"strings"
	"text/scanner"
)

type initer interface{ Init(io.Reader) *scanner.Scanner }

func via[T interface{ Init(io.Reader) *scanner.Scanner }](x T, r io.Reader) *scanner.Scanner { return x.Init(r) }

func Scan() int {
	count := 0
	var s scanner.Scanner
	var i initer = &s
	i.Init(strings.NewReader("\"open"))
	s.Filename = "FORGE-INJECTED-IFACE"
	s.Scan()
	count += s.ErrorCount
	f := i.Init
	f(strings.NewReader("\"open"))
	s.Filename = "FORGE-INJECTED-IFACE-VALUE"
	s.Scan()
	count += s.ErrorCount
	via(&s, strings.NewReader("\"open"))
	s.Filename = "FORGE-INJECTED-GENERIC"
	s.Scan()
	return count + s.ErrorCount
}
`

// TestScannerInitThroughInterfacesStaysOffHostStderr runs scannerInitIndirect in-process with
// os.Stderr captured: nothing may reach the host's standard error, and each scan still counts
// its error, as under wasm.
func TestScannerInitThroughInterfacesStaysOffHostStderr(t *testing.T) {
	runOffStderr(t, scannerInitIndirect, `3`)
}

// TestTestFilesDrawFromTheirOwnRand runs, in a child process started with
// GODEBUG=randautoseed=0 (the process's global math/rand source is then seeded with 1, for the
// host's own deterministic use), an acceptance test that draws from math/rand's top-level
// functions: the host's sequence must go on where it was, not be advanced by the guest's draws.
func TestTestFilesDrawFromTheirOwnRand(t *testing.T) {
	if os.Getenv("FORGE_TEST_RAND_CHILD") == "1" {
		drawBesideTheHost(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestTestFilesDrawFromTheirOwnRand$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "FORGE_TEST_RAND_CHILD=1", "GODEBUG=randautoseed=0")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "child process:\n%s", out)
	require.Contains(t, string(out), "--- PASS: TestTestFilesDrawFromTheirOwnRand", "child process:\n%s", out)
}

func drawBesideTheHost(t *testing.T) {
	// Where the host's global source stands: its next value, found in the seed-1 sequence.
	ref := rand.New(rand.NewSource(1))
	first, found := rand.Int63(), false
	for range 100000 {
		if ref.Int63() == first {
			found = true
			break
		}
	}
	require.True(t, found, "GODEBUG=randautoseed=0 did not seed the global source with 1")

	sb := New(Options{})
	defer sb.Close()
	code := "package artifact\n\nfunc Add(a, b int) int { return a + b }\n"
	tests := "package artifact\n\nimport (\n\t\"math/rand\"\n\t\"testing\"\n)\n\n" +
		"func TestDraw(t *testing.T) { for i := 0; i < 100; i++ { _ = rand.Intn(10) + int(rand.Int63()) + rand.Perm(3)[0] } }\n"
	res, err := sb.Test(context.Background(), sandbox.Source{Code: code}, tests, sandbox.Input{})
	require.NoError(t, err)
	require.Len(t, res, 1)
	require.True(t, res[0].Passed, "%+v", res[0])
	assert.Equal(t, ref.Int63(), rand.Int63(), "guest test code drew from the host's global math/rand source")
}

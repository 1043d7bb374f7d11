package yaegi

import (
	"context"
	"encoding/json"
	"io"
	"os"
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
	sb := New(Options{PoolSize: 1})
	defer sb.Close()
	p := compile(t, sb, scannerInitIndirect)

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
	assert.JSONEq(t, `3`, string(out.Value))
	assert.NotContains(t, string(leaked), "FORGE-INJECTED", "guest text reached the host's stderr")
}

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
	sb := New(Options{PoolSize: 1})
	defer sb.Close()
	p := compile(t, sb, scannerToStderr)

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
	assert.JSONEq(t, `5`, string(out.Value))
	assert.NotContains(t, string(leaked), "FORGE-INJECTED", "guest text reached the host's stderr")
}

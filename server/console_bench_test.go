package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
)

// BenchmarkConsoleTable: a page of the console's artifact table (100 rows, sorted by calls) over
// 10,000 artifacts, against the whole listing of /v1/artifacts as the baseline, in one run:
// go test -run '^$' -bench BenchmarkConsoleTable -count 5 ./server
func BenchmarkConsoleTable(b *testing.B) {
	store := b.TempDir()
	f := openForge(b, store)
	require.True(b, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
	f.Flush()
	src, err := f.Store().Load("text", "upper")
	require.NoError(b, err)
	rs, err := registry.Open(store)
	require.NoError(b, err)
	for i := range 10000 {
		a := *src
		a.Role, a.Method, a.SuccessCount = "bulk", fmt.Sprintf("m%05d", i), int64(i%97)
		data, err := json.Marshal(&a)
		require.NoError(b, err)
		p := rs.ArtifactPath(a.Role, a.Method)
		require.NoError(b, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(b, os.WriteFile(p, data, 0o644))
	}
	rs.Close()
	_, ts := newTestServer(b, f, Options{})
	for _, bc := range []struct{ name, path string }{
		{"page=100,sort=calls", "/v1/artifact-table?sort=calls&desc=1&limit=100"},
		{"baseline=/v1/artifacts", "/v1/artifacts"},
	} {
		fetch := func() {
			resp, err := http.Get(ts.URL + bc.path)
			if err != nil {
				b.Fatal(err)
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Fatalf("%s: %d", bc.path, resp.StatusCode)
			}
			b.SetBytes(n)
		}
		fetch() // the store's index is built on the first listing
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				fetch()
			}
		})
	}
}

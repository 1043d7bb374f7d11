package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/artifactforge/forge/registry/nats/embedded"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
	natsreg "github.com/artifactforge/forge/registry/nats"
)

var lt0 = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// listingStore fills st with what a listing must get right: several roles, healthy, stale and
// candidate artifacts, one with a repair in its history, counters both in the files and in the
// metrics journals, an artifact of a role with no record, a damaged file and a file of a newer
// schema version. dir is st's directory ("" for a store with none: no files are damaged).
func listingStore(t testing.TB, st registry.Backend, dir string) {
	t.Helper()
	_, err := st.PutRole(registry.Contract{Role: "calc", Purpose: "arithmetic", Methods: map[string]string{"add": "func Add(a, b int) int"}}, lt0)
	require.NoError(t, err)
	_, err = st.PutRole(registry.Contract{Role: "zeta", Purpose: "misc"}, lt0)
	require.NoError(t, err)
	fp := map[string]string{}
	for _, r := range []string{"text", "calc", "zeta"} {
		rec, err := st.Role(r)
		require.NoError(t, err)
		fp[r] = rec.Fingerprint
	}
	put := func(role, method string, l registry.Lifecycle, fingerprint string, triggers []string, success, failure int64) {
		_, err := st.Update(role, method, func(a *registry.Artifact, exists bool) error {
			a.Signature = registry.Signature{Func: "F", Decl: "func F(s string) string",
				ParamsSchema: json.RawMessage(`{"type":"object","properties":{"s":{"type":"string"}},"required":["s"]}`)}
			for i, tr := range triggers {
				a.Promote(fmt.Sprintf("package artifact // %s.%s %d", role, method, i), tr, "m", "pv", lt0)
			}
			a.Lifecycle, a.ContractFingerprint = l, fingerprint
			a.SuccessCount, a.FailureCount = success, failure
			return nil
		})
		require.NoError(t, err)
	}
	put("text", "upper", registry.Durable, fp["text"], []string{"initial_forge"}, 5, 1)
	put("text", "lower", registry.Blessed, "sha256:an-older-contract", []string{"initial_forge"}, 2, 0)
	put("text", "title", registry.Candidate, fp["text"], []string{"initial_forge"}, 0, 0)
	put("calc", "add", registry.Durable, fp["calc"], []string{"initial_forge", "repair:intrinsic"}, 9, 3)
	put("zeta", "m", registry.Blessed, fp["zeta"], []string{"initial_forge", "regenerate:contract", "operator:rollback:gen-1"}, 1, 0)
	put("orphan", "x", registry.Durable, "sha256:none", []string{"initial_forge"}, 0, 0)
	rec := st.NewRecorder(time.Hour)
	for i := 0; i < 4; i++ {
		rec.Record("text", "upper", registry.Success, time.Millisecond, "")
	}
	rec.Record("calc", "add", registry.IntrinsicFailure, time.Millisecond, "panic")
	rec.Close()
	if dir == "" { // a store with no directory (the fleet store): no damaged files
		return
	}

	require.NoError(t, os.WriteFile(filepath.Join(dir, "tools", "calc", "broken.json"), []byte(`{"role": "calc", "method_na`), 0o644))
	a, err := st.Load("text", "upper")
	require.NoError(t, err)
	future := *a
	future.Method, future.SchemaVersion = "future", registry.SchemaVersion+1
	data, err := json.Marshal(&future)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tools", "text", "future.json"), data, 0o644))
}

// copyStore copies a store's directory: the same store for two listings (a damaged artifact is
// quarantined by the first listing that reads it).
func copyStore(t testing.TB, from string) string {
	t.Helper()
	to := filepath.Join(t.TempDir(), "copy")
	require.NoError(t, os.CopyFS(to, os.DirFS(from)))
	return to
}

// eachRows is GET /v1/artifacts as it was before it read summaries: every artifact loaded
// (Backend.Each) and a Role lookup per artifact. The reference for the output.
func eachRows(st registry.Backend) ([]artifactRow, error) {
	rows := []artifactRow{}
	err := st.Each(func(k registry.Key, a *registry.Artifact, err error) error {
		row := artifactRow{Role: k.Role, Method: k.Method}
		if err != nil {
			row.Error = err.Error()
		} else {
			row.Lifecycle, row.Generation = string(a.Lifecycle), a.Generation
			row.SuccessCount, row.FailureCount = a.SuccessCount, a.FailureCount
			if len(a.History) > 0 {
				row.Trigger = a.History[0].Trigger
			}
			if rec, rerr := st.Role(k.Role); rerr == nil {
				row.ContractMatch = rec.Fingerprint == a.ContractFingerprint
			}
		}
		rows = append(rows, row)
		return nil
	})
	return rows, err
}

// quarantinedAt is the varying part of a quarantined file's name (its store and timestamp).
var quarantinedAt = regexp.MustCompile(`quarantine/(\S+?)\.\d{8}T\d+[.\dZ]*`)

func normalizeListing(body []byte, dir string) string {
	s := strings.ReplaceAll(string(body), dir, "STORE")
	return quarantinedAt.ReplaceAllString(s, "quarantine/$1.TIME")
}

func TestArtifactsListingFromSummariesMatchesEach(t *testing.T) {
	base := t.TempDir()
	f := openForge(t, base)
	listingStore(t, f.Store(), base)
	before, after := copyStore(t, base), copyStore(t, base)

	fb := openForge(t, before)
	rows, err := eachRows(fb.Store())
	require.NoError(t, err)
	want, err := json.Marshal(rows)
	require.NoError(t, err)

	for _, pass := range []string{"first listing (reads the files)", "second listing (from the index)"} {
		fa := openForge(t, after)
		_, ts := newTestServer(t, fa, Options{})
		resp, err := http.Get(ts.URL + "/v1/artifacts")
		require.NoError(t, err)
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, 200, resp.StatusCode, "%s", got)
		got = []byte(strings.TrimSuffix(string(got), "\n")) // writeJSON's encoder ends the body with one
		// The damaged artifact is quarantined by the first listing (as Each does); the second
		// lists it all the same, from the quarantine (forge.List, as `forge ls` does).
		assert.Equal(t, normalizeListing(want, before), normalizeListing(got, after), pass)
	}

	// What the fixture must contain for the comparison to mean something.
	byKey := map[string]artifactRow{}
	for _, r := range rows {
		byKey[r.Role+"."+r.Method] = r
	}
	assert.Contains(t, byKey["calc.broken"].Error, "quarantine")
	assert.Contains(t, byKey["text.future"].Error, "schema")
	assert.False(t, byKey["text.lower"].ContractMatch, "mismatched contract")
	assert.False(t, byKey["orphan.x"].ContractMatch, "no role record")
	assert.True(t, byKey["text.upper"].ContractMatch)
	assert.Equal(t, int64(9), byKey["text.upper"].SuccessCount, "5 in the file, 4 in the journal")
	assert.Equal(t, "repair:intrinsic", byKey["calc.add"].Trigger)
	assert.Equal(t, "operator:rollback:gen-1", byKey["zeta.m"].Trigger)
	assert.Len(t, rows, 8)
}

// The fleet store (NATS JetStream) lists the same through summaries as through every artifact.
func TestArtifactsListingOnTheFleetStore(t *testing.T) {
	url, stop, err := embedded.Start(t.TempDir())
	require.NoError(t, err)
	defer stop()
	f := openForgeAt(t, url+"/listing", t.TempDir())
	listingStore(t, f.Store(), "")
	_, ok := f.Store().(*natsreg.FleetStore)
	require.True(t, ok)
	rows, err := eachRows(f.Store())
	require.NoError(t, err)
	want, err := json.Marshal(rows)
	require.NoError(t, err)
	require.Len(t, rows, 6)
	assert.Equal(t, "repair:intrinsic", rows[0].Trigger)

	_, ts := newTestServer(t, f, Options{})
	resp, err := http.Get(ts.URL + "/v1/artifacts")
	require.NoError(t, err)
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode, "%s", got)
	assert.Equal(t, string(want)+"\n", string(got))
}

// benchListing writes a store of n artifacts (n/100 roles of 100 methods, three generations of
// about 400 bytes of code each, a params schema) straight to its files, as registry's benchmarks do.
func benchListing(b *testing.B, n int) (*Server, registry.Backend) {
	dir := b.TempDir()
	f := openForge(b, dir)
	st := f.Store()
	ds, ok := st.(*registry.Store)
	require.True(b, ok)
	rec, err := st.Role("text")
	require.NoError(b, err)
	body := strings.Repeat("\tx = strings.ToUpper(x) // padding to a realistic method size\n", 6)
	for i := 0; i < n; i++ {
		role := "text"
		if r := i / 100; r > 0 {
			role = fmt.Sprintf("role_%03d", r)
		}
		method := fmt.Sprintf("method_%03d", i%100)
		a := &registry.Artifact{SchemaVersion: registry.SchemaVersion, Role: role, Method: method, ContractFingerprint: rec.Fingerprint,
			Signature: registry.Signature{Func: "Method", Decl: "func Method(x string) string",
				ParamsSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","additionalProperties":false,"properties":{"x":{"type":"string"}},"required":["x"],"type":"object"}`)}}
		for g, tr := range []string{"initial_forge", "repair:intrinsic", "regenerate:contract"} {
			a.Promote(fmt.Sprintf("package artifact\n\nimport \"strings\"\n\n// gen %d\nfunc Method(x string) string {\n%s\treturn x\n}\n", g, body), tr, "bench-model", "pv1", lt0)
		}
		a.Lifecycle = registry.Durable
		data, err := a.Encode()
		require.NoError(b, err)
		require.NoError(b, os.MkdirAll(filepath.Dir(ds.ArtifactPath(role, method)), 0o755))
		require.NoError(b, os.WriteFile(ds.ArtifactPath(role, method), data, 0o644))
	}
	s := New(f, Options{Logger: quietLogger()})
	b.Cleanup(s.CloseStreams)
	return s, st
}

// BenchmarkArtifactsListing1000 is GET /v1/artifacts on 1,000 artifacts through the handler, as
// it is (summaries: the role indexes, a Role lookup per role) and as it was (each: every artifact
// file read and decoded, a Role lookup per artifact), on the same store in the same run.
func BenchmarkArtifactsListing1000(b *testing.B) {
	s, st := benchListing(b, 1000)
	req, err := http.NewRequest("GET", "/v1/artifacts", nil)
	require.NoError(b, err)
	b.Run("summaries", func(b *testing.B) {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req) // the first listing builds the indexes (the files were written directly)
		require.Equal(b, 200, w.Code, w.Body.String())
		time.Sleep(registry.IndexSettle + 10*time.Millisecond)
		s.ServeHTTP(httptest.NewRecorder(), req) // ... and records the settled directory stamps
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			w := httptest.NewRecorder()
			s.ServeHTTP(w, req)
			if w.Code != 200 || w.Body.Len() < 1000*100 {
				b.Fatal(w.Code, w.Body.Len())
			}
		}
	})
	b.Run("each", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			w := httptest.NewRecorder()
			rows, err := eachRows(st)
			if err != nil {
				b.Fatal(err)
			}
			writeJSON(w, 200, rows)
			if w.Body.Len() < 1000*100 {
				b.Fatal(w.Body.Len())
			}
		}
	})
}

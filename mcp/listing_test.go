package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/registry"
)

var lt0 = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// listingStore fills st (directory dir) with what the tool list and forge_artifacts must get
// right: several roles; durable, blessed, candidate and degraded artifacts; a stale contract; a
// role whose contract names the method and one that does not (the artifact's Decl is then
// shown); no params schema (the fallback schema); a history with a repair; an artifact of a role
// with no record; a damaged file and a file of a newer schema version.
func listingStore(t *testing.T, st registry.Backend, dir string) {
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
	schema := json.RawMessage(`{"type":"object","properties":{"s":{"type":"string"}},"required":["s"]}`)
	put := func(role, method string, l registry.Lifecycle, fingerprint string, schema json.RawMessage, generations int) {
		_, err := st.Update(role, method, func(a *registry.Artifact, exists bool) error {
			a.Signature = registry.Signature{Func: "F", Decl: "func F(s string) string", ParamsSchema: schema}
			for i := 0; i < generations; i++ {
				tr := "initial_forge"
				if i > 0 {
					tr = "repair:intrinsic"
				}
				a.Promote(fmt.Sprintf("package artifact // %s.%s %d", role, method, i), tr, "m", "pv", lt0)
			}
			a.Lifecycle, a.ContractFingerprint = l, fingerprint
			return nil
		})
		require.NoError(t, err)
	}
	put("text", "upper", registry.Durable, fp["text"], schema, 1)
	put("text", "lower", registry.Blessed, "sha256:an-older-contract", schema, 1)
	put("text", "title", registry.Candidate, fp["text"], schema, 1)
	put("text", "trim", registry.Degraded, fp["text"], schema, 2)
	put("calc", "add", registry.Durable, fp["calc"], json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}}}`), 2)
	put("zeta", "m", registry.Blessed, fp["zeta"], nil, 3)
	put("orphan", "x", registry.Durable, "sha256:none", schema, 1)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "tools", "calc", "broken.json"), []byte(`{"role": "calc", "method_na`), 0o644))
	a, err := st.Load("text", "upper")
	require.NoError(t, err)
	future := *a
	future.Method, future.SchemaVersion, future.Lifecycle = "future", registry.SchemaVersion+1, registry.Blessed
	data, err := json.Marshal(&future)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tools", "text", "future.json"), data, 0o644))
}

func copyStore(t *testing.T, from string) string {
	t.Helper()
	to := filepath.Join(t.TempDir(), "copy")
	require.NoError(t, os.CopyFS(to, os.DirFS(from)))
	return to
}

// eachWant is Sync's tool set computed from every artifact loaded (Backend.Each) rather than
// the summaries. The reference.
func eachWant(st registry.Backend) (map[string]toolState, error) {
	var sums []registry.Summary
	err := st.Each(func(k registry.Key, a *registry.Artifact, err error) error {
		if err != nil {
			return nil
		}
		sums = append(sums, registry.Summary{Role: k.Role, Method: k.Method, Lifecycle: a.Lifecycle, Generation: a.Generation,
			ContractFingerprint: a.ContractFingerprint, Decl: a.Signature.Decl, ParamsSchema: a.Signature.ParamsSchema})
		return nil
	})
	if err != nil {
		return nil, err
	}
	roles, err := st.Roles()
	if err != nil {
		return nil, err
	}
	return toolStates(forge.BuildToolSpecs(roles, sums)), nil
}

// eachArtifacts is forge_artifacts' result as it was before it read summaries. The reference.
func eachArtifacts(st registry.Backend) (string, error) {
	type row struct {
		Role       string `json:"role"`
		Method     string `json:"method"`
		Lifecycle  string `json:"lifecycle,omitempty"`
		Generation int    `json:"generation,omitempty"`
		Error      string `json:"error,omitempty"`
	}
	rows := []row{}
	err := st.Each(func(k registry.Key, a *registry.Artifact, err error) error {
		if err != nil {
			rows = append(rows, row{Role: k.Role, Method: k.Method, Error: err.Error()})
		} else {
			rows = append(rows, row{k.Role, k.Method, string(a.Lifecycle), a.Generation, ""})
		}
		return nil
	})
	b, _ := json.Marshal(map[string]any{"artifacts": rows})
	return string(b), err
}

// assertSameTools compares two tool sets: the same names, keys and descriptions, and schemas
// that are the same JSON (an artifact file holds its schema indented, a summary compact; the
// SDK sends either compact).
func assertSameTools(t *testing.T, want, got map[string]toolState) {
	t.Helper()
	names := func(m map[string]toolState) []string {
		var out []string
		for n := range m {
			out = append(out, n)
		}
		sort.Strings(out)
		return out
	}
	require.Equal(t, names(want), names(got))
	for n, w := range want {
		g := got[n]
		assert.Equal(t, w.key, g.key, n)
		assert.Equal(t, w.told.description, g.told.description, n)
		assert.JSONEq(t, w.told.input, g.told.input, n)
		assert.JSONEq(t, w.told.output, g.told.output, n)
	}
}

func TestToolListAndArtifactsFromSummariesMatchEach(t *testing.T) {
	base := t.TempDir()
	f := openForge(t, base)
	listingStore(t, f.Store(), base)
	before, after := copyStore(t, base), copyStore(t, base)

	// As before: Sync's Each (which quarantines the damaged file), then forge_artifacts' Each.
	fb := openForge(t, before)
	want, err := eachWant(fb.Store())
	require.NoError(t, err)
	wantRows, err := eachArtifacts(fb.Store())
	require.NoError(t, err)

	fa := openForge(t, after)
	s, err := New(fa, Options{}) // Sync, from summaries
	require.NoError(t, err)
	defer s.Close()
	s.mu.Lock()
	synced := map[string]toolState{}
	for n, ts := range s.methods {
		synced[n] = ts
	}
	s.mu.Unlock()
	assertSameTools(t, want, synced)
	again, err := s.wantTools() // from the index this time
	require.NoError(t, err)
	assertSameTools(t, want, again)

	// What the fixture must contain for the comparison to mean something: every declared
	// method (text.lower's artifact is stale, it is listed all the same: its next call repairs
	// it), and the healthy current methods of a role that declares none.
	require.Len(t, want, 4, "text.upper, text.lower, calc.add, zeta.m: %v", want)
	assert.Equal(t, "Method m of role zeta: misc. Go signature: func F(s string) string.", want["zeta__m"].def.Description, "the Decl when the contract has none")
	assert.Equal(t, "Method add of role calc: arithmetic. Go signature: func Add(a, b int) int.", want["calc__add"].def.Description)
	assert.JSONEq(t, `{"type":"object"}`, string(want["zeta__m"].def.InputSchema.(json.RawMessage)))

	// Over the protocol: the tool list and forge_artifacts.
	st, ct := sdk.NewInMemoryTransports()
	ss, err := s.SDK().Connect(context.Background(), st, nil)
	require.NoError(t, err)
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t"}, nil).Connect(context.Background(), ct, nil)
	require.NoError(t, err)
	defer cs.Close()
	tools := listTools(t, cs)
	for n, w := range want {
		require.Contains(t, tools, n)
		assert.Equal(t, w.def.Description, tools[n].Description)
		schema, err := json.Marshal(tools[n].InputSchema)
		require.NoError(t, err)
		assert.JSONEq(t, string(w.def.InputSchema.(json.RawMessage)), string(schema), n)
	}
	for n := range tools {
		if _, ok := want[n]; !ok {
			assert.Regexp(t, `^forge_`, n, "only the fixed tools besides the methods")
		}
	}
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "forge_artifacts", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%+v", res.Content)
	got := strings.ReplaceAll(res.Content[0].(*sdk.TextContent).Text, after, before)
	assert.Contains(t, wantRows, `"method":"future"`)
	assert.Contains(t, wantRows, "incompatible schema version")
	assert.NotContains(t, wantRows, `"method":"broken"`, "Each: quarantined by the first listing, gone from the next")
	// forge_artifacts lists it all the same, from the quarantine (forge.List, as `forge ls` and
	// /v1/artifacts do); the other rows are Each's.
	var rows struct {
		Artifacts []map[string]any `json:"artifacts"`
	}
	require.NoError(t, json.Unmarshal([]byte(got), &rows))
	var broken map[string]any
	kept := rows.Artifacts[:0]
	for _, r := range rows.Artifacts {
		if r["method"] == "broken" {
			broken = r
			continue
		}
		kept = append(kept, r)
	}
	require.NotNil(t, broken, "the quarantined artifact is listed: %s", got)
	assert.Equal(t, "quarantined", broken["lifecycle"])
	assert.Contains(t, broken["error"], "quarantine")
	k, _ := json.Marshal(map[string]any{"artifacts": kept})
	assert.JSONEq(t, wantRows, string(k))
}

// BenchmarkToolSet1000 is the tool set Sync computes, on 1,000 declared methods of role text
// (each signature parsed for its schemas) with durable artifacts whose contract is current (three generations of about 400 bytes of code each, a params schema):
// as it is (summaries: the role index, one Role lookup) and as it was (each: every artifact file
// read and decoded), on the same store in the same run.
func BenchmarkToolSet1000(b *testing.B) {
	dir := b.TempDir()
	f := openForge(b, dir)
	ds, ok := f.Store().(*registry.Store)
	require.True(b, ok)
	methods := map[string]string{}
	for i := 0; i < 1000; i++ {
		methods[fmt.Sprintf("method_%04d", i)] = fmt.Sprintf("func Method%04d(x string) string", i)
	}
	require.NoError(b, f.AddRole(registry.Contract{Role: "text", Purpose: "string utilities", Methods: methods}))
	rec, err := f.Store().Role("text")
	require.NoError(b, err)
	body := strings.Repeat("\tx = strings.ToUpper(x) // padding to a realistic method size\n", 6)
	require.NoError(b, os.MkdirAll(filepath.Dir(ds.ArtifactPath("text", "m")), 0o755))
	for i := 0; i < 1000; i++ {
		method := fmt.Sprintf("method_%04d", i)
		a := &registry.Artifact{SchemaVersion: registry.SchemaVersion, Role: "text", Method: method, ContractFingerprint: rec.Fingerprint,
			Signature: registry.Signature{Func: "Method", Decl: "func Method(x string) string",
				ParamsSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","additionalProperties":false,"properties":{"x":{"type":"string"}},"required":["x"],"type":"object"}`)}}
		for g, tr := range []string{"initial_forge", "repair:intrinsic", "regenerate:contract"} {
			a.Promote(fmt.Sprintf("package artifact\n\nimport \"strings\"\n\n// gen %d\nfunc Method(x string) string {\n%s\treturn x\n}\n", g, body), tr, "bench-model", "pv1", lt0)
		}
		a.Lifecycle = registry.Durable
		data, err := a.Encode()
		require.NoError(b, err)
		require.NoError(b, os.WriteFile(ds.ArtifactPath("text", method), data, 0o644))
	}
	s, err := New(f, Options{}) // its Sync builds the index
	require.NoError(b, err)
	defer s.Close()
	time.Sleep(registry.IndexSettle + 10*time.Millisecond)
	_, err = s.wantTools() // records the settled directory stamp
	require.NoError(b, err)
	b.Run("summaries", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			want, err := s.wantTools()
			if err != nil || len(want) != 1000 {
				b.Fatal(err, len(want))
			}
		}
	})
	b.Run("each", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			want, err := eachWant(f.Store())
			if err != nil || len(want) != 1000 {
				b.Fatal(err, len(want))
			}
		}
	})
}

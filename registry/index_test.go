package registry

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIndexEntryRoundTripsTriggerAndSchema(t *testing.T) {
	used := t0.Add(time.Hour)
	for _, tc := range []struct{ name, trigger, schema string }{
		{"compact", "initial_forge", `{"type":"object","properties":{"s":{"type":"string"}},"required":["s"]}`},
		{"indented", "repair:intrinsic", "{\n\t\"type\": \"object\"\n}"},
		{"starts with a quote", "operator:rollback:gen-3", `"not a schema"`},
		{"tab in trigger, no schema", "regenerate:a\tb", ""},
		{"nothing", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sm := Summary{Role: "r", Method: "m", Lifecycle: Durable, Generation: 3, ContractFingerprint: "fp",
				RuntimeVersion: "rv", CodeChecksum: "sha256:x", Decl: "func M(s string) string", Trigger: tc.trigger,
				CreatedAt: t0, LastUsedAt: &used, Stamp: indexStamp{Ino: 7, Mtime: 8, Size: 9}}
			if tc.schema != "" {
				sm.ParamsSchema = json.RawMessage(tc.schema)
			}
			line := encodeEntry(nil, &sm)
			require.Equal(t, 1, strings.Count(string(line), "\n"), "one line: %q", line)
			var got Summary
			require.True(t, decodeEntry("r", strings.TrimSuffix(string(line), "\n"), &got), "%q", line)
			assert.Equal(t, sm, got)
		})
	}
}

// An index written by the previous forge (format 1: no "format" in the header, 24 fields, no
// Trigger or ParamsSchema) is rebuilt from the files on the first listing, even when its directory
// stamp still matches (which would otherwise make it trusted whole).
func TestFormat1IndexIsRebuiltOnRead(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	schema := `{"type":"object","properties":{"s":{"type":"string"}},"required":["s"]}`
	for _, m := range []string{"lower", "upper"} {
		_, err := s.Update("text", m, func(a *Artifact, exists bool) error {
			a.Signature = Signature{Func: "F", Decl: "func F(s string) string", ParamsSchema: json.RawMessage(schema)}
			a.Promote("package artifact // "+m, "repair:adaptive", "test-model", "pv1", t0)
			return nil
		})
		require.NoError(t, err)
	}
	time.Sleep(IndexSettle + 10*time.Millisecond)
	dst, err := stampOf(s.toolsDir("text"))
	require.NoError(t, err)
	var old strings.Builder
	fmt.Fprintf(&old, `{"layout":%d,"role":"text","dir":{"ino":%d,"mtime":%d,"size":%d}}`+"\n", Layout, dst.ino, dst.mtime, dst.size)
	for _, m := range []string{"lower", "upper"} {
		st, err := stampOf(s.ArtifactPath("text", m))
		require.NoError(t, err)
		// The format-1 line, field by field: method, lifecycle, generation, fingerprint, runtime,
		// checksum, decl, failure class, created, last used, 8 counters, recent, rate, applied,
		// ino, mtime, size.
		fmt.Fprintf(&old, "%s\tcandidate\t1\t\"fp\"\t\"rv\"\t\"sha256:old\"\t\"func F(s string) string\"\t\"\"\t%d\t\t0\t0\t0\t0\t0\t0\t0\t0\t\"\"\t0\t\t%d\t%d\t%d\n",
			m, t0.UnixNano(), st.ino, st.mtime, st.size)
	}
	require.NoError(t, os.WriteFile(s.indexPath("text"), []byte(old.String()), 0o644))
	_, _, ok := s.readIndex("text", nil)
	require.False(t, ok, "a format-1 index is not used")

	sums, err := s.Summaries()
	require.NoError(t, err)
	require.Len(t, sums, 2)
	for _, sm := range sums {
		assert.Equal(t, "repair:adaptive", sm.Trigger)
		assert.JSONEq(t, schema, string(sm.ParamsSchema))
		assert.NotEqual(t, "sha256:old", sm.CodeChecksum, "read from the file")
	}
	h, list, ok := s.readIndex("text", nil)
	require.True(t, ok, "the index was rewritten in the current format")
	assert.Equal(t, indexFormat, h.Format)
	require.Len(t, list, 2)
	assert.Equal(t, "repair:adaptive", list[1].Trigger)
	assert.JSONEq(t, schema, string(list[1].ParamsSchema))
	data, err := os.ReadFile(filepath.Join(s.Root(), indexDir, "text.json"))
	require.NoError(t, err)
	assert.Contains(t, string(data), `"format":2`)
}

// A forge of format 1 requires exactly 24 tab-separated fields per line and rebuilds an index
// whose lines have any other count; a format-2 line must therefore never have 24.
func TestFormat2LinesAreNotFormat1Lines(t *testing.T) {
	sm := Summary{Method: "m", Lifecycle: Durable}
	for _, schema := range []string{"", `{"type":"object"}`} {
		sm.ParamsSchema = json.RawMessage(schema)
		line := strings.TrimSuffix(string(encodeEntry(nil, &sm)), "\n")
		assert.Equal(t, indexFields, len(strings.Split(line, "\t")))
		assert.NotEqual(t, 24, indexFields)
	}
}

func TestSummariesMatchTheArtifacts(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	newArtifact(t, s, "r", "a", "package artifact // a")
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)
	_, err = s.Update("r", "b", func(a *Artifact, exists bool) error {
		a.Signature = Signature{Func: "B", Decl: "func B(n int) int", ParamsSchema: schema}
		a.Promote("package artifact // b1", "initial_forge", "m", "pv", t0)
		a.Promote("package artifact // b2", "regenerate:contract", "m", "pv", t0)
		return nil
	})
	require.NoError(t, err)
	for _, fresh := range []bool{true, false} { // from the files, then from the index
		if fresh {
			require.NoError(t, os.RemoveAll(filepath.Join(s.Root(), indexDir)))
		}
		o, err := Open(s.Root())
		require.NoError(t, err)
		sums, err := o.Summaries()
		require.NoError(t, err)
		require.Len(t, sums, 2, "fresh=%v", fresh)
		require.NoError(t, o.Each(func(k Key, a *Artifact, err error) error {
			require.NoError(t, err)
			sm := sums[0]
			if k.Method == "b" {
				sm = sums[1]
			}
			assert.Equal(t, a.History[0].Trigger, sm.Trigger)
			if k.Method == "a" {
				assert.Empty(t, sm.ParamsSchema)
				return nil
			}
			assert.JSONEq(t, string(a.Signature.ParamsSchema), string(sm.ParamsSchema))
			assert.Equal(t, string(schema), string(sm.ParamsSchema), "compact, whichever path it came by")
			return nil
		}))
		assert.Equal(t, "regenerate:contract", sums[1].Trigger)
	}
}

// benchStore10kSchema writes benchStore10k's store with every artifact's params schema set, in dir.
func benchStore10kSchema(b *testing.B, dir, schema string) {
	s, err := Open(dir)
	require.NoError(b, err)
	for r := 0; r < 100; r++ {
		role := fmt.Sprintf("role_%03d", r)
		require.NoError(b, os.MkdirAll(filepath.Join(dir, "tools", role), 0o755))
		for m := 0; m < 100; m++ {
			method := fmt.Sprintf("method_%03d", m)
			a := &Artifact{SchemaVersion: SchemaVersion, Role: role, Method: method, Lifecycle: Durable,
				Signature: Signature{Func: "Method", Decl: "func Method(s string) string", ParamsSchema: json.RawMessage(schema)}}
			a.Promote(fmt.Sprintf("package artifact\n\n// %s.%s\nfunc Method(s string) string {\n\treturn s + %q\n}\n", role, method, method),
				"initial_forge", "bench-model", "pv1", time.Now())
			data, err := a.Encode()
			require.NoError(b, err)
			require.NoError(b, os.WriteFile(s.ArtifactPath(role, method), data, 0o644))
		}
	}
}

// BenchmarkSummaries10kSchema is the settled-index listing of 10,000 artifacts (Open and
// Summaries, as BenchmarkList10k/index) with no params schema, a one-string-parameter schema
// (sandbox's output for func(s string), 150 bytes) and a 1 KB schema (a struct parameter), to
// decide whether the schema belongs in the index. It reports the index's bytes per artifact.
func BenchmarkSummaries10kSchema(b *testing.B) {
	props := make([]string, 0, 24)
	for i := 0; i < 24; i++ {
		props = append(props, fmt.Sprintf(`"field_%02d":{"type":"string"}`, i))
	}
	for _, tc := range []struct{ name, schema string }{
		{"none", ""},
		{"150B", `{"$schema":"https://json-schema.org/draft/2020-12/schema","additionalProperties":false,"properties":{"s":{"type":"string"}},"required":["s"],"type":"object"}`},
		{"1KB", `{"$schema":"https://json-schema.org/draft/2020-12/schema","additionalProperties":false,"properties":{"in":{"type":"object","properties":{` + strings.Join(props, ",") + `}}},"required":["in"],"type":"object"}`},
	} {
		dir := filepath.Join(b.TempDir(), tc.name) // the parent's: kept across the sub-benchmark's runs
		benchStore10kSchema(b, dir, tc.schema)
		b.Run(tc.name, func(b *testing.B) {
			s, err := Open(dir)
			require.NoError(b, err)
			_, err = s.Summaries() // builds the indexes
			require.NoError(b, err)
			time.Sleep(IndexSettle + 10*time.Millisecond)
			_, err = s.Summaries() // records the settled directory stamps
			require.NoError(b, err)
			var size int64
			for r := 0; r < 100; r++ {
				fi, err := os.Stat(s.indexPath(fmt.Sprintf("role_%03d", r)))
				require.NoError(b, err)
				size += fi.Size()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s, err := Open(dir)
				if err != nil {
					b.Fatal(err)
				}
				sums, err := s.Summaries()
				if err != nil || len(sums) != 10000 || len(sums[9999].ParamsSchema) != len(tc.schema) {
					b.Fatal(err, len(sums))
				}
			}
			b.ReportMetric(float64(size)/10000, "index-B/artifact")
		})
	}
}

func TestDecodeHeader(t *testing.T) {
	for _, h := range []indexHeader{
		{Layout: Layout, Format: indexFormat, Role: "r0001", Dir: indexStamp{Ino: 10117406, Mtime: 1795699665104723221, Size: 4096}},
		{Layout: Layout, Format: indexFormat, Role: "billing"},
		{Layout: 1, Role: "old"}, // format 1: no "format" field, read by encoding/json
	} {
		line, err := json.Marshal(h)
		require.NoError(t, err)
		var got indexHeader
		require.True(t, decodeHeader(line, &got), "%s", line)
		assert.Equal(t, h, got, "%s", line)
	}
	var got indexHeader
	assert.False(t, decodeHeader([]byte(`{"layout":2,"format":2,"role":"r","dir":{"ino":1,"mtime":x,"size":3}}`), &got))
	assert.False(t, decodeHeader([]byte(`{"layout":2,`), &got))
	assert.True(t, decodeHeader([]byte(`{"role":"r","layout":2}`), &got), "another order: encoding/json")
	assert.Equal(t, indexHeader{Layout: 2, Role: "r"}, got)
}

func TestDecodeHeaderEscapedRole(t *testing.T) {
	var got indexHeader
	require.True(t, decodeHeader([]byte(`{"layout":2,"format":2,"role":"a\"b","dir":{"ino":1,"mtime":2,"size":3}}`), &got))
	assert.Equal(t, `a"b`, got.Role, "an escaped role is read by encoding/json")
}

// An artifact this forge cannot read (a newer schema) stays listed, with its error, after the
// role's directory has settled: the index holds readable artifacts only, so a settled index used
// to hide it from every listing.
func TestUnreadableArtifactStaysListedAfterTheIndexSettles(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	newArtifact(t, s, "r", "good", "package artifact // good")
	newArtifact(t, s, "r", "future", "package artifact // future")
	p := s.ArtifactPath("r", "future")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), `"schema_version": 1`, `"schema_version": 2`, 1)), 0o644))
	list := func() map[string]error {
		sms, err := s.Summaries()
		require.NoError(t, err)
		got := map[string]error{}
		for _, sm := range sms {
			got[sm.Method] = sm.Err
		}
		return got
	}
	for round := range 3 { // unsettled, then settled twice (the second reads the index written by the first)
		time.Sleep(IndexSettle + 20*time.Millisecond)
		got := list()
		require.Contains(t, got, "future", "round %d", round)
		assert.ErrorIs(t, got["future"], ErrIncompatible, "round %d", round)
		assert.NoError(t, got["good"], "round %d", round)
	}
	other, err := Open(s.Root()) // another handle reads the index the first one wrote
	require.NoError(t, err)
	sms, err := other.Summaries()
	require.NoError(t, err)
	require.Len(t, sms, 2)
	assert.ErrorIs(t, sms[0].Err, ErrIncompatible)
}

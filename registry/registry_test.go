package registry

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

func TestValidateName(t *testing.T) {
	long := strings.Repeat("a", 64)
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"text", true}, {"a", true}, {"has_close_elements", true}, {"v2_tools", true}, {long, true},
		{"", false}, {long + "a", false}, {"Text", false}, {"1abc", false}, {"_a", false},
		{"a/b", false}, {"..", false}, {"../etc", false}, {"a.b", false}, {"a-b", false}, {"a b", false},
		{"a\\b", false}, {"a\x00b", false}, {"ａ", false}, {"tеxt", false} /* Cyrillic е */, {"a\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateName("role", tc.name)
			if tc.ok {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, ErrInvalidName)
				assert.Contains(t, err.Error(), "lower-case letters")
			}
		})
	}
}

func TestInvalidNamesWriteNothing(t *testing.T) {
	root := t.TempDir()
	s, err := Open(root)
	require.NoError(t, err)
	for _, bad := range []string{"../evil", "a/b", "", "A", ".."} {
		_, err := s.PutRole(Contract{Role: bad, Purpose: "x"}, t0)
		assert.ErrorIs(t, err, ErrInvalidName, bad)
		_, err = s.Update("ok", bad, func(*Artifact, bool) error { return nil })
		assert.ErrorIs(t, err, ErrInvalidName, bad)
		_, err = s.Update(bad, "ok", func(*Artifact, bool) error { return nil })
		assert.ErrorIs(t, err, ErrInvalidName, bad)
		_, err = s.Load(bad, "ok")
		assert.ErrorIs(t, err, ErrInvalidName, bad)
	}
	entries, _ := os.ReadDir(filepath.Join(root, "tools"))
	assert.Empty(t, entries)
	_, err = os.Stat(filepath.Join(root, "registry.json"))
	assert.True(t, os.IsNotExist(err))
	_, err = os.Stat(filepath.Join(filepath.Dir(root), "evil"))
	assert.True(t, os.IsNotExist(err))
}

func TestDecodeContract(t *testing.T) {
	for _, tc := range []struct {
		name, json, errHas string
	}{
		{"minimal", `{"role":"text","purpose":"string tools"}`, ""},
		{"full", `{"role":"text","purpose":"p","methods":{"upper":"func Upper(s string) string"},
		  "deliverable":{"type":"string"},"acceptance":{"examples":[{"method":"upper","args":{"s":"a"},"expect":"A"}],
		  "tests":"package artifact\nimport \"testing\"\nfunc TestX(t *testing.T){}"},
		  "capabilities":{"http":{"allow":["api.example.com"],"max_bytes":1000,"timeout":"2s"},"log":true},
		  "sandbox":"wasm","limits":{"timeout":"2s","memory":"256MB","output":"1MiB","isolation":"process"},
		  "failure_policy":{"max_repairs_before_regen":2}}`, ""},
		{"unknown field", `{"role":"text","purpose":"p","capabilites":{}}`, "unknown field"},
		{"not json", `{"role":`, "invalid contract"},
		{"trailing", `{"role":"text","purpose":"p"} {}`, "trailing"},
		{"bad role", `{"role":"Text","purpose":"p"}`, "lower-case"},
		{"no purpose", `{"role":"text","purpose":"  "}`, "purpose is empty"},
		{"bad method name", `{"role":"text","purpose":"p","methods":{"Up":""}}`, "method name"},
		{"bad signature", `{"role":"text","purpose":"p","methods":{"up":"upper(s)"}}`, "signature"},
		{"bad deliverable", `{"role":"text","purpose":"p","deliverable":{"type":12}}`, "deliverable"},
		{"bad sandbox", `{"role":"text","purpose":"p","sandbox":"Docker VM"}`, "sandbox"},
		{"bad timeout", `{"role":"text","purpose":"p","limits":{"timeout":"soon"}}`, "limits.timeout"},
		{"bad memory", `{"role":"text","purpose":"p","limits":{"memory":"lots"}}`, "limits.memory"},
		{"bad isolation", `{"role":"text","purpose":"p","limits":{"isolation":"vm"}}`, "isolation"},
		{"url as host", `{"role":"text","purpose":"p","capabilities":{"http":{"allow":["https://x.com/"]}}}`, "host names"},
		{"example bad method", `{"role":"text","purpose":"p","methods":{"a":""},"acceptance":{"examples":[{"method":"b","args":[],"expect":1}]}}`, "not in methods"},
		{"example no args", `{"role":"text","purpose":"p","acceptance":{"examples":[{"expect":1}]}}`, "args"},
		{"tests do not parse", `{"role":"text","purpose":"p","acceptance":{"tests":"func {"}}`, "do not parse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := DecodeContract([]byte(tc.json))
			if tc.errHas == "" {
				require.NoError(t, err)
				assert.Equal(t, "text", c.Role)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalidContract)
			assert.Contains(t, err.Error(), tc.errHas)
		})
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"256MB": 256 << 20, "1MiB": 1 << 20, "64k": 64 << 10, "10": 10, "2G": 2 << 30, " 3 kb ": 3 << 10} {
		got, err := ParseSize(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "MB", "-1MB", "0", "1.5MB", "12XB", "99999999999999999999"} {
		_, err := ParseSize(bad)
		assert.Error(t, err, bad)
	}
}

func TestFingerprint(t *testing.T) {
	a, err := DecodeContract([]byte(`{"role":"r","purpose":"p","deliverable":{"type":"object","required":["a"]}}`))
	require.NoError(t, err)
	b, err := DecodeContract([]byte(`{ "deliverable": {"required": ["a"], "type": "object"}, "purpose":"p", "role":"r" }`))
	require.NoError(t, err)
	assert.Equal(t, a.Fingerprint(), b.Fingerprint(), "key order and whitespace must not matter")
	assert.True(t, strings.HasPrefix(a.Fingerprint(), "sha256:"))
	c := a
	c.Purpose = "other"
	assert.NotEqual(t, a.Fingerprint(), c.Fingerprint())
	d := a
	d.Limits = &Limits{Timeout: "1s"}
	assert.NotEqual(t, a.Fingerprint(), d.Fingerprint())
}

func TestPromoteKeepsThreeGenerations(t *testing.T) {
	a := &Artifact{Role: "r", Method: "m", Lifecycle: Candidate}
	for i := 1; i <= 5; i++ {
		a.Promote("package artifact\n// v"+string(rune('0'+i)), "initial_forge", "m", "pv", t0.Add(time.Duration(i)*time.Minute))
	}
	assert.Equal(t, 5, a.Generation)
	require.Len(t, a.History, MaxHistory)
	assert.Equal(t, []string{"gen-5", "gen-4", "gen-3"}, []string{a.History[0].ID, a.History[1].ID, a.History[2].ID})
	assert.Equal(t, "gen-4", a.History[0].ParentID)
	assert.Equal(t, Checksum(a.Code), a.CodeChecksum)
	assert.Equal(t, t0.Add(time.Minute), a.CreatedAt, "created_at is the first generation's")

	require.NoError(t, a.Rollback(3, t0))
	assert.Equal(t, 6, a.Generation)
	assert.Equal(t, "package artifact\n// v3", a.Code)
	assert.Equal(t, "operator:rollback:gen-3", a.History[0].Trigger)

	err := a.Rollback(1, t0)
	assert.ErrorIs(t, err, ErrNoGeneration)
	assert.Contains(t, err.Error(), "forge regen")
	require.NoError(t, a.Rollback(0, t0), "0 = the previous generation")
	assert.Equal(t, "package artifact\n// v5", a.Code)

	assert.Error(t, a.Rollback(a.Generation, t0), "already there")
	a.Lifecycle = Quarantined
	gen := a.Generation
	require.NoError(t, a.Rollback(gen, t0), "the current generation lifts a quarantine")
	assert.Equal(t, Durable, a.Lifecycle)
	assert.Equal(t, gen, a.Generation)
}

func newArtifact(t *testing.T, s *Store, role, method, code string) *Artifact {
	t.Helper()
	a, err := s.Update(role, method, func(a *Artifact, exists bool) error {
		a.Promote(code, "initial_forge", "test-model", "pv1", t0)
		return nil
	})
	require.NoError(t, err)
	return a
}

func TestStoreRoundTrip(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	_, err = s.PutRole(Contract{Role: "text", Purpose: "string tools"}, t0)
	require.NoError(t, err)
	a := newArtifact(t, s, "text", "upper", "package artifact\nfunc Upper(s string) string { return s }")

	got, ok := s.Lookup("text", "upper")
	require.True(t, ok)
	assert.Same(t, a, got)

	s2, err := Open(s.Root()) // another process's view
	require.NoError(t, err)
	_, ok = s2.Lookup("text", "upper")
	assert.False(t, ok, "Lookup is memory only")
	loaded, err := s2.Load("text", "upper")
	require.NoError(t, err)
	assert.Equal(t, a.Code, loaded.Code)
	assert.Equal(t, 1, loaded.Generation)
	r, err := s2.Role("text")
	require.NoError(t, err)
	assert.Equal(t, "string tools", r.Purpose)
	assert.Equal(t, r.Contract.Fingerprint(), r.Fingerprint)

	_, err = s2.Load("text", "lower")
	assert.ErrorIs(t, err, ErrNotFound)
	_, err = s2.Role("nope")
	assert.ErrorIs(t, err, ErrNotFound)
	assert.Contains(t, err.Error(), "forge role add")

	keys, err := s2.List()
	require.NoError(t, err)
	assert.Equal(t, []Key{{"text", "upper"}}, keys)
}

func TestUpdateErrorWritesNothing(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	newArtifact(t, s, "r", "m", "package artifact\n// one")
	before, err := os.ReadFile(s.ArtifactPath("r", "m"))
	require.NoError(t, err)
	_, err = s.Update("r", "m", func(a *Artifact, _ bool) error {
		a.Code = "tampered without Promote"
		return nil
	})
	require.ErrorContains(t, err, "checksum mismatch")
	_, err = s.Update("r", "m", func(a *Artifact, _ bool) error { return os.ErrPermission })
	require.ErrorIs(t, err, os.ErrPermission)
	after, _ := os.ReadFile(s.ArtifactPath("r", "m"))
	assert.Equal(t, before, after)
}

func TestCorruptArtifactIsQuarantined(t *testing.T) {
	for name, corrupt := range map[string]func(path string){
		"garbage": func(p string) { require.NoError(t, os.WriteFile(p, []byte("{not json"), 0o644)) },
		"truncated": func(p string) {
			b, _ := os.ReadFile(p)
			require.NoError(t, os.WriteFile(p, b[:len(b)/2], 0o644))
		},
		"checksum": func(p string) {
			b, _ := os.ReadFile(p)
			require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), "// one", "// evil", 1)), 0o644))
		},
		"wrong path": func(p string) {
			b, _ := os.ReadFile(p)
			require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), `"method_name": "m"`, `"method_name": "other"`, 1)), 0o644))
		},
		"over the bound": overBound,
		"not a file":     notAFile(t),
	} {
		t.Run(name, func(t *testing.T) {
			s, err := Open(t.TempDir())
			require.NoError(t, err)
			var reports []QuarantineReport
			s.OnQuarantine = func(q QuarantineReport) { reports = append(reports, q) }
			newArtifact(t, s, "r", "m", "package artifact\n// one")
			newArtifact(t, s, "r", "healthy", "package artifact\n// two")
			corrupt(s.ArtifactPath("r", "m"))

			_, err = s.Load("r", "m")
			require.ErrorIs(t, err, ErrCorrupt)
			require.Len(t, reports, 1)
			assert.FileExists(t, reports[0].MovedTo)
			assert.Contains(t, filepath.Base(reports[0].MovedTo), "tools__r__m.json.")
			assert.NoFileExists(t, s.ArtifactPath("r", "m"))

			_, err = s.Load("r", "healthy")
			assert.NoError(t, err, "the rest of the store keeps working")
			_, err = s.Load("r", "m")
			assert.ErrorIs(t, err, ErrNotFound, "after quarantine it is missing")
		})
	}
}

func TestIncompatibleSchemaLeftInPlace(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	newArtifact(t, s, "r", "m", "package artifact")
	p := s.ArtifactPath("r", "m")
	b, _ := os.ReadFile(p)
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), `"schema_version": 1`, `"schema_version": 2`, 1)), 0o644))
	_, err = s.Load("r", "m")
	assert.ErrorIs(t, err, ErrIncompatible)
	assert.FileExists(t, p)
	rep, err := s.Doctor()
	require.NoError(t, err)
	assert.True(t, rep.Damaged())
	assert.Len(t, rep.Incompatible, 1)
	assert.Empty(t, rep.Quarantined)
}

func TestCorruptRegistryIsQuarantinedOnOpen(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "registry.json"), []byte(`{"schema_version":1,"roles":{"x":`), 0o644))
	s, err := Open(root)
	require.NoError(t, err)
	roles, err := s.Roles()
	require.NoError(t, err)
	assert.Empty(t, roles)
	q, err := s.Quarantined()
	require.NoError(t, err)
	require.Len(t, q, 1)
	assert.True(t, strings.HasPrefix(q[0].ID, "registry.json."))
	assert.Equal(t, "registry", q[0].Kind)
	assert.Contains(t, q[0].Reason, "does not parse")
	_, err = s.PutRole(Contract{Role: "fresh", Purpose: "p"}, t0)
	require.NoError(t, err)
	rep, err := s.Doctor()
	require.NoError(t, err)
	assert.True(t, rep.Damaged(), "a quarantine made while opening the store is reported by doctor")
	require.Len(t, rep.Pending, 1)
}

func TestDoctor(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	_, err = s.PutRole(Contract{Role: "r", Purpose: "p"}, t0)
	require.NoError(t, err)
	newArtifact(t, s, "r", "good", "package artifact // good")
	newArtifact(t, s, "r", "bad", "package artifact // bad")

	rep, err := s.Doctor()
	require.NoError(t, err)
	assert.False(t, rep.Damaged())
	assert.Equal(t, 3, rep.Checked)

	require.NoError(t, os.WriteFile(s.ArtifactPath("r", "bad"), []byte(`{"schema_version":1}`), 0o644))
	stale := filepath.Join(s.Root(), "tools", "r", tempPrefix+"good.json-123")
	require.NoError(t, os.WriteFile(stale, []byte("partial"), 0o644))
	old := time.Now().Add(-2 * StaleTempAge)
	require.NoError(t, os.Chtimes(stale, old, old))
	fresh := filepath.Join(s.Root(), "tools", "r", tempPrefix+"good.json-456")
	require.NoError(t, os.WriteFile(fresh, []byte("in progress"), 0o644))

	rep, err = s.Doctor()
	require.NoError(t, err)
	assert.True(t, rep.Damaged())
	require.Len(t, rep.Quarantined, 1)
	assert.Contains(t, rep.Quarantined[0].Path, "bad.json")
	assert.Equal(t, []string{stale}, rep.TempRemoved)
	assert.FileExists(t, fresh, "a young temp file may belong to a live writer")

	rep, err = s.Doctor()
	require.NoError(t, err)
	assert.Empty(t, rep.Quarantined, "nothing new")
	require.Len(t, rep.Pending, 1, "the quarantine stays reported until an operator deals with it")
	assert.True(t, rep.Damaged())
	_, err = s.Dismiss(rep.Pending[0].ID)
	require.NoError(t, err)
	rep, err = s.Doctor()
	require.NoError(t, err)
	assert.False(t, rep.Damaged(), "after dismiss the store is clean")
}

func TestRecorderMergesAndPromotes(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	_, err = s.PutRole(Contract{Role: "r", Purpose: "p"}, t0)
	require.NoError(t, err)
	newArtifact(t, s, "r", "m", "package artifact")
	rec := NewRecorder(s, time.Hour) // flush only when asked
	for i := 0; i < 5; i++ {
		rec.Record("r", "m", Success, time.Millisecond, "")
	}
	rec.Record("r", "m", ExtrinsicFailure, 2*time.Millisecond, "HTTP 503")
	rec.Record("r", "gone", Success, time.Millisecond, "")

	a, err := s.Load("r", "m")
	require.NoError(t, err)
	assert.Zero(t, a.SuccessCount, "nothing is written before a flush")

	rep := rec.Flush()
	assert.Equal(t, int64(6), rep.Merged[Key{"r", "m"}])
	assert.ErrorContains(t, rep.Dropped[Key{"r", "gone"}], "the artifact is gone")

	a, err = s.Load("r", "m")
	require.NoError(t, err)
	assert.Equal(t, int64(5), a.SuccessCount)
	assert.Equal(t, int64(1), a.FailureCount)
	assert.Equal(t, int64(1), a.ExtrinsicFailureCount)
	assert.Equal(t, "extrinsic", a.LastFailureClass)
	assert.Equal(t, "HTTP 503", a.LastFailureReason)
	assert.Equal(t, "ssssse", a.Recent)
	assert.Zero(t, a.RecentFailureRate, "extrinsic failures are not health failures")
	assert.Equal(t, Durable, a.Lifecycle)
	assert.Equal(t, int64(7*time.Millisecond), a.TotalDurationNanos)
	assert.NotNil(t, a.LastUsedAt)
	_, err = s.Role("r")
	require.NoError(t, err)
	_, _ = s.Roles()
	r, _ := s.Role("r")
	assert.Equal(t, int64(6), r.UsageCount)

	for i := 0; i < 30; i++ {
		rec.Record("r", "m", IntrinsicFailure, 0, "panic")
	}
	rec.Close()
	a, err = s.Load("r", "m")
	require.NoError(t, err)
	assert.Len(t, a.Recent, RecentWindow)
	assert.Equal(t, 1.0, a.RecentFailureRate)
	assert.Equal(t, int64(30), a.IntrinsicFailureCount)
}

func TestOutcomeForClass(t *testing.T) {
	for class, want := range map[string]Outcome{"": Success, "intrinsic": IntrinsicFailure, "adaptive": AdaptiveFailure, "extrinsic": ExtrinsicFailure, "caller": CallerFailure} {
		got, err := OutcomeForClass(class)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	_, err := OutcomeForClass("cosmic")
	assert.Error(t, err)
}

func TestRuntimeCompatible(t *testing.T) {
	assert.True(t, RuntimeCompatible("0.1.0", "0.9.3"))
	assert.True(t, RuntimeCompatible("v1.2", "1.0.0"))
	assert.False(t, RuntimeCompatible("1.0.0", "2.0.0"))
	assert.False(t, RuntimeCompatible("", "1.0.0"))
	assert.False(t, RuntimeCompatible("x", "1.0.0"))
}

func FuzzDecodeContract(f *testing.F) {
	f.Add([]byte(`{"role":"text","purpose":"p","methods":{"upper":"func Upper(s string) string"}}`))
	f.Add([]byte(`{"role":"r","purpose":"p","deliverable":{"type":"object"},"limits":{"memory":"1MB"}}`))
	f.Add([]byte(`{"role":"r","purpose":"p","acceptance":{"examples":[{"args":[1],"expect":2}],"tests":"package x"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := DecodeContract(data)
		if err != nil {
			return
		}
		// A contract that decodes must validate, fingerprint, and survive a round trip unchanged.
		require.NoError(t, c.Validate())
		b, err := json.Marshal(c)
		require.NoError(t, err)
		c2, err := DecodeContract(b)
		require.NoError(t, err)
		assert.Equal(t, c.Fingerprint(), c2.Fingerprint())
	})
}

func FuzzDecodeArtifact(f *testing.F) {
	a := &Artifact{SchemaVersion: 1, Role: "r", Method: "m", Lifecycle: Candidate}
	a.Promote("package artifact", "initial_forge", "", "", t0)
	good, _ := a.Encode()
	f.Add(good)
	f.Add([]byte(`{"schema_version":1,"role":"r","method_name":"m","lifecycle":"durable","code":"","code_checksum":"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := DecodeArtifact(data)
		if err != nil {
			return
		}
		assert.Equal(t, Checksum(a.Code), a.CodeChecksum)
		assert.NoError(t, ValidateName("role", a.Role))
		b, err := a.Encode()
		require.NoError(t, err)
		_, err = DecodeArtifact(b)
		require.NoError(t, err)
	})
}

func FuzzValidateName(f *testing.F) {
	for _, s := range []string{"text", "a_1", "", "A", "a/b", "ａ", strings.Repeat("a", 65)} {
		f.Add(s)
	}
	re := regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	f.Fuzz(func(t *testing.T, s string) {
		assert.Equal(t, re.MatchString(s), ValidateName("role", s) == nil, "%q", s)
	})
}

func TestOtherProcessWritesAreSeenWithinTheRevalidationInterval(t *testing.T) {
	root := t.TempDir()
	server, err := Open(root)
	require.NoError(t, err)
	// Intervals are switched, not waited for: an hour (nothing is due) or a nanosecond (everything
	// is), so the test does not depend on how fast the machine writes.
	server.SetRevalidate(time.Hour)
	_, err = server.PutRole(Contract{Role: "r", Purpose: "first"}, t0)
	require.NoError(t, err)
	newArtifact(t, server, "r", "m", "package artifact // one")

	operator, err := Open(root) // another process
	require.NoError(t, err)
	_, err = operator.Update("r", "m", func(a *Artifact, _ bool) error { a.Lifecycle = Quarantined; return nil })
	require.NoError(t, err)
	_, err = operator.PutRole(Contract{Role: "r", Purpose: "second"}, t0)
	require.NoError(t, err)

	a, ok := server.Lookup("r", "m")
	require.True(t, ok, "within the interval the snapshot is served from memory")
	assert.Equal(t, Candidate, a.Lifecycle)
	server.SetRevalidate(time.Nanosecond)
	_, ok = server.Lookup("r", "m")
	assert.False(t, ok, "the file changed: the snapshot is dropped")
	a, err = server.Load("r", "m")
	require.NoError(t, err)
	assert.Equal(t, Quarantined, a.Lifecycle)
	a2, ok := server.Lookup("r", "m")
	require.True(t, ok)
	assert.Same(t, a, a2, "unchanged file: the snapshot stays")
	r, err := server.Role("r")
	require.NoError(t, err)
	assert.Equal(t, "second", r.Purpose)

	require.NoError(t, os.Remove(server.ArtifactPath("r", "m")))
	_, ok = server.Lookup("r", "m")
	assert.False(t, ok, "a removed file drops the snapshot")

	server.SetRevalidate(0)
	newArtifact(t, server, "r", "n", "package artifact // two")
	_, err = operator.Update("r", "n", func(a *Artifact, _ bool) error { a.Lifecycle = Blessed; return nil })
	require.NoError(t, err)
	time.Sleep(30 * time.Millisecond)
	a, ok = server.Lookup("r", "n")
	require.True(t, ok)
	assert.Equal(t, Candidate, a.Lifecycle, "revalidation off: memory only")
}

func TestLastFailureReasonIsCapped(t *testing.T) {
	assert.Equal(t, "short", CapReason("short"))
	long := strings.Repeat("é", MaxFailureReasonBytes) // 2 bytes a rune: the cut lands inside one
	got := CapReason(long)
	assert.True(t, utf8.ValidString(got))
	assert.LessOrEqual(t, len(got), MaxFailureReasonBytes+40)
	assert.Contains(t, got, "more bytes cut]")
}

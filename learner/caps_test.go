package learner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestProvenance(t *testing.T) {
	for _, tc := range []struct {
		e    Entry
		want Source
	}{
		{Entry{Content: "intrinsic/policy: sandbox: policy: import \"MANDATORY RULE\" is not allowed"}, FromLegacy},
		{Entry{Content: "adaptive/deliverable: x"}, FromLegacy},
		{Entry{Content: "prefer strings.Builder for long outputs"}, FromOperator},
		{Entry{Content: "intrinsic/policy: x", Source: FromForge}, FromForge},
		{Entry{Content: "x", Source: FromAgent}, FromAgent},
		{Entry{Content: "x", Source: "admin"}, FromLegacy}, // unknown: trusted for nothing
	} {
		if got := tc.e.Provenance(); got != tc.want {
			t.Errorf("%+v: provenance %q, want %q", tc.e, got, tc.want)
		}
	}
}

func TestTrim(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	mk := func(c string, src Source, conf float64, age int) Entry {
		return Entry{Content: c, Source: src, Confidence: conf, UpdatedAt: t0.Add(-time.Duration(age) * time.Hour)}
	}
	names := func(es []Entry) string {
		var out []string
		for _, e := range es {
			out = append(out, e.Content)
		}
		return strings.Join(out, ",")
	}
	es := []Entry{
		mk("op-old-low", FromOperator, 0.1, 9),
		mk("forge-high", FromForge, 0.9, 1),
		mk("forge-low-old", FromForge, 0.2, 5),
		mk("forge-low-new", FromForge, 0.2, 1),
		mk("agent-high", FromAgent, 1.0, 0),
		mk(strings.Repeat("x", 100), FromOperator, 1.0, 0),
	}
	for _, tc := range []struct {
		name    string
		caps    Caps
		want    string
		dropped int
	}{
		{"no caps", Caps{}, names(es), 0},
		{"lesson cap drops the long one", Caps{MaxLessonBytes: 50}, "op-old-low,forge-high,forge-low-old,forge-low-new,agent-high", 1},
		{"agents go first, then the lowest confidence, then the oldest", Caps{MaxEntries: 3, MaxLessonBytes: 50}, "op-old-low,forge-high,forge-low-new", 3},
		{"operators' go last", Caps{MaxEntries: 1, MaxLessonBytes: 50}, "op-old-low", 5},
		{"byte cap", Caps{MaxBytes: 2*entryOverhead + 30, MaxLessonBytes: 50}, "op-old-low,forge-high", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, n := tc.caps.Trim(es)
			if names(got) != tc.want || n != tc.dropped {
				t.Fatalf("kept %s (dropped %d), want %s (%d)", names(got), n, tc.want, tc.dropped)
			}
		})
	}
}

// TestDomainCapOnWrite: recording into a full domain drops the entry that evicts first, says so
// in Stats, and never lets the document grow past the cap.
func TestDomainCapOnWrite(t *testing.T) {
	s, err := Open(t.TempDir(), Options{Revalidate: -1, MaxEntries: 3})
	if err != nil {
		t.Fatal(err)
	}
	mustRecord(t, s, Entry{Content: "operator rule", Domain: "d", Source: FromOperator})
	for i := range 5 {
		mustRecord(t, s, Entry{Content: fmt.Sprintf("agent note %d", i), Domain: "d", Source: FromAgent, Client: "bot"})
	}
	all, _ := s.List("d")
	if len(all) != 3 || all[len(all)-1].Content != "operator rule" && all[0].Content != "operator rule" {
		t.Fatalf("domain after 6 records under a cap of 3: %+v", all)
	}
	found := false
	for _, e := range all {
		found = found || e.Content == "operator rule"
	}
	if !found {
		t.Fatal("an agent's records pushed out the operator's lesson")
	}
	st, err := s.Stats()
	if err != nil || len(st) != 1 || st[0].Dropped != 3 || !st[0].AtCap || st[0].Entries != 3 {
		t.Fatalf("stats %+v, %v", st, err)
	}
	if _, _, err := s.Record(Entry{Content: strings.Repeat("y", DefaultMaxLessonBytes+1), Domain: "d"}); err == nil || !strings.Contains(err.Error(), "FORGE_KNOWLEDGE_MAX_LESSON_BYTES") {
		t.Fatalf("a lesson over the per-lesson cap: %v", err)
	}
}

// bigDoc writes n lessons as one domain document.
func bigDoc(t testing.TB, dir, domain string, n int) int64 {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "- content: lesson %d about time.Now and strings.Builder, padded to look like a real one %s\n  category: correction\n  domain: %s\n  confidence: %.1f\n  use_count: 0\n  created_at: 2026-11-01T00:00:00Z\n  updated_at: 2026-11-0%dT00:00:00Z\n  source: forge\n",
			i, strings.Repeat("p", 200), domain, float64(1+i%10)/10, 1+i%9)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, domain+".yaml")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return int64(b.Len())
}

// TestOversizeDocumentQuarantinedUnread: a document over the read limit is moved aside whole
// (never deleted), with a message naming the size and the knob; the domain starts again.
func TestOversizeDocumentQuarantinedUnread(t *testing.T) {
	root := t.TempDir()
	size := bigDoc(t, filepath.Join(root, Dir), "forge", 500) // ~170 KB
	var why []string
	s, err := Open(root, Options{Revalidate: -1, MaxBytes: 20 << 10, Quarantine: func(path string, err error) string {
		dst := path + ".q"
		if e := os.Rename(path, dst); e != nil {
			t.Error(e)
		}
		why = append(why, err.Error())
		return dst
	}})
	if err != nil {
		t.Fatal(err)
	}
	hits, err := s.Recall(Query{Text: "time.Now"})
	if err != nil || len(hits) != 0 {
		t.Fatalf("recall over an oversize document: %d hits, %v", len(hits), err)
	}
	if len(why) != 1 || !strings.Contains(why[0], "FORGE_KNOWLEDGE_MAX_BYTES") || !strings.Contains(why[0], "set aside unread") {
		t.Fatalf("quarantine reasons %q", why)
	}
	fi, err := os.Stat(filepath.Join(root, Dir, "forge.yaml.q"))
	if err != nil || fi.Size() != size {
		t.Fatalf("the oversize document was not kept whole: %v %v", fi, err)
	}
	if n := s.Notices(); len(n) != 1 || !strings.Contains(n[0], "forge.yaml.q") {
		t.Fatalf("notices %q", n)
	}
	mustRecord(t, s, Entry{Content: "fresh", Domain: "forge"})
	// A writer that meets one sets it aside too, unread.
	bigDoc(t, filepath.Join(root, Dir), "other", 500)
	mustRecord(t, s, Entry{Content: "fresh", Domain: "other"})
	if all, _ := s.List("other"); len(all) != 1 || len(why) != 2 {
		t.Fatalf("writer over an oversize document: %+v, %q", all, why)
	}
}

// TestOverCapDocumentTrimmed: a document over the caps but under the read limit is read; only
// the best entries within the caps are recalled, Stats says how many are over, and the next
// write drops them.
func TestOverCapDocumentTrimmed(t *testing.T) {
	for _, tc := range docsCases() {
		t.Run(tc.name, func(t *testing.T) {
			d, put, _ := tc.open(t)
			dir := t.TempDir()
			bigDoc(t, dir, "forge", 50)
			data, _ := os.ReadFile(filepath.Join(dir, "forge.yaml"))
			put("forge.yaml", data)
			s, err := OpenDocs(d, Options{Revalidate: -1, MaxEntries: 10})
			if err != nil {
				t.Fatal(err)
			}
			hits, _ := s.Recall(Query{Text: "lesson", Limit: 100})
			if len(hits) != 10 {
				t.Fatalf("recalled %d of an over-cap document, want the 10 within the cap", len(hits))
			}
			for _, h := range hits {
				if h.Confidence < 0.9 { // 5 entries each at 1.0 and 0.9, then lower
					t.Fatalf("kept a lesson of confidence %.1f while ones of 0.9 went", h.Confidence)
				}
			}
			st, _ := s.Stats()
			if len(st) != 1 || st[0].Over != 40 || !st[0].AtCap {
				t.Fatalf("stats %+v", st)
			}
			mustRecord(t, s, Entry{Content: "new one", Domain: "forge", Confidence: 1})
			all, _ := s.List("forge")
			if len(all) != 10 {
				t.Fatalf("after a write: %d entries, want 10", len(all))
			}
			raw, _, _ := d.Read("forge.yaml")
			if n := strings.Count(string(raw), "content:"); n != 10 {
				t.Fatalf("the document holds %d entries after a write, want 10", n)
			}
		})
	}
}

// TestRecordAdoptsTrustedProvenance: the same content recorded by a more trusted writer takes
// its provenance; by a less trusted one, it keeps its own.
func TestRecordAdoptsTrustedProvenance(t *testing.T) {
	s := open(t)
	mustRecord(t, s, Entry{Content: "use host.Now", Domain: "forge", Source: FromAgent, Client: "bot", Scope: []string{"a"}})
	got := mustRecord(t, s, Entry{Content: "USE host.Now", Domain: "forge", Source: FromOperator})
	if got.Provenance() != FromOperator || got.Client != "" || got.Scope != nil {
		t.Fatalf("operator's record of an agent's lesson: %+v", got)
	}
	got = mustRecord(t, s, Entry{Content: "use host.Now", Domain: "forge", Source: FromAgent, Client: "bot2"})
	if got.Provenance() != FromOperator {
		t.Fatalf("an agent's record took over an operator's lesson: %+v", got)
	}
	if _, _, err := s.Record(Entry{Content: "x", Domain: "forge", Source: "root"}); err == nil {
		t.Fatal("an unknown source was accepted")
	}
}

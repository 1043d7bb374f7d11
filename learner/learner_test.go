package learner

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

func open(t testing.TB) *Store {
	t.Helper()
	s, err := Open(t.TempDir(), Options{Revalidate: -1})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustRecord(t testing.TB, s *Store, e Entry) Entry {
	t.Helper()
	got, _, err := s.Record(e)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func contents(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Content)
	}
	return out
}

func TestEntryConfirm(t *testing.T) {
	now := time.Date(2026, 11, 26, 7, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		conf     float64
		uses     int
		times    int
		wantConf float64
		wantUses int
	}{
		{"adds 0.1", 0.2, 1, 1, 0.3, 2},
		{"capped at 1.0", 0.95, 0, 1, 1.0, 1},
		{"stays at the cap", 1.0, 3, 2, 1.0, 5},
		{"ten steps from the start reach exactly 1.0", InitialConfidence, 0, 9, 1.0, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := Entry{Content: "x", Domain: "d", Confidence: tc.conf, UseCount: tc.uses}
			got := e
			for range tc.times {
				got = got.Confirm(now)
			}
			if got.Confidence != tc.wantConf || got.UseCount != tc.wantUses {
				t.Fatalf("confidence %v uses %d, want %v %d", got.Confidence, got.UseCount, tc.wantConf, tc.wantUses)
			}
			if e.Confidence != tc.conf {
				t.Fatalf("Confirm changed the original")
			}
		})
	}
}

func TestDomainFile(t *testing.T) {
	for _, tc := range []struct{ domain, want, err string }{
		{"newsletter curation", "newsletter_curation.yaml", ""},
		{"Newsletter   Curation", "newsletter_curation.yaml", ""},
		{"forge", "forge.yaml", ""},
		{"a/../b", "a_.._b.yaml", ""},
		{"", "", "needs a domain"},
		{"..", "", "no usable file name"},
	} {
		got, err := DomainFile(tc.domain)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("DomainFile(%q) error %v, want %q", tc.domain, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("DomainFile(%q) = %q, %v; want %q", tc.domain, got, err, tc.want)
		}
	}
	s := open(t)
	mustRecord(t, s, Entry{Content: "skip LangChain", Domain: "newsletter curation"})
	if _, err := os.Stat(filepath.Join(s.Dir(), "newsletter_curation.yaml")); err != nil {
		t.Fatal(err)
	}
}

func TestStore(t *testing.T) {
	type step struct {
		record []Entry
		query  Query
		want   []string
	}
	for _, tc := range []struct {
		name string
		step
	}{
		{"empty store recalls nothing", step{query: Query{Text: "anything"}, want: nil}},
		{"keyword match", step{
			record: []Entry{{Content: "Skip LangChain tutorials", Domain: "news"}, {Content: "Prefer Ruby gems", Domain: "news"}},
			query:  Query{Text: "langchain"}, want: []string{"Skip LangChain tutorials"}}},
		{"case-insensitive recall", step{
			record: []Entry{{Content: "Skip LangChain tutorials", Domain: "news"}},
			query:  Query{Text: "LANGCHAIN"}, want: []string{"Skip LangChain tutorials"}}},
		{"min-confidence filter", step{
			record: []Entry{{Content: "low confidence tip", Domain: "d", Confidence: 0.1}, {Content: "high confidence tip", Domain: "d", Confidence: 0.8}},
			query:  Query{Text: "tip", MinConfidence: 0.5}, want: []string{"high confidence tip"}}},
		{"descending confidence on equal relevance", step{
			record: []Entry{{Content: "low entry", Domain: "d", Confidence: 0.2}, {Content: "high entry", Domain: "d", Confidence: 0.9}, {Content: "mid entry", Domain: "d", Confidence: 0.5}},
			query:  Query{Text: "entry"}, want: []string{"high entry", "mid entry", "low entry"}}},
		{"relevance before confidence", step{
			record: []Entry{{Content: "time is refused in the sandbox", Domain: "d", Confidence: 0.9},
				{Content: "time.Now is refused: use host.Now", Domain: "d", Confidence: 0.1}},
			query: Query{Text: "time.Now refused"}, want: []string{"time.Now is refused: use host.Now", "time is refused in the sandbox"}}},
		{"every domain when none is given", step{
			record: []Entry{{Content: "alpha lesson", Domain: "one"}, {Content: "alpha rule", Domain: "two"}},
			query:  Query{Text: "alpha"}, want: []string{"alpha lesson", "alpha rule"}}},
		{"only the named domains", step{
			record: []Entry{{Content: "alpha lesson", Domain: "one"}, {Content: "alpha rule", Domain: "two"}, {Content: "alpha fact", Domain: "three"}},
			query:  Query{Text: "alpha", Domains: []string{"two", "three"}}, want: []string{"alpha fact", "alpha rule"}}},
		{"bounded result count", step{
			record: []Entry{{Content: "x one", Domain: "d"}, {Content: "x two", Domain: "d"}, {Content: "x three", Domain: "d"}},
			query:  Query{Text: "x one two three", Limit: 2}, want: nil}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			for _, e := range tc.record {
				mustRecord(t, s, e)
			}
			hits, err := s.Recall(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			if tc.query.Limit > 0 {
				if len(hits) != tc.query.Limit {
					t.Fatalf("got %d hits, want the limit %d", len(hits), tc.query.Limit)
				}
				return
			}
			got := contents(hits)
			if tc.name == "every domain when none is given" || tc.name == "only the named domains" {
				// equal scores and confidence: order by recency then content; compare as sets
				if len(got) != len(tc.want) {
					t.Fatalf("got %q, want %q", got, tc.want)
				}
				for _, w := range tc.want {
					if !strings.Contains(strings.Join(got, "|"), w) {
						t.Fatalf("got %q, want %q", got, tc.want)
					}
				}
				return
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRecordDuplicateConfirms(t *testing.T) {
	s := open(t)
	first, created, err := s.Record(Entry{Content: "Use host.Now", Domain: "forge", Category: Correction})
	if err != nil || !created || first.Confidence != InitialConfidence {
		t.Fatalf("first record: %+v created %v err %v", first, created, err)
	}
	again, created, err := s.Record(Entry{Content: "  use HOST.now ", Domain: "forge"})
	if err != nil || created {
		t.Fatalf("duplicate record created a new entry (err %v)", err)
	}
	if again.Confidence != 0.2 || again.UseCount != 1 || again.Content != "Use host.Now" {
		t.Fatalf("duplicate record: %+v", again)
	}
	all, _ := s.List("forge")
	if len(all) != 1 {
		t.Fatalf("%d entries, want 1", len(all))
	}
	// A second store (another process) sees the same file.
	s2, _ := Open(filepath.Dir(s.Dir()), Options{Revalidate: -1})
	c, err := s2.Confirm("forge", "use host.now")
	if err != nil || c.Confidence != 0.3 {
		t.Fatalf("confirm from another store: %+v %v", c, err)
	}
	hits, _ := s.Recall(Query{Text: "host.Now"})
	if len(hits) != 1 || hits[0].Confidence != 0.3 {
		t.Fatalf("the first store did not see the other's confirm: %+v", hits)
	}
	if _, err := s.Confirm("forge", "never recorded"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("confirm of a missing entry: %v", err)
	}
	if _, err := s.Forget("forge", "USE HOST.NOW"); err != nil {
		t.Fatal(err)
	}
	if all, _ := s.List(""); len(all) != 0 {
		t.Fatalf("forget left %+v", all)
	}
}

func TestRecordRejects(t *testing.T) {
	s := open(t)
	for _, e := range []Entry{{Content: " ", Domain: "d"}, {Content: "x"}, {Content: "x", Domain: "d", Category: "opinion"}} {
		if _, _, err := s.Record(e); err == nil {
			t.Errorf("Record(%+v) succeeded", e)
		}
	}
}

func TestReflector(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stored []string
		noted  []string
		added  int
		want   []string
	}{
		{"promotes a new lesson at the initial confidence", nil, []string{"prefer practical examples"}, 1, []string{"prefer practical examples"}},
		{"skips empty lessons", nil, []string{"", "   "}, 0, nil},
		{"skips a stored lesson (any case)", []string{"Prefer practical examples"}, []string{"PREFER PRACTICAL EXAMPLES"}, 0, []string{"Prefer practical examples"}},
		{"skips a lesson noted twice", nil, []string{"one lesson", "One lesson", "two lesson"}, 2, []string{"one lesson", "two lesson"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			s, _ := Open(root, Options{Revalidate: -1})
			for _, c := range tc.stored {
				mustRecord(t, s, Entry{Content: c, Domain: "d", Confidence: 0.5})
			}
			for _, n := range tc.noted {
				if err := s.Note(Entry{Content: n, Domain: "d"}); err != nil {
					t.Fatal(err)
				}
			}
			if n := len(tc.noted); n > 0 && strings.TrimSpace(tc.noted[0]) != "" {
				// noted lessons are recalled before they are promoted
				hits, _ := s.Recall(Query{Text: tc.noted[0]})
				n := 0
				for _, h := range hits {
					if sameContent(h.Content, tc.noted[0]) {
						n++
					}
				}
				if n != 1 || !sameContent(hits[0].Content, tc.noted[0]) {
					t.Fatalf("noted lesson recalled as %q before Close, want it first and once", contents(hits))
				}
			}
			n, err := s.Flush()
			if err != nil || n != tc.added {
				t.Fatalf("promoted %d (%v), want %d", n, err, tc.added)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s2, _ := Open(root, Options{Revalidate: -1})
			all, _ := s2.List("d")
			var got []string
			for _, e := range all {
				got = append(got, e.Content)
				if len(tc.stored) == 0 && e.Confidence != InitialConfidence {
					t.Errorf("promoted %q at %v, want %v", e.Content, e.Confidence, InitialConfidence)
				}
				if len(tc.stored) > 0 && e.Confidence != 0.5 {
					t.Errorf("the reflector changed a stored entry: %+v", e)
				}
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("stored %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDamagedFileQuarantined(t *testing.T) {
	root := t.TempDir()
	var moved []string
	s, _ := Open(root, Options{Revalidate: -1, Quarantine: func(path string, why error) string {
		dst := path + ".q"
		if err := os.Rename(path, dst); err != nil {
			t.Errorf("quarantine: %v", err)
		}
		moved = append(moved, filepath.Base(path)+": "+why.Error())
		return dst
	}})
	mustRecord(t, s, Entry{Content: "alpha survives", Domain: "good"})
	mustRecord(t, s, Entry{Content: "alpha lost", Domain: "bad"})
	if err := os.WriteFile(filepath.Join(s.Dir(), "bad.yaml"), []byte("- content: [unclosed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hits, err := s.Recall(Query{Text: "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	if got := contents(hits); len(got) != 1 || got[0] != "alpha survives" {
		t.Fatalf("recall after damage: %q", got)
	}
	if len(moved) != 1 || !strings.HasPrefix(moved[0], "bad.yaml: knowledge file does not parse") {
		t.Fatalf("quarantined %q", moved)
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), "bad.yaml.q")); err != nil {
		t.Fatal("the damaged file is gone instead of quarantined")
	}
	// The domain starts again.
	mustRecord(t, s, Entry{Content: "alpha again", Domain: "bad"})
	if all, _ := s.List("bad"); len(all) != 1 {
		t.Fatalf("bad domain after damage: %+v", all)
	}
	// A writer that meets a damaged file quarantines it too, keeping the rest.
	os.WriteFile(filepath.Join(s.Dir(), "good.yaml"), []byte("- reasoning: no content\n"), 0o644)
	mustRecord(t, s, Entry{Content: "beta", Domain: "good"})
	if len(moved) != 2 {
		t.Fatalf("quarantined %q", moved)
	}
	if all, _ := s.List(""); len(all) != 2 {
		t.Fatalf("store after second damage: %+v", all)
	}
}

// TestConcurrentStores is several writers, each with its own Store (its own flock descriptor,
// exactly as separate processes have), recording and confirming the same domain.
func TestConcurrentStores(t *testing.T) {
	root := t.TempDir()
	const writers, each = 4, 15
	errs := make(chan error, writers)
	for w := range writers {
		go func() {
			s, err := Open(root, Options{Revalidate: -1})
			if err != nil {
				errs <- err
				return
			}
			for i := range each {
				if _, _, err := s.Record(Entry{Content: fmt.Sprintf("writer %d lesson %d", w, i), Domain: "shared"}); err != nil {
					errs <- err
					return
				}
				if _, _, err := s.Record(Entry{Content: "common lesson", Domain: "shared"}); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	s, _ := Open(root, Options{Revalidate: -1})
	all, _ := s.List("shared")
	if len(all) != writers*each+1 {
		t.Fatalf("%d entries, want %d: an update was lost", len(all), writers*each+1)
	}
	for _, e := range all {
		if e.Content == "common lesson" && e.UseCount != writers*each-1 {
			t.Fatalf("common lesson confirmed %d times, want %d", e.UseCount, writers*each-1)
		}
	}
}

// corpus builds n entries of random words over a vocabulary, spread over a few domains.
func corpus(n int, seed int64) []Entry {
	r := rand.New(rand.NewSource(seed))
	vocab := make([]string, 2000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%dx", i)
	}
	out := make([]Entry, n)
	for i := range out {
		var b strings.Builder
		for j := 0; j < 8+r.Intn(20); j++ {
			b.WriteString(vocab[int(r.ExpFloat64()*300)%len(vocab)])
			b.WriteByte(' ')
		}
		out[i] = Entry{Content: fmt.Sprintf("lesson %d: %s", i, b.String()), Reasoning: "seen in a benchmark", Category: Pattern,
			Domain: fmt.Sprintf("role%d", i%5), Confidence: float64(1+r.Intn(10)) / 10}
	}
	return out
}

func seeded(t testing.TB, n int) *Store {
	root := t.TempDir()
	s, _ := Open(root, Options{MaxEntries: -1, MaxBytes: -1}) // 2,000 per domain, over the default caps
	byDomain := map[string][]Entry{}
	for _, e := range corpus(n, 1) {
		byDomain[e.Domain] = append(byDomain[e.Domain], e)
	}
	for d, es := range byDomain {
		if err := s.modify(d, func([]Entry) ([]Entry, error) { return es, nil }); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// BenchmarkRecall10k is a recall over 10,000 entries in five domains; it reports the p99 latency
// of the run's recalls (the bar is 1 ms).
func BenchmarkRecall10k(b *testing.B) {
	s := seeded(b, 10000)
	qs := []Query{
		{Text: "w1x w20x w300x refused"},
		{Text: "w5x w7x", Domains: []string{"role1", "forge"}, MinConfidence: 0.3},
		{Text: "w1500x w2x lesson", Limit: 20},
	}
	if _, err := s.Recall(qs[0]); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := s.Recall(qs[i%len(qs)]); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkRecordAmong10k is one durable record into a domain of 2,000 entries.
func BenchmarkRecordAmong10k(b *testing.B) {
	s := seeded(b, 10000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := s.Record(Entry{Content: "lesson w1x w2x", Domain: "role1"}); err != nil {
			b.Fatal(err)
		}
	}
}

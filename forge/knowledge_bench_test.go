package forge

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/artifactforge/forge/learner"
	"github.com/artifactforge/forge/repair"
)

// writeKnowledge writes n lessons into knowledge/<domain>.yaml of store, as a forge that learned
// them would have (half forge's, a quarter operators', a quarter agents' scoped to one role), and
// returns the file's size.
func writeKnowledge(tb testing.TB, store, domain string, n int) int64 {
	tb.Helper()
	var b strings.Builder
	for i := range n {
		src := [...]string{"forge", "forge", "operator", "agent"}[i%4]
		fmt.Fprintf(&b, "- content: 'policy: lesson %d about time.Now, strings.Builder and w%dx in the sandbox, with the words a real lesson has'\n"+
			"  reasoning: a generation of role%d.m failed this way and a later answer fixed it\n  category: correction\n  domain: %s\n"+
			"  confidence: %.1f\n  use_count: %d\n  created_at: 2026-11-01T00:00:00Z\n  updated_at: 2026-11-%02dT00:00:00Z\n  source: %s\n",
			i, i%700, i%50, domain, float64(1+i%10)/10, i%7, 1+i%28, src)
		if src == "agent" {
			fmt.Fprintf(&b, "  client: bot\n  scope: [role%d]\n", i%50)
		}
	}
	dir := filepath.Join(store, learner.Dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, domain+".yaml"), []byte(b.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return int64(b.Len())
}

// BenchmarkPromptBigKnowledge is the knowledge's share of a prompt with a big forge domain
// (issue 22 item 2): cold, what every forge process pays for its first prompt (open the
// knowledge, recall for a generation of role7.m: the document read, decoded and indexed), and
// warm, a whole prompt assembled by a long-running forge (PromptPreview: recall, provenance
// filter, assembly). "uncapped" is the behaviour before the caps (every cap off); "capped" the
// defaults: a document over 4 MiB is quarantined unread, one under it is cut to 1,000 lessons.
//
//	go test ./forge -run XX -bench PromptBigKnowledge -benchtime 3x
func BenchmarkPromptBigKnowledge(b *testing.B) {
	req := repair.NewRegeneration("role7", "m", `{"role":"role7","purpose":"the year of the current time"}`, "func M() int", repair.InitialForge(), repair.Attempt{})
	for _, size := range []struct {
		name    string
		lessons int
	}{{"20k-lessons", 20000}, {"8k-lessons", 8000}} {
		src := b.TempDir()
		bytes := writeKnowledge(b, src, learner.ForgeDomain, size.lessons)
		data, _ := os.ReadFile(filepath.Join(src, learner.Dir, "forge.yaml"))
		for _, cfg := range []struct {
			name string
			caps KnowledgeCaps
		}{{"uncapped", KnowledgeCaps{MaxEntries: -1, MaxBytes: -1, MaxLessonBytes: -1}}, {"capped", KnowledgeCaps{}}} {
			b.Run(fmt.Sprintf("%s-%.1fMB/%s/cold", size.name, float64(bytes)/1e6, cfg.name), func(b *testing.B) {
				store := b.TempDir()
				file := filepath.Join(store, learner.Dir, "forge.yaml")
				os.MkdirAll(filepath.Dir(file), 0o755)
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer()
					if err := os.WriteFile(file, data, 0o644); err != nil { // a quarantine moved it
						b.Fatal(err)
					}
					b.StartTimer()
					l, err := learner.Open(store, KnowledgeOptions(Options{Knowledge: cfg.caps}))
					if err != nil {
						b.Fatal(err)
					}
					c := &call{f: &Forge{learn: l}}
					_ = c.lessons(nil).recall(req)
				}
			})
			b.Run(fmt.Sprintf("%s-%.1fMB/%s/warm", size.name, float64(bytes)/1e6, cfg.name), func(b *testing.B) {
				store := b.TempDir()
				os.MkdirAll(filepath.Join(store, learner.Dir), 0o755)
				os.WriteFile(filepath.Join(store, learner.Dir, "forge.yaml"), data, 0o644)
				f := openForge(b, store, newScript(nil), func(o *Options) { o.Knowledge = cfg.caps })
				if err := f.AddRole(intContract("role7", "m")); err != nil {
					b.Fatal(err)
				}
				if _, err := f.PromptPreview("role7", "m", false); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if _, err := f.PromptPreview("role7", "m", false); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkRecallProvenance is the provenance filter's cost on a prompt's recall: 10,000 lessons
// in the forge domain and the role's, recalled for a prompt with and without the filter.
//
//	go test ./forge -run XX -bench RecallProvenance
func BenchmarkRecallProvenance(b *testing.B) {
	store := b.TempDir()
	writeKnowledge(b, store, learner.ForgeDomain, 5000)
	writeKnowledge(b, store, "role7", 5000)
	l, err := learner.Open(store, learner.Options{MaxEntries: -1, MaxBytes: -1})
	if err != nil {
		b.Fatal(err)
	}
	q := learner.Query{Text: "role7\nm\nthe year of the current time\nfunc M() int\nundefined: time.Now w3x", Domains: []string{"role7", learner.ForgeDomain}, Limit: MaxLessonsInPrompt}
	for _, filter := range []bool{false, true} {
		b.Run(fmt.Sprintf("filter=%v", filter), func(b *testing.B) {
			q := q
			if filter {
				q.Allow = func(e *learner.Entry) bool { return mayReach(e, "role7") }
			}
			if _, err := l.Recall(q); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := l.Recall(q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

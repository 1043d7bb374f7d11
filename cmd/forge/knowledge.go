package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/learner"
	"github.com/artifactforge/forge/registry"
)

func init() { register(newKnowledgeCmd) }

// openLearner opens the store's knowledge as the forge does: the backend's documents (the fleet
// store), else knowledge/ under the store's local directory with the store's quarantine (a
// damaged domain file is reported like any other damaged file). It also returns where the
// knowledge is, for messages.
func (a *app) openLearner(readOnly bool) (*learner.Store, string, error) {
	s, err := a.openStoreWith(readOnly)
	if err != nil {
		return nil, "", err
	}
	opts, err := optionsFromEnv(os.Getenv)
	if err != nil {
		return nil, "", usagef("%v", err)
	}
	lo := forge.KnowledgeOptions(opts)
	lo.Revalidate = -1
	l, err := forge.OpenKnowledge(s, lo)
	if err != nil {
		return nil, "", err
	}
	where := l.Dir()
	if where == "" {
		where = "the knowledge of " + s.Location()
	}
	return l, where, nil
}

func newKnowledgeCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "knowledge (recall QUERY | record CONTENT | confirm CONTENT | ls | forget CONTENT)",
		Short: "The lessons forge learned: recall, record, confirm, list and forget them",
		Long: `Forge keeps lessons in the store's knowledge, one YAML document per domain (a role's name,
or "forge" for lessons about the sandbox): files under knowledge/ for a directory store, the
store's knowledge bucket for a fleet store. A repair that succeeds records the failure it fixed as a
correction; generation and repair prompts recall the lessons that match; a lesson whose prompt passed
at the first attempt is confirmed (confidence +0.1, up to 1.0). New lessons start at 0.1.`,
	}
	var domains []string
	var minConf float64
	var limit int
	recall := &cobra.Command{
		Use:   "recall QUERY...",
		Short: "The lessons most relevant to QUERY (BM25 over content and reasoning; confidence breaks ties)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			l, _, err := a.openLearner(true)
			if err != nil {
				return err
			}
			hits, err := l.Recall(learner.Query{Text: strings.Join(args, " "), Domains: domains, MinConfidence: minConf, Limit: limit})
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(map[string]any{"ok": true, "hits": nonNilHits(hits)})
			}
			if len(hits) == 0 {
				fmt.Fprintln(a.stdout, "no lesson matches; list them with `forge knowledge ls`")
				return nil
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "SCORE\tCONFIDENCE\tDOMAIN\tCATEGORY\tSOURCE\tCONTENT")
			for _, h := range hits {
				fmt.Fprintf(tw, "%.2f\t%.1f\t%s\t%s\t%s\t%s\n", h.Score, h.Confidence, h.Domain, h.Category, sourceOf(h.Entry), oneLine(h.Content, 120))
			}
			return tw.Flush()
		},
	}
	recall.Flags().StringSliceVar(&domains, "domain", nil, "search only these domains (repeatable; default all)")
	recall.Flags().Float64Var(&minConf, "min-confidence", 0, "leave out lessons below this confidence")
	recall.Flags().IntVar(&limit, "limit", learner.DefaultLimit, fmt.Sprintf("at most this many lessons (up to %d)", learner.MaxLimit))

	var domain, category, reasoning string
	record := &cobra.Command{
		Use:   "record CONTENT",
		Short: "Record a lesson in --domain (the same content, in any case, is confirmed instead)",
		Args:  exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			c, err := learner.ParseCategory(category)
			if err != nil {
				return usagef("record: %v", err)
			}
			l, _, err := a.openLearner(false)
			if err != nil {
				return err
			}
			// What an operator records is operator text: it reaches every role that recalls its domain.
			e, created, err := l.Record(learner.Entry{Content: args[0], Reasoning: reasoning, Category: c, Domain: domain, Source: learner.FromOperator})
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(map[string]any{"ok": true, "created": created, "entry": e})
			}
			verb := "recorded"
			if !created {
				verb = "already known; confirmed"
			}
			fmt.Fprintf(a.stdout, "%s in %s (confidence %.1f): %s\n", verb, e.Domain, e.Confidence, e.Content)
			return nil
		},
	}
	record.Flags().StringVar(&domain, "domain", "", "the lesson's domain: a role name, or \"forge\" for the sandbox (required)")
	record.Flags().StringVar(&category, "category", "pattern", "fact, preference, pattern or correction")
	record.Flags().StringVar(&reasoning, "reasoning", "", "why this is true")
	_ = record.MarkFlagRequired("domain")

	edit := func(use, short, done string, fn func(*learner.Store, string, string) (learner.Entry, error)) *cobra.Command {
		var d string
		c := &cobra.Command{
			Use:   use + " CONTENT",
			Short: short,
			Args:  exactArgs(1),
			RunE: func(_ *cobra.Command, args []string) error {
				l, _, err := a.openLearner(true)
				if err != nil {
					return err
				}
				e, err := fn(l, d, args[0])
				if err != nil {
					return err
				}
				if a.jsonOut {
					return a.printJSON(map[string]any{"ok": true, done: e})
				}
				fmt.Fprintf(a.stdout, "%s in %s (confidence %.1f): %s\n", done, e.Domain, e.Confidence, e.Content)
				return nil
			},
		}
		c.Flags().StringVar(&d, "domain", "", "the lesson's domain (required)")
		_ = c.MarkFlagRequired("domain")
		return c
	}
	confirm := edit("confirm", "Raise a lesson's confidence by 0.1 (up to 1.0); CONTENT matches in any case", "confirmed",
		func(l *learner.Store, d, c string) (learner.Entry, error) { return l.Confirm(d, c) })
	forget := edit("forget", "Remove a lesson; CONTENT matches in any case", "forgotten",
		func(l *learner.Store, d, c string) (learner.Entry, error) { return l.Forget(d, c) })

	var lsDomain string
	ls := &cobra.Command{
		Use:   "ls",
		Short: "List the lessons, by domain and descending confidence",
		Args:  exactArgs(0),
		RunE: func(*cobra.Command, []string) error {
			l, where, err := a.openLearner(true)
			if err != nil {
				return err
			}
			es, err := l.List(lsDomain)
			if err != nil {
				return err
			}
			stats, err := l.Stats()
			if err != nil {
				return err
			}
			if lsDomain != "" {
				f, _ := learner.DomainFile(lsDomain)
				stats = slices.DeleteFunc(stats, func(d learner.DomainStats) bool { return d.Document != f })
			}
			if a.jsonOut {
				return a.printJSON(map[string]any{"ok": true, "entries": es, "domains": stats, "caps": l.Caps(), "notices": nonNil(l.Notices())})
			}
			printKnowledgeNotices(a, l, stats)
			if len(es) == 0 {
				fmt.Fprintf(a.stdout, "no lessons in %s\n", where)
				return nil
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "DOMAIN\tCONFIDENCE\tUSES\tCATEGORY\tSOURCE\tUPDATED\tCONTENT")
			legacy := 0
			for _, e := range es {
				if e.Provenance() == learner.FromLegacy {
					legacy++
				}
				fmt.Fprintf(tw, "%s\t%.1f\t%d\t%s\t%s\t%s\t%s\n", e.Domain, e.Confidence, e.UseCount, e.Category, sourceOf(e), fmtTime(&e.UpdatedAt), oneLine(e.Content, 120))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if legacy > 0 {
				fmt.Fprintf(a.stdout, "%d lesson(s) marked legacy were learned before lessons kept their provenance: they quote text the model wrote, so no prompt recalls them; "+
					"`forge knowledge forget CONTENT --domain D` removes one, `forge knowledge record` makes its lesson an operator's\n", legacy)
			}
			return nil
		},
	}
	ls.Flags().StringVar(&lsDomain, "domain", "", "only this domain")
	cmd.AddCommand(recall, record, confirm, ls, forget)
	return cmd
}

// sourceOf is a lesson's provenance as the listings show it: operator, forge (role R), agent
// (client C, roles ...), legacy.
func sourceOf(e learner.Entry) string {
	switch p := e.Provenance(); p {
	case learner.FromForge:
		if e.Role != "" {
			return "forge (" + e.Role + ")"
		}
		return "forge"
	case learner.FromAgent:
		scope := strings.Join(e.Scope, ",")
		if scope == "" {
			scope = "none"
		}
		return "agent " + e.Client + " (roles " + scope + ")"
	default:
		return string(p)
	}
}

// printKnowledgeNotices says which documents were set aside over the read limit and which
// domains are at or over their caps (`forge knowledge ls`, doctor).
func printKnowledgeNotices(a *app, l *learner.Store, stats []learner.DomainStats) {
	for _, n := range l.Notices() {
		fmt.Fprintf(a.stdout, "knowledge: %s\n", n)
	}
	c := l.Caps()
	for _, d := range stats {
		switch {
		case d.Over > 0:
			fmt.Fprintf(a.stdout, "knowledge: domain %s holds %d lesson(s) over its cap (%s): the %d within it are recalled, the others (the lowest confidence, then the oldest) go at the next write\n",
				d.Domain, d.Over, capText(c), d.Entries)
		case d.AtCap:
			fmt.Fprintf(a.stdout, "knowledge: domain %s is at its cap (%s): each new lesson makes the lowest-confidence, oldest one go (agents' before forge's before operators')\n", d.Domain, capText(c))
		}
		if d.Dropped > 0 {
			fmt.Fprintf(a.stdout, "knowledge: %d lesson(s) of domain %s went over the cap\n", d.Dropped, d.Domain)
		}
	}
}

// knowledgeReport is doctor's view of the knowledge: the caps, each domain against them, and the
// documents set aside over the read limit.
type knowledgeReport struct {
	Caps    learner.Caps          `json:"caps"`
	Domains []learner.DomainStats `json:"domains"`
	Notices []string              `json:"notices"`
	Error   string                `json:"error,omitempty"`
	l       *learner.Store
}

// doctorKnowledge reads every domain of s's knowledge under the caps (quarantining a document
// over the read limit); nil when learning is off.
func (a *app) doctorKnowledge(s registry.Backend) *knowledgeReport {
	opts, err := optionsFromEnv(os.Getenv)
	if err != nil || opts.NoLearning {
		return nil
	}
	lo := forge.KnowledgeOptions(opts)
	lo.Revalidate = -1
	l, err := forge.OpenKnowledge(s, lo)
	if err != nil {
		return &knowledgeReport{Error: err.Error()}
	}
	r := &knowledgeReport{Caps: l.Caps(), l: l}
	if r.Domains, err = l.Stats(); err != nil {
		r.Error = err.Error()
	}
	r.Domains, r.Notices = nonNil(r.Domains), nonNil(l.Notices())
	return r
}

func (r *knowledgeReport) print(a *app) {
	switch {
	case r == nil:
	case r.Error != "":
		fmt.Fprintf(a.stdout, "knowledge: %s\n", r.Error)
	default:
		printKnowledgeNotices(a, r.l, r.Domains)
	}
}

// capText says the caps and their knobs.
func capText(c learner.Caps) string {
	return fmt.Sprintf("%d lessons, %s per domain; FORGE_KNOWLEDGE_MAX_ENTRIES, FORGE_KNOWLEDGE_MAX_BYTES", c.MaxEntries, humanBytes(int64(c.MaxBytes)))
}

func nonNilHits(h []learner.Hit) []learner.Hit {
	if h == nil {
		return []learner.Hit{}
	}
	return h
}
